package attach

import (
	"fmt"
	"slices"
	"strings"
)

// Tenant namespaces, as upstream Cozystack's tenant chart names them: the root
// tenant lives in tenant-root; a child <name> of the root in tenant-<name>; a
// child <name> of any other tenant in <parent namespace>-<name>. Tenant names
// have no hyphen (^[a-z][a-z0-9]*$), so "<namespace>-" prefixes exactly the
// descendants of a tenant.
const (
	// RootTenantNamespace is the root tenant's namespace.
	RootTenantNamespace = "tenant-root"
	// TenantNamespacePrefix starts every tenant namespace.
	TenantNamespacePrefix = "tenant-"
)

// AttachRefusal is an attachedNamespaces entry a TenantGateway may not attach,
// with the message saying why and what to do.
type AttachRefusal struct {
	Namespace string
	Message   string
}

// MayAttach decides whether a TenantGateway in namespace owner may attach
// namespace ns (an entry of spec.attachedNamespaces), that is make the routes
// of ns eligible for its Gateway and let ns-labels write
// namespace.cozystack.io/gateway=<owner> there. It returns "" when allowed, a
// message otherwise. The rule:
//
//   - its own namespace, always;
//   - from a namespace that is not a tenant namespace (a platform namespace,
//     which only cluster administrators write), any namespace;
//   - from the root tenant (tenant-root), any namespace: the shared platform
//     namespaces (cozy-*, default) are published through the root tenant's
//     Gateway, and every tenant descends from the root;
//   - from any other tenant, only its descendants (<owner>-<name>...): a
//     shared namespace or another branch's tenant is not its to claim.
//
// A child tenant's TenantGateway thus cannot race the root's for a cozy-*
// namespace: whichever is written first, only the root's may attach it. A
// shared entry the root tenant's TenantGateway lists too is no mistake (see
// SplitAttachments).
// Pure; the admission policy cozyplane-tenantgateway-attach-policy
// (policies/l4-namespace-host-label.yaml) says the same in CEL for callers
// that are not trusted.
func MayAttach(owner, ns string) string {
	switch {
	case ns == owner, !strings.HasPrefix(owner, TenantNamespacePrefix), owner == RootTenantNamespace,
		strings.HasPrefix(ns, owner+"-"):
		return ""
	case strings.HasPrefix(ns, TenantNamespacePrefix):
		return fmt.Sprintf("%s is not a descendant of tenant namespace %s: a TenantGateway attaches only its own tenant's descendants (%s-*); "+
			"the tenant of %s publishes through its own or its parent's Gateway", ns, owner, owner, ns)
	}
	return fmt.Sprintf("%s is a shared namespace: only the root tenant's TenantGateway (namespace %s) may attach it; "+
		"remove it from spec.attachedNamespaces (its routes are published through the root tenant's Gateway)", ns, RootTenantNamespace)
}

// Attachments is what one TenantGateway's attachedNamespaces come to.
type Attachments struct {
	// Allowed are the namespaces it attaches: its own namespace first, then
	// the entries MayAttach allows, in the order given.
	Allowed []string
	// OnRoot are shared namespaces it may not attach that the root tenant's
	// TenantGateways list: upstream's gateway chart renders the cluster-wide
	// list (cozy-*, default) into every tenant's TenantGateway, and those
	// namespaces are published through the root tenant's Gateway. They are
	// not attached here and not an error.
	OnRoot []string
	// Refused are the other entries it may not attach, each with what to do.
	Refused []AttachRefusal
}

// SplitAttachments splits the attachedNamespaces of a TenantGateway in
// namespace owner by MayAttach, given rootAttached, the attachedNamespaces of
// the TenantGateways in the root tenant's namespace. Pure.
func SplitAttachments(owner string, attached, rootAttached []string) Attachments {
	a := Attachments{Allowed: []string{owner}}
	for _, ns := range attached {
		switch msg := MayAttach(owner, ns); {
		case msg == "":
			a.Allowed = append(a.Allowed, ns)
		case !strings.HasPrefix(ns, TenantNamespacePrefix) && slices.Contains(rootAttached, ns):
			a.OnRoot = append(a.OnRoot, ns)
		default:
			a.Refused = append(a.Refused, AttachRefusal{Namespace: ns, Message: msg})
		}
	}
	return a
}
