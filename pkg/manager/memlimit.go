package manager

// The Go runtime knows nothing of a container's memory limit: with the
// default GOGC it lets the heap grow to twice what is live before collecting,
// so a controller whose caches hold 120 MiB peaks near 250 MiB and a 256 MiB
// limit kills it. A soft limit below the container's makes the collector work
// harder as the heap approaches it instead.
//
// The soft limit leaves a fixed headroom of the container's limit rather than
// a share of it: the headroom covers what the runtime does not count (the
// binary's pages, stacks: some 20 to 25 MiB for these controllers) and a live
// set that outgrows the soft limit (the collector cannot free what is live,
// so a fleet larger than the limit was sized for runs with a busier collector
// before the kernel kills it). A share would leave too little of a small
// limit for either and more than needed of a large one.

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitFiles are where cgroup v2 and v1 publish the container's limit.
var memoryLimitFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// memoryHeadroom is what the soft limit leaves of the container's limit (at
// most half of it).
const memoryHeadroom = 64 << 20

// noLimit: cgroup v1 reports "unlimited" as a page-rounded maximum int64.
const noLimit = 1 << 62

// ParseCgroupMemoryLimit reads a cgroup memory limit file's content: bytes,
// or ok=false for "max", an unlimited v1 value or anything unreadable.
func ParseCgroupMemoryLimit(content string) (limit int64, ok bool) {
	s := strings.TrimSpace(content)
	if s == "" || s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0, false
	}
	return n, true
}

// SoftMemoryLimit is the Go soft memory limit for a container limit: the
// limit less memoryHeadroom, and at least half of it.
func SoftMemoryLimit(containerLimit int64) int64 {
	return max(containerLimit-memoryHeadroom, containerLimit/2)
}

// setMemoryLimit sets the Go soft memory limit from the container's memory
// limit, unless GOMEMLIMIT says otherwise. It returns the limit set (0: none).
func setMemoryLimit() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0 // the runtime has read it already
	}
	for _, f := range memoryLimitFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if limit, ok := ParseCgroupMemoryLimit(string(b)); ok {
			soft := SoftMemoryLimit(limit)
			debug.SetMemoryLimit(soft)
			return soft
		}
		return 0
	}
	return 0
}
