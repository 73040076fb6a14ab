package gateway

import (
	"fmt"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// MaxListeners is the most listeners Gateway API allows on one Gateway.
const MaxListeners = 64

// TooManyListenersError: the desired Gateway needs more than MaxListeners
// listeners. Nothing should be applied.
type TooManyListenersError struct {
	Count    int
	CertMode gatewayv1alpha1.CertMode
}

func (e *TooManyListenersError) Error() string {
	msg := fmt.Sprintf("the Gateway would need %d listeners, more than the %d Gateway API allows; nothing was applied", e.Count, MaxListeners)
	if e.CertMode == gatewayv1alpha1.CertModeHTTP01 {
		return msg + ": certMode http01 adds one listener per published hostname, switch to certMode dns01 to serve every hostname under the apex from one wildcard listener"
	}
	return msg + ": every inheriting child apex and every tlsPassthroughServices entry adds one listener, reduce them or give a child tenant its own gateway"
}

// StalledReason is the condition reason to report (reconcileerr.Reasoned).
func (e *TooManyListenersError) StalledReason() string { return gatewayv1alpha1.ReasonTooManyListeners }
