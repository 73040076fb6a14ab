package reconcileerr

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestReason: the reason goes with the result: a stalled state is reported
// with its own reason and not retried, anything else is retried and
// reported as such.
func TestReason(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		err     error
		want    string
		retried bool
	}{
		{"nil", nil, "", false},
		{"stalled", fmt.Errorf("ctx: %w", Stalled("InvalidSpec", boom)), "InvalidSpec", false},
		{"foreign", fmt.Errorf("ctx: %w", Foreign("NotOwned", boom)), "NotOwned", false},
		{"reasoned", fmt.Errorf("ctx: %w", reasoned{}), "TooBig", false},
		{"waiting", Waiting("NotEstablished", time.Second, boom), "NotEstablished", true},
		{"anything else", boom, "ReconcileError", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Reason(tt.err, "ReconcileError"); got != tt.want {
				t.Errorf("Reason = %q, want %q", got, tt.want)
			}
			res, err := Result(tt.err, 0)
			if retried := err != nil || res.RequeueAfter > 0; retried != tt.retried {
				t.Errorf("Result = %+v, %v: retried %v, want %v", res, err, retried, tt.retried)
			}
		})
	}
}
