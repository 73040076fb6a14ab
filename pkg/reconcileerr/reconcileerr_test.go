package reconcileerr

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestResult(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		err       error
		wantAfter time.Duration
		wantErr   bool
	}{
		{"nil", nil, 0, false},
		{"stalled is not retried", fmt.Errorf("ctx: %w", Stalled("InvalidSchema", boom)), 0, false},
		{"foreign looks again after the recheck interval", fmt.Errorf("ctx: %w", Foreign("NotOwned", boom)), time.Minute, false},
		{"a reasoned error is stalled", fmt.Errorf("ctx: %w", reasoned{}), 0, false},
		{"waiting requeues", fmt.Errorf("ctx: %w", Waiting("NotEstablished", 5*time.Second, boom)), 5 * time.Second, false},
		{"transient backs off", boom, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Result(tt.err, time.Minute)
			if (err != nil) != tt.wantErr || res.RequeueAfter != tt.wantAfter {
				t.Fatalf("Result = %+v, %v", res, err)
			}
		})
	}
	if s, ok := AsStalled(fmt.Errorf("x: %w", Stalled("R", boom))); !ok || s.Reason != "R" || !errors.Is(s, boom) {
		t.Fatal("AsStalled lost the reason or the cause")
	}
	if s, ok := AsStalled(fmt.Errorf("x: %w", reasoned{})); !ok || s.Reason != "TooBig" || s.Recheck {
		t.Fatalf("AsStalled of a Reasoned error = %+v, %v", s, ok)
	}
	if !IsForeign(fmt.Errorf("x: %w", Foreign("R", boom))) || IsForeign(Stalled("R", boom)) || IsForeign(boom) {
		t.Fatal("IsForeign")
	}
}

type reasoned struct{}

func (reasoned) Error() string         { return "too big" }
func (reasoned) StalledReason() string { return "TooBig" }
