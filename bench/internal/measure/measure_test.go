package measure

import (
	"testing"
	"time"
)

func TestCoreSpeedCountsDecodes(t *testing.T) {
	if s := CoreSpeed(20 * time.Millisecond); s <= 0 {
		t.Fatalf("CoreSpeed = %v, want some decodes per second", s)
	}
}
