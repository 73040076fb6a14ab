package certs

import (
	"fmt"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// TestUnknownIssuerStalled: an unknown issuer, wrapped, is a stalled state
// reported with its own reason.
func TestUnknownIssuerStalled(t *testing.T) {
	s, ok := reconcileerr.AsStalled(fmt.Errorf("issuer: %w", &UnknownIssuerError{Name: "x"}))
	if !ok || s.Reason != gatewayv1alpha1.ReasonUnknownIssuer {
		t.Errorf("AsStalled = %+v, %v; want reason %s", s, ok, gatewayv1alpha1.ReasonUnknownIssuer)
	}
}
