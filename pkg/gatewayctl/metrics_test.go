package gatewayctl

import (
	"testing"

	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// The gateway controllers' writes count in the one write counter.
func TestCountWriteCountsInTheOneCounter(t *testing.T) {
	before := writemetric.Counted("cozystack-gateway-test", "Namespace", writemetric.Attached)
	CountWrite("cozystack-gateway-test", "Namespace", writemetric.Attached)
	if n := writemetric.Counted("cozystack-gateway-test", "Namespace", writemetric.Attached); n != before+1 {
		t.Fatalf("attached = %v, want %v", n, before+1)
	}
}
