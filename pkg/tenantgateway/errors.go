package tenantgateway

import (
	"fmt"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// The errors of this package all mean "stalled": the TenantGateway's spec
// (or what routes and namespaces ask of it) must change; retrying will not
// help. Each carries the condition reason to report (reconcileerr.Reasoned).
// The gateway controllers take it with reconcileerr.AsStalled, apply
// nothing, write the condition False with that reason and the error's
// message, and return no error (no retry: a change to the spec, a route or a
// namespace brings the next reconcile). Any other
// error is an API error: the condition says ReconcileError and the reconcile
// is retried. gateway-listeners' summary turns the reasons in
// gatewayv1alpha1.StalledReasons into Stalled=True for kstatus.

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

// UnknownIssuerError: spec.issuerName names no ACME directory this package
// knows.
type UnknownIssuerError struct {
	Name string
}

func (e *UnknownIssuerError) Error() string {
	return fmt.Sprintf("unknown issuerName %q: use %s or %s", e.Name, gatewayv1alpha1.IssuerNameLetsEncryptProd, gatewayv1alpha1.IssuerNameLetsEncryptStage)
}

// StalledReason is the condition reason to report (reconcileerr.Reasoned).
func (e *UnknownIssuerError) StalledReason() string { return gatewayv1alpha1.ReasonUnknownIssuer }

// SpecError: a field of the spec cannot be turned into objects (the CRD's
// validation normally rejects it first). Field is the JSON path.
type SpecError struct {
	Field   string
	Message string
}

func (e *SpecError) Error() string { return fmt.Sprintf("spec.%s: %s", e.Field, e.Message) }

// StalledReason is the condition reason to report (reconcileerr.Reasoned).
func (e *SpecError) StalledReason() string { return gatewayv1alpha1.ReasonInvalidSpec }
