// Package gateway holds the decisions of gateway-listeners, as pure
// functions (no client, no I/O, deterministic output): what a TenantGateway's
// Gateway looks like, and what its status says about it. The controller
// (internal/controller) gathers the inputs, calls these functions, applies
// the result and writes the status.
//
//   - ListenersStatus: status.listeners and ListenersReady, from the Gateway
//     as its implementation reports it; HostnamesRejectedCondition.
//   - Ready and Summarize: the one Ready condition, and the kstatus summary
//     (Ready, Reconciling, Stalled) written with it.
package gateway
