// Package gatewayruntime is the I/O the four TenantGateway controllers
// share: reading the routes attached to a TenantGateway's Gateway (and the
// index that finds them), the event mappings that more than one controller
// registers, applying, adopting and deleting the objects a TenantGateway
// owns (Base), and writing each controller's part of TenantGateway status.
//
// It decides nothing of its own: each controller's decisions (listener sets,
// certificates, namespace attachment, conflict verdicts) are pure functions in
// that controller's module, and what two controllers share (route identity,
// hostname rules, the derived objects' labels, the stalled errors) is in
// pkg/tenantgateway.
package gatewayruntime
