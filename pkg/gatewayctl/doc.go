// Package gatewayctl is the runtime the four TenantGateway controllers share:
// which routes are attached to a TenantGateway's Gateway and from which
// namespaces, the event mappings that turn route, namespace and Gateway
// changes into TenantGateway requests, the ownership of derived objects, and
// the per-controller writing of TenantGateway status conditions.
//
// The decisions themselves (listener sets, certificates, conflicts, names)
// are pure functions in pkg/tenantgateway; this package only reads the API
// and writes what those functions decide.
package gatewayctl
