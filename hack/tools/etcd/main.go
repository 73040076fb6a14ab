// Command etcd is the etcd server the local control plane runs
// (hack/cluster.sh): built from the release pinned in go.mod, because the
// Kubernetes 1.36 API server serves consistent lists and streamed informer
// lists (WatchList) from its watch cache only on an etcd with progress
// notifications (3.5.13 and later), which the distribution's package lacks.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
