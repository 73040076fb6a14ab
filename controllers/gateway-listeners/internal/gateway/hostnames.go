package gateway

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// RejectedHostname is a hostname that gets no listener (HTTP-01), is not
// covered by the wildcard certificate (DNS-01, existingSecret), or is a child
// apex this Gateway cannot serve. Reason is one of the hostname reasons of
// the v1alpha1 package (ReasonInvalidHostname, ReasonWildcardHostname, ...);
// Message says what to change.
type RejectedHostname struct {
	Hostname string
	Reason   string
	Message  string
}

// IsWithin reports whether hostname is domain or a name below it. Both must
// be normalised. A wildcard is within domain when its suffix is:
// "*.a.example.org" is within "example.org" and "a.example.org", not within
// "b.example.org".
func IsWithin(hostname, domain string) bool {
	return hostname == domain || strings.HasSuffix(hostname, "."+domain)
}

// validDNSName reports why a normalised, non-wildcard hostname is not a
// DNS-1123 subdomain with labels of at most 63 characters, or "" when it is.
// (IsDNS1123Subdomain checks the characters and the total length only.)
func validDNSName(hostname string) string {
	if errs := validation.IsDNS1123Subdomain(hostname); len(errs) > 0 {
		return strings.Join(errs, "; ")
	}
	for label := range strings.SplitSeq(hostname, ".") {
		if len(label) > validation.DNS1123LabelMaxLength {
			return fmt.Sprintf("label %q is longer than %d characters", label, validation.DNS1123LabelMaxLength)
		}
	}
	return ""
}

// maxWildcardBase is the longest domain whose wildcard *.<domain> is still a
// valid hostname.
const maxWildcardBase = validation.DNS1123SubdomainMaxLength - len("*.")

// HostnameScope is what a Gateway may serve: the owner's apex, the apexes of
// the inheriting children (from InheritingChildApexes), and the hostnames
// reserved by TLS passthrough listeners (hostname → listener name). All
// values normalised.
type HostnameScope struct {
	Apex        string
	ChildApexes []string
	Reserved    map[string]string
}

func (s HostnameScope) withinScope(hostname string) bool {
	if IsWithin(hostname, s.Apex) {
		return true
	}
	for _, c := range s.ChildApexes {
		if IsWithin(hostname, c) {
			return true
		}
	}
	return false
}

// CheckListenerHostname decides whether a route hostname gets its own HTTPS
// listener and certificate (HTTP-01). It returns the normalised hostname,
// and a rejection when it does not qualify: a wildcard, not a valid DNS
// name, outside the apex and the child apexes, or reserved by a passthrough
// listener. Case does not matter.
func (s HostnameScope) CheckListenerHostname(hostname string) (string, *RejectedHostname) {
	h := tenantgateway.NormalizeHostname(hostname)
	if rej := s.checkCommon(h); rej != nil {
		return h, rej
	}
	if strings.Contains(h, "*") {
		return h, &RejectedHostname{h, gatewayv1alpha1.ReasonWildcardHostname,
			fmt.Sprintf("wildcard hostname %s gets no listener with certMode http01 (ACME HTTP-01 cannot issue wildcard certificates): name each host, or use certMode dns01", h)}
	}
	return h, nil
}

// CheckCoveredHostname decides whether the wildcard certificate of the
// DNS-01 and existingSecret modes covers a route hostname: the apex or a
// child apex, one label below either, or the wildcard *.<apex> or
// *.<child apex>. It also rejects what CheckListenerHostname rejects other
// than wildcards.
func (s HostnameScope) CheckCoveredHostname(hostname string) (string, *RejectedHostname) {
	h := tenantgateway.NormalizeHostname(hostname)
	if rej := s.checkCommon(h); rej != nil {
		return h, rej
	}
	_, parent, _ := strings.Cut(h, ".")
	if h == s.Apex || parent == s.Apex {
		return h, nil
	}
	for _, c := range s.ChildApexes {
		if h == c || parent == c {
			return h, nil
		}
	}
	return h, &RejectedHostname{h, gatewayv1alpha1.ReasonHostnameNotCovered,
		fmt.Sprintf("hostname %s is more than one label below %s or any inheriting child apex, so the wildcard certificate does not cover it: use a name directly below an apex", h, s.Apex)}
}

// checkCommon holds the checks shared by both modes, in the order a user
// should fix them.
func (s HostnameScope) checkCommon(h string) *RejectedHostname {
	if h == "" {
		return &RejectedHostname{h, gatewayv1alpha1.ReasonInvalidHostname, "empty hostname"}
	}
	// A wildcard is allowed only as the whole first label; its remainder
	// must be a valid name.
	name := h
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		name = rest
	}
	if strings.Contains(name, "*") {
		return &RejectedHostname{h, gatewayv1alpha1.ReasonInvalidHostname,
			fmt.Sprintf("hostname %s: a wildcard may only be the whole first label", h)}
	}
	if why := validDNSName(name); why != "" {
		return &RejectedHostname{h, gatewayv1alpha1.ReasonInvalidHostname, fmt.Sprintf("hostname %s: %s", h, why)}
	}
	if !s.withinScope(h) {
		return &RejectedHostname{h, gatewayv1alpha1.ReasonHostnameOutsideApex,
			fmt.Sprintf("hostname %s is not %s or below it, nor below an inheriting child apex", h, s.Apex)}
	}
	if l, ok := s.Reserved[h]; ok {
		return &RejectedHostname{h, gatewayv1alpha1.ReasonReservedHostname,
			fmt.Sprintf("hostname %s is served by the TLS passthrough listener %s: use a TLSRoute, or another hostname", h, l)}
	}
	return nil
}

// sortRejected orders rejections by hostname, then reason, for stable
// status messages.
func sortRejected(r []RejectedHostname) {
	sort.Slice(r, func(i, j int) bool {
		if r[i].Hostname != r[j].Hostname {
			return r[i].Hostname < r[j].Hostname
		}
		return r[i].Reason < r[j].Reason
	})
}
