// Package gateway holds the decisions of gateway-listeners, as pure
// functions (no client, no I/O, deterministic output): what a TenantGateway's
// Gateway and redirect route look like, and what its status says about
// them. The controller (internal/controller) gathers the inputs, calls these
// functions, applies the result and writes the status.
//
//   - InheritingChildApexes (children.go): the child tenants' apexes the
//     Gateway serves.
//   - DesiredListeners, RouteKindsFor (listeners.go), with the hostname
//     checks of hostnames.go: the listener set. Gateway API allows
//     MaxListeners: past that, DesiredListeners returns a
//     *TooManyListenersError (errors.go) and no listeners, so that the
//     caller applies nothing.
//   - DesiredGateway, DesiredRedirectRoute (gateway.go): the objects to
//     apply, with type meta and labels; the controller sets the owner
//     reference.
//   - ListenersStatus, HostnamesRejectedCondition (status.go):
//     status.listeners, ListenersReady and HostnamesRejected, from the
//     Gateway as its implementation reports it.
//   - Ready, Summarize (ready.go): the one Ready condition, and the kstatus
//     summary (Ready, Reconciling, Stalled) written with it.
//
// A spec that cannot work is an error that means stalled (reconcileerr);
// rejected hostnames are not errors: the rest of the Gateway is still
// served, and they are reported with a reason each.
package gateway
