// Package names is the naming contract of the objects derived from a
// TenantGateway (gateway.cozystack.io/v1alpha1): the controllers create them
// under these names, and users, the CLI and other tools find them by these
// names. Changing one renames (and, for Certificates, re-issues) every
// tenant's objects.
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
// the hostname; wildcard route hostnames never produce a listener.
package names
