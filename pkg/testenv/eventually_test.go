package testenv

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatal instead of stopping the
// calling test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	panic(r)
}

func run(cond func() (bool, string, error), timeout time.Duration) (failed string) {
	r := &recorder{TB: &testing.T{}}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	Eventually(r, timeout, cond)
	return ""
}

func TestEventually(t *testing.T) {
	calls := 0
	if msg := run(func() (bool, string, error) { calls++; return calls == 3, "", nil }, 5*time.Second); msg != "" || calls != 3 {
		t.Fatalf("done on the third look: failed %q after %d calls", msg, calls)
	}
	msg := run(func() (bool, string, error) { return false, "1 of 2 ready", nil }, 500*time.Millisecond)
	if !strings.Contains(msg, "1 of 2 ready") {
		t.Fatalf("a timeout reports the last progress, got %q", msg)
	}
	msg = run(func() (bool, string, error) { return false, "", errors.New("boom") }, 5*time.Second)
	if msg != "boom" {
		t.Fatalf("an error fails at once, got %q", msg)
	}
}
