// Package tenantgateway holds the decisions the four gateway controllers
// (gateway-listeners, gateway-certs, ns-labels, route-conflicts) share, as pure
// functions: no client, no I/O, deterministic output. A controller gathers
// the inputs (the TenantGateway, its routes, namespaces, the Gateway it
// derived), calls these functions, and applies or reports the result.
//
// # Naming contract
//
// The names of the objects derived from a TenantGateway are part of its API
// (users and the CLI look them up): package
// github.com/cozyplane/cozyplane/api/gateway/names holds them. Gateway API
// allows 64 listeners: past that, DesiredListeners returns a
// *TooManyListenersError and no listeners, so that the caller applies nothing.
//
// # Who decides what
//
//   - gateway-listeners: InheritingChildApexes, DesiredListeners,
//     DesiredGateway, DesiredRedirectRoute.
//   - gateway-certs: DesiredIssuer, and DesiredCertificates from the
//     Gateway's listeners as read back: its HTTPS listeners and their
//     certificateRefs are the whole contract between the two controllers.
//   - route-conflicts decides in its own module
//     (controllers/route-conflicts/internal/verdicts); it shares the route
//     identity here (RouteKey, RouteRef, ParentRef, KindHTTPRoute,
//     KindTLSRoute) with pkg/gatewayctl, which reads the attached routes.
//
// The errors returned here all mean the spec must change; each carries the
// condition reason to report (errors.go, read with reconcileerr.AsStalled). Rejected hostnames are not errors: the rest of
// the Gateway is still served, and they are reported with a reason each.
//
// The desired objects carry type meta and labels, but no owner references:
// the controller sets those.
package tenantgateway
