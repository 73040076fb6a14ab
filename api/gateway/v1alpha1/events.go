package v1alpha1

// Event reasons of the gateway controllers. Every decision is an event:
// writes of derived objects and namespace labels (Normal), route verdicts (on
// the route), and every change of a condition's status or reason, which
// carries refusals (a foreign object, a namespace a TenantGateway may not
// attach, a spec that cannot be served) with the condition's own reason and
// message: Warning when the condition reports a problem, Normal otherwise.
const (
	// EventApplied (Normal, on the TenantGateway): a derived object
	// (Gateway, redirect HTTPRoute, Issuer, Certificate) was created or
	// changed to the desired state; the note names it.
	EventApplied = "Applied"
	// EventDeleted (Normal, on the TenantGateway): a derived object the
	// TenantGateway controls and no longer needs was deleted.
	EventDeleted = "Deleted"
	// EventNamespaceAttached (Normal, on each TenantGateway of the owner
	// namespace): ns-labels wrote namespace.cozystack.io/gateway on a
	// namespace.
	EventNamespaceAttached = "NamespaceAttached"
	// EventNamespaceDetached (Normal): ns-labels removed a label it had
	// written from a namespace no longer listed.
	EventNamespaceDetached = "NamespaceDetached"
	// EventRouteAccepted (Normal, on the route): route-conflicts wrote an
	// Accepted=True verdict (no conflict, or the conflict is gone). A lost
	// conflict is a Warning with ReasonHostnameConflict.
	EventRouteAccepted = "RouteAccepted"
)
