package gateway

import (
	"fmt"
	"slices"
	"strings"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// Namespace is what child discovery needs of a namespace (metadata only).
type Namespace struct {
	Name   string
	Labels map[string]string
}

// ChildrenInput: the TenantGateway's namespace and apex, and the namespaces
// to look at (typically those labelled
// namespace.cozystack.io/gateway=<owner namespace>; others are ignored).
type ChildrenInput struct {
	OwnerNamespace string
	Apex           string
	Namespaces     []Namespace
}

// InheritingChildApexes returns the apexes of the tenants that publish
// through the owner's Gateway: the namespace.cozystack.io/host label of every
// namespace labelled namespace.cozystack.io/gateway=<owner namespace>, other
// than the owner namespace itself and the owner apex, normalised,
// deduplicated and sorted.
//
// A host label this Gateway cannot serve comes back rejected instead: not a
// valid DNS name, a wildcard, or not below the owner apex (a listener for it
// would fail the Gateway hostname policy and take the whole Gateway down; a
// tenant with its own apex needs its own TenantGateway).
func InheritingChildApexes(in ChildrenInput) ([]string, []RejectedHostname) {
	apex := tenantgateway.NormalizeHostname(in.Apex)
	// Sorted by name, so that of several namespaces with the same bad host
	// label the first one is reported whatever the input order.
	namespaces := slices.SortedFunc(slices.Values(in.Namespaces), func(a, b Namespace) int { return strings.Compare(a.Name, b.Name) })
	var apexes []string
	rejected := map[string]RejectedHostname{}
	for _, ns := range namespaces {
		if ns.Name == in.OwnerNamespace || ns.Labels[gatewayv1alpha1.LabelNamespaceGateway] != in.OwnerNamespace {
			continue
		}
		host := tenantgateway.NormalizeHostname(ns.Labels[gatewayv1alpha1.LabelNamespaceHost])
		if host == "" || host == apex {
			continue
		}
		if rej := checkChildApex("namespace "+ns.Name, host, apex); rej != nil {
			if _, seen := rejected[host]; !seen {
				rejected[host] = *rej
			}
			continue
		}
		apexes = append(apexes, host)
	}
	slices.Sort(apexes)
	apexes = slices.Compact(apexes)

	out := make([]RejectedHostname, 0, len(rejected))
	for _, r := range rejected {
		out = append(out, r)
	}
	sortRejected(out)
	return apexes, out
}

// checkChildApex rejects a child apex no listener may serve; source says
// where it came from ("namespace tenant-alice").
func checkChildApex(source, host, apex string) *RejectedHostname {
	switch {
	case strings.Contains(host, "*"):
		return &RejectedHostname{host, gatewayv1alpha1.ReasonWildcardHostname,
			fmt.Sprintf("%s: %s is a wildcard, not an apex", source, host)}
	case validDNSName(host) != "":
		return &RejectedHostname{host, gatewayv1alpha1.ReasonInvalidHostname,
			fmt.Sprintf("%s: %s: %s", source, host, validDNSName(host))}
	case len(host) > maxWildcardBase:
		return &RejectedHostname{host, gatewayv1alpha1.ReasonInvalidHostname,
			fmt.Sprintf("%s: %s is longer than %d characters, so its listener hostname *.%s would be invalid", source, host, maxWildcardBase, host)}
	case host == apex || !IsWithin(host, apex):
		return &RejectedHostname{host, gatewayv1alpha1.ReasonHostnameOutsideApex,
			fmt.Sprintf("%s: %s is not below %s, so this Gateway cannot serve it (the gateway hostname policy would reject the whole Gateway): a tenant with its own apex needs its own TenantGateway", source, host, apex)}
	}
	return nil
}
