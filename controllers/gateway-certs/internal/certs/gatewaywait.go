package certs

import "time"

// GatewayGrace is how long a new TenantGateway's Gateway may take to appear
// before gateway-certs acts without it: gateway-listeners creates the
// Gateway once the TenantGateway's first changes have settled (its batch
// window), and the Gateway's listeners are what the Certificates follow.
const GatewayGrace = 10 * time.Second

// WaitForGateway is how long to leave a TenantGateway alone, 0 for not at
// all: while it is younger than GatewayGrace (age), has never been
// reported on (reported: it carries no CertificatesReady) and its Gateway
// does not exist, nothing is written, neither the Issuer nor a
// GatewayNotFound that is only the normal order of a new tenant's objects;
// the Gateway's creation (watched) brings the reconcile, or the grace's end
// does. Once reported on, a missing Gateway is reported at once. A
// negative age (clocks apart) counts as new. Pure.
func WaitForGateway(age time.Duration, reported, gatewayFound bool) time.Duration {
	if reported || gatewayFound || age >= GatewayGrace {
		return 0
	}
	return min(GatewayGrace-age, GatewayGrace)
}
