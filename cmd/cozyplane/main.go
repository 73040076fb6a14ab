// Command cozyplane operates a cluster running cozyplane: today it migrates
// a Cozystack cluster's applications to cozyplane's CRDs (cozyplane
// migrate). Installed as kubectl-cozyplane it is also a kubectl plugin. See
// docs/cli.md.
package main

import (
	"os"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
