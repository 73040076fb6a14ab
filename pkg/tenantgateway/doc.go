// Package tenantgateway holds the decisions the four gateway controllers
// (gateway-listeners, gateway-certs, ns-labels, route-conflicts) share, as pure
// functions: no client, no I/O, deterministic output. A controller gathers
// the inputs (the TenantGateway, its routes, namespaces, the Gateway it
// derived), calls these functions, and applies or reports the result.
//
// # Naming contract
//
// Every derived name comes from the TenantGateway's name <tgw> and, for the
// per-hostname objects, from the hostname: <first-label> is its first DNS
// label made safe (lower-cased, characters other than [a-z0-9-] turned into
// '-', cut to 42 characters) and <8hex> is HostnameHash, the first 8 hex
// characters of the SHA-256 of the lower-cased hostname.
//
//	Gateway                       <tgw>
//	listener, port 80             http
//	listener, HTTP-01             https-<first-label>-<8hex>        one per route hostname
//	listeners, DNS-01 and         https (*.<apex>), https-apex (<apex>),
//	existingSecret                https-child-<first-label>-<8hex>  one per inheriting child apex (*.<child>)
//	listener, TLS passthrough     tls-<service>                     hostname <service>.<apex>
//	Issuer                        <tgw>-gateway
//	ACME account key Secret       <tgw>-acme-account
//	Certificate, HTTP-01          <tgw>-<first-label>-<8hex>-tls    Secret of the same name
//	Certificate, DNS-01           <tgw>-gateway-tls                 Secret of the same name
//	redirect HTTPRoute            <tgw>-http-redirect
//
// Every listener name is a DNS-1123 label of at most 63 characters, whatever
// the hostname; wildcard route hostnames never produce a listener. Gateway
// API allows 64 listeners: past that, DesiredListeners returns a
// *TooManyListenersError and no listeners, so that the caller applies nothing.
//
// # Who decides what
//
//   - gateway-listeners: InheritingChildApexes, DesiredListeners,
//     DesiredGateway, DesiredRedirectRoute.
//   - gateway-certs: DesiredIssuer, and DesiredCertificates from the
//     Gateway's listeners as read back: its HTTPS listeners and their
//     certificateRefs are the whole contract between the two controllers.
//   - route-conflicts: ResolveConflicts.
//
// The errors returned here all mean the spec must change; each carries the
// condition reason to report (errors.go, read with reconcileerr.AsStalled). Rejected hostnames are not errors: the rest of
// the Gateway is still served, and they are reported with a reason each.
//
// The desired objects carry type meta and labels, but no owner references:
// the controller sets those.
package tenantgateway
