// Package tenantgateway holds what two or more of the TenantGateway
// controllers share, as pure functions and types: no client, no I/O,
// deterministic output. Each controller's own decisions live in its module:
//
//   - gateway-listeners (the Gateway, its listeners, the redirect route, the
//     child apexes, status.listeners and the Ready summary):
//     controllers/gateway-listeners/internal/gateway;
//   - gateway-certs (the Issuer and the Certificates, from the Gateway's
//     listeners as read back): controllers/gateway-certs/internal/certs;
//   - ns-labels (which namespaces a TenantGateway may attach, and their
//     labels): controllers/ns-labels/internal/attach;
//   - route-conflicts (hostname-conflict verdicts and the routes'
//     status.parents entries): controllers/route-conflicts/internal/verdicts.
//
// What they share here:
//
//   - the route identity (routes.go: RouteKey, RouteRef, ParentRef,
//     KindHTTPRoute, KindTLSRoute), read by pkg/gatewayruntime, which finds the
//     attached routes, route-conflicts and gateway-listeners;
//   - hostname normalisation (hostnames.go: NormalizeHostname,
//     NormalizeHostnames);
//   - the labels of every derived object (labels.go: ObjectLabels) and the
//     parentRef of the Gateway's port-80 listener (parentref.go:
//     HTTPListenerRef), which the redirect route and cert-manager's HTTP-01
//     solver both name;
//   - the error that means the spec must change (errors.go: SpecError),
//     carrying the condition reason to report (reconcileerr.Reasoned);
//     each controller's own such errors are in its module.
//
// The names of the objects derived from a TenantGateway are part of its API
// (users and the CLI look them up): package
// github.com/cozyplane/cozyplane/api/gateway/names holds them.
package tenantgateway
