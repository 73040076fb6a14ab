package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Fixed listener names.
const (
	// ListenerHTTP is the plain-HTTP listener on port 80 (ACME HTTP-01
	// challenges and the redirect route), in every mode.
	ListenerHTTP = "http"
	// ListenerHTTPS serves *.<apex> in the wildcard modes.
	ListenerHTTPS = "https"
	// ListenerHTTPSApex serves <apex> in the wildcard modes.
	ListenerHTTPSApex = "https-apex"
)

// Prefixes of the generated listener names.
const (
	perHostListenerPrefix     = "https-"
	childListenerPrefix       = "https-child-"
	passthroughListenerPrefix = "tls-"
)

// hashLen is the number of hex characters of HostnameHash.
const hashLen = 8

// maxLabelPart bounds the first-label part of the generated names so that the
// longest listener name, https-child-<part>-<8hex>, is a DNS-1123 label of at
// most 63 characters.
const maxLabelPart = 63 - len(childListenerPrefix) - 1 - hashLen

// MaxPassthroughService is the longest service name whose listener name,
// tls-<service>, is still a DNS-1123 label.
const MaxPassthroughService = 63 - len(passthroughListenerPrefix)

// HostnameHash returns the first 8 hex characters (32 bits) of the SHA-256 of
// the lower-cased hostname. It tells apart hostnames that share a first
// label (harbor.foo.example.org, harbor.alice.example.org).
func HostnameHash(hostname string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(hostname)))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// firstLabelPart returns the first label of hostname made safe for a DNS-1123
// label: lower-cased, every character other than [a-z0-9-] replaced by '-',
// hyphens trimmed from both ends, cut to maxLabelPart characters. It may be
// empty (e.g. for "*.example.org"); the callers then leave it out.
func firstLabelPart(hostname string) string {
	label, _, _ := strings.Cut(strings.ToLower(hostname), ".")
	b := []byte(label)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	part := strings.Trim(string(b), "-")
	if len(part) > maxLabelPart {
		part = strings.TrimRight(part[:maxLabelPart], "-")
	}
	return part
}

// hashedName returns prefix + "<first-label>-<8hex>" + suffix, or
// prefix + "<8hex>" + suffix when the first label has nothing usable.
func hashedName(prefix, hostname, suffix string) string {
	if part := firstLabelPart(hostname); part != "" {
		return prefix + part + "-" + HostnameHash(hostname) + suffix
	}
	return prefix + HostnameHash(hostname) + suffix
}

// PerHostListener is the HTTP-01 listener for one route hostname:
// https-<first-label>-<8hex>.
func PerHostListener(hostname string) string {
	return hashedName(perHostListenerPrefix, hostname, "")
}

// ChildListener is the wildcard-mode listener for an inheriting child
// apex (hostname *.<child apex>): https-child-<first-label>-<8hex>, both taken
// from the child apex.
func ChildListener(childApex string) string {
	return hashedName(childListenerPrefix, childApex, "")
}

// PassthroughListener is the TLS passthrough listener of a service:
// tls-<service>. The service must be a DNS-1123 label of at most
// MaxPassthroughService characters (the CRD enforces it; gateway-listeners
// checks it again).
func PassthroughListener(service string) string {
	return passthroughListenerPrefix + service
}

// PassthroughHostname is the hostname of a service's passthrough listener:
// <service>.<apex>.
func PassthroughHostname(service, apex string) string {
	return service + "." + apex
}

// Gateway is the Gateway derived from the TenantGateway tgw: its own name.
func Gateway(tgw string) string { return tgw }

// Issuer is the per-tenant cert-manager Issuer: <tgw>-gateway.
func Issuer(tgw string) string { return tgw + "-gateway" }

// ACMEAccountSecret holds the Issuer's ACME account key:
// <tgw>-acme-account.
func ACMEAccountSecret(tgw string) string { return tgw + "-acme-account" }

// PerListenerCertificate is the HTTP-01 Certificate (and its Secret) for
// one hostname: <tgw>-<first-label>-<8hex>-tls.
func PerListenerCertificate(tgw, hostname string) string {
	return hashedName(tgw+"-", hostname, "-tls")
}

// WildcardCertificate is the DNS-01 Certificate (and its Secret):
// <tgw>-gateway-tls.
func WildcardCertificate(tgw string) string { return tgw + "-gateway-tls" }

// RedirectRoute is the HTTP-to-HTTPS redirect HTTPRoute:
// <tgw>-http-redirect.
func RedirectRoute(tgw string) string { return tgw + "-http-redirect" }

// ParentRef is a route's parentRef, each field as the route spells it:
// empty Group, Kind and Namespace take Gateway API's defaults (the Gateway
// kind of gateway.networking.k8s.io, the route's own namespace).
type ParentRef struct {
	Group, Kind, Namespace, Name string
}

// IsGateway reports whether the reference names a Gateway.
func (r ParentRef) IsGateway() bool {
	return (r.Group == "" || r.Group == gatewayGroup) && (r.Kind == "" || r.Kind == "Gateway")
}

// GatewayKey is "<namespace>/<name>" of the Gateway the reference names
// from a route in routeNamespace; ok is false when it names something else.
func (r ParentRef) GatewayKey(routeNamespace string) (key string, ok bool) {
	if !r.IsGateway() {
		return "", false
	}
	ns := r.Namespace
	if ns == "" {
		ns = routeNamespace
	}
	return ns + "/" + r.Name, true
}

// NamesGateway reports whether the reference, on a route in
// routeNamespace, names the Gateway namespace/name.
func (r ParentRef) NamesGateway(routeNamespace, namespace, name string) bool {
	key, ok := r.GatewayKey(routeNamespace)
	return ok && key == namespace+"/"+name
}

// gatewayGroup is Gateway API's group.
const gatewayGroup = "gateway.networking.k8s.io"
