package v1alpha1

// Event reasons of the gateway controllers. Every decision is an event:
// writes of derived objects (one event for what a reconcile wrote) and
// namespace labels (Normal), route verdicts that refuse a route or lift a
// refusal (on the route), and every change of a condition's status or reason, which
// carries refusals (a foreign object, a namespace a TenantGateway may not
// attach, a spec that cannot be served) with the condition's own reason and
// message: Warning when the condition reports a problem, Normal otherwise. A
// condition's first value is an event only when it reports a problem.
const (
	// EventApplied (Normal, on the TenantGateway): derived objects
	// (Gateway, redirect HTTPRoute, Issuer, Certificates) were created or
	// changed to the desired state; one event per reconcile, whose note
	// names each object and why, and whose related object is the first.
	EventApplied = "Applied"
	// EventDeleted (Normal, on the TenantGateway): derived objects the
	// TenantGateway controls and no longer needs were deleted; one event
	// per reconcile, as EventApplied.
	EventDeleted = "Deleted"
	// EventNamespaceAttached (Normal, on each TenantGateway of the owner
	// namespace): ns-labels wrote namespace.cozystack.io/gateway on
	// namespaces; one event per reconcile naming each, its related object
	// the first.
	EventNamespaceAttached = "NamespaceAttached"
	// EventNamespaceDetached (Normal): ns-labels removed a label it had
	// written from namespaces no longer listed; one event per reconcile, as
	// EventNamespaceAttached.
	EventNamespaceDetached = "NamespaceDetached"
	// EventRouteAccepted (Normal, on the route): route-conflicts wrote an
	// Accepted=True verdict over its own HostnameConflict one: the conflict
	// is gone. A first acceptance is in the route's status only. A lost
	// conflict is a Warning with ReasonHostnameConflict.
	EventRouteAccepted = "RouteAccepted"
)
