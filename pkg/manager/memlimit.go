package manager

// The Go runtime knows nothing of a container's memory limit: with the
// default GOGC it lets the heap grow to twice what is live before collecting,
// so a controller whose caches hold 120 MiB peaks near 250 MiB and a 256 MiB
// limit kills it. A soft limit below the container's makes the collector work
// harder as the heap approaches it instead.

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

// memoryLimitShare of the container's limit becomes the Go soft limit: the
// rest covers what the runtime does not count (stacks, the binary, cgo).
const memoryLimitShare = 0.9

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

// SoftMemoryLimit is the Go soft memory limit for a container limit.
func SoftMemoryLimit(containerLimit int64) int64 {
	return int64(float64(containerLimit) * memoryLimitShare)
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
