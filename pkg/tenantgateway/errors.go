package tenantgateway

import (
	"fmt"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// The errors of this package all mean "stalled": the TenantGateway's spec
// must change; retrying will not help (gateway-listeners' own,
// TooManyListenersError, is in its module). Each carries the condition reason to report (reconcileerr.Reasoned).
// The gateway controllers take it with reconcileerr.AsStalled, apply
// nothing, write the condition False with that reason and the error's
// message, and return no error (no retry: a change to the spec, a route or a
// namespace brings the next reconcile). Any other
// error is an API error: the condition says ReconcileError and the reconcile
// is retried. gateway-listeners' summary turns the reasons in
// gatewayv1alpha1.StalledReasons into Stalled=True for kstatus.

// SpecError: a field of the spec cannot be turned into objects (the CRD's
// validation normally rejects it first). Field is the JSON path.
type SpecError struct {
	Field   string
	Message string
}

func (e *SpecError) Error() string { return fmt.Sprintf("spec.%s: %s", e.Field, e.Message) }

// StalledReason is the condition reason to report (reconcileerr.Reasoned).
func (e *SpecError) StalledReason() string { return gatewayv1alpha1.ReasonInvalidSpec }
