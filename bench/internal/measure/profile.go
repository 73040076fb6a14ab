package measure

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// CPUProfile saves a CPU profile of d from the pprof endpoint at base
// (errors are reported, not fatal: a profile is an aid, not a figure).
func CPUProfile(base, out string, d time.Duration) {
	SaveProfile(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds())), out)
}

// SaveProfile saves what a pprof URL serves into out.
func SaveProfile(url, out string) {
	resp, err := http.Get(url) //nolint:gosec // a local URL the bench was given
	if err == nil {
		defer resp.Body.Close()
		var f *os.File
		if f, err = os.Create(out); err == nil {
			_, err = io.Copy(f, resp.Body)
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "  no profile from %s: %v\n", url, err)
	}
}
