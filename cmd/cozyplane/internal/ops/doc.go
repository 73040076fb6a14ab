// Package ops holds the day-to-day operations of cozyplane's CLI: list
// instances (get), show what an instance or a TenantGateway became (trace),
// and ask the controllers for a reconcile, a suspension or a plan approval
// through the instance's annotations.
//
// Every decision and every rendering is a pure function over objects already
// read (ref.go: names; tree.go: the trace tree; instance.go, gateway.go: the
// trees of an instance and of a TenantGateway; table.go: the get table;
// actions.go: what each annotation command writes and when it is done). The
// Gatherer (gather.go) is the only part that talks to the API server.
package ops
