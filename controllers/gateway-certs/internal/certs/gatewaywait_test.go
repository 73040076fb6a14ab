package certs

import (
	"testing"
	"time"
)

func TestWaitForGateway(t *testing.T) {
	tests := []struct {
		name         string
		age          time.Duration
		reported, gw bool
		want         time.Duration
	}{
		{"a new TenantGateway without its Gateway waits the rest of the grace", 3 * time.Second, false, false, GatewayGrace - 3*time.Second},
		{"its Gateway there: no wait", time.Second, false, true, 0},
		{"reported on before: a missing Gateway is reported at once", time.Second, true, false, 0},
		{"the grace over: reported", GatewayGrace, false, false, 0},
		{"clocks apart: a creation in the future waits one grace at most", -time.Minute, false, false, GatewayGrace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WaitForGateway(tt.age, tt.reported, tt.gw); got != tt.want {
				t.Errorf("WaitForGateway(%s, %t, %t) = %s, want %s", tt.age, tt.reported, tt.gw, got, tt.want)
			}
		})
	}
}
