package tenantgateway

import (
	"slices"
	"strings"
)

// NormalizeHostname lower-cases a hostname; DNS names compare
// case-insensitively and every generated name is lower-case.
func NormalizeHostname(hostname string) string {
	return strings.ToLower(strings.TrimSpace(hostname))
}

// NormalizeHostnames normalises, deduplicates and sorts hostnames, dropping
// empty ones.
func NormalizeHostnames(hostnames []string) []string {
	out := make([]string, 0, len(hostnames))
	for _, h := range hostnames {
		if h = NormalizeHostname(h); h != "" {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
