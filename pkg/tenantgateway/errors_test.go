package tenantgateway

import (
	"errors"
	"fmt"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// reasonOf is the condition reason a gateway controller reports for err, and
// whether err is a state only a change can fix.
func reasonOf(err error) (string, bool) {
	if s, ok := reconcileerr.AsStalled(err); ok {
		return s.Reason, true
	}
	return "", false
}

// TestStalledReasons: every error of this package (gateway-listeners' TooManyListenersError and gateway-certs' UnknownIssuerError in their modules) is a stalled state with
// its condition reason; an API error is not.
func TestStalledReasons(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("apply gateway: %w", &SpecError{Field: "apex"}), gatewayv1alpha1.ReasonInvalidSpec},
	}
	for _, tt := range tests {
		if got, ok := reasonOf(tt.err); !ok || got != tt.want {
			t.Errorf("reasonOf(%v) = %q, %v; want %q", tt.err, got, ok, tt.want)
		}
	}
	if got, ok := reasonOf(errors.New("connection refused")); ok || got != "" {
		t.Errorf("a foreign error has reason %q", got)
	}
	if got, ok := reasonOf(nil); ok || got != "" {
		t.Errorf("nil has reason %q", got)
	}
}
