package ops

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// NamespaceState is what trace found of a namespace a TenantGateway
// attaches: its own, and each of spec.attachedNamespaces.
type NamespaceState struct {
	Name string
	// Exists is false for a namespace not created yet.
	Exists bool
	// Label is its namespace.cozystack.io/gateway label ("" when absent).
	Label string
	// Err: it could not be read.
	Err error
}

// GatewayTrace is everything trace read about one TenantGateway.
type GatewayTrace struct {
	TenantGateway *unstructured.Unstructured
	// Gateway named after the TenantGateway (nil when absent).
	Gateway    *unstructured.Unstructured
	GatewayErr error
	// Issuer <tgw>-gateway (nil when absent).
	Issuer    *unstructured.Unstructured
	IssuerErr error
	// Certificates of the TenantGateway's namespace that it controls.
	Certificates    []unstructured.Unstructured
	CertificatesErr error
	Namespaces      []NamespaceState
	// Routes (HTTPRoutes, TLSRoutes) whose parentRefs name the Gateway.
	Routes    []unstructured.Unstructured
	RoutesErr error
}

// GatewayTree builds the trace of a TenantGateway: its Gateway and
// listeners, the Issuer and Certificates, the attached namespaces and the
// routes with their verdicts. Pure.
func GatewayTree(t GatewayTrace) *Node {
	tgw := t.TenantGateway
	root := conditionNode(tgw, tgw.GetKind(), "Ready")
	for _, c := range []string{gatewayv1alpha1.ConditionListenersReady, gatewayv1alpha1.ConditionCertificatesReady,
		gatewayv1alpha1.ConditionNamespacesAttached, gatewayv1alpha1.ConditionHostnamesRejected} {
		if cond, ok := FindCondition(tgw, c); ok {
			root.Notes = append(root.Notes, conditionNote(cond))
		}
	}
	ns, name := tgw.GetNamespace(), tgw.GetName()

	gw := &Node{Kind: "Gateway", Namespace: ns, Name: name, Condition: "Programmed", Reason: "NotFound", Message: "does not exist yet"}
	switch {
	case t.GatewayErr != nil:
		gw.Reason, gw.Message = "Unreadable", t.GatewayErr.Error()
	case t.Gateway != nil:
		gw = conditionNode(t.Gateway, "Gateway", "Programmed")
		if c, ok := FindCondition(t.Gateway, "Accepted"); ok {
			gw.Notes = append(gw.Notes, conditionNote(c))
		}
	}
	gw.Add(listenerNodes(tgw, t.Gateway)...)
	root.Add(gw)

	mode := str(tgw, "spec", "certMode")
	if mode != string(gatewayv1alpha1.CertModeExistingSecret) || t.Issuer != nil {
		is := &Node{Kind: "Issuer", Namespace: ns, Name: names.Issuer(name), Reason: "NotFound", Message: "does not exist yet"}
		switch {
		case t.IssuerErr != nil:
			is.Reason, is.Message = "Unreadable", t.IssuerErr.Error()
		case t.Issuer != nil:
			is = conditionNode(t.Issuer, "Issuer", "Ready")
		}
		root.Add(is)
	} else if ref := str(tgw, "spec", "wildcardSecretRef", "name"); ref != "" {
		root.Add(&Node{Kind: "Secret", Namespace: ns, Name: ref, Condition: "Provided", Message: "certMode existingSecret: the wildcard certificate is provided, no Issuer"})
	}
	if t.CertificatesErr != nil {
		root.Add(&Node{Kind: "Certificate", Namespace: ns, Name: "*", Reason: "Unreadable", Message: t.CertificatesErr.Error()})
	}
	certs := append([]unstructured.Unstructured(nil), t.Certificates...)
	sort.Slice(certs, func(i, j int) bool { return certs[i].GetName() < certs[j].GetName() })
	for i := range certs {
		c := conditionNode(&certs[i], "Certificate", "Ready")
		if names, _, _ := unstructured.NestedStringSlice(certs[i].Object, "spec", "dnsNames"); len(names) > 0 {
			c.Notes = append(c.Notes, "dnsNames: "+strings.Join(names, ", "))
		}
		root.Add(c)
	}
	for _, n := range t.Namespaces {
		root.Add(namespaceNode(ns, n))
	}
	if t.RoutesErr != nil {
		root.Add(&Node{Kind: "Route", Name: "*", Condition: "Accepted", Reason: "Unreadable", Message: t.RoutesErr.Error()})
	}
	routes := append([]unstructured.Unstructured(nil), t.Routes...)
	sort.Slice(routes, func(i, j int) bool {
		a, b := routes[i], routes[j]
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		if a.GetName() != b.GetName() {
			return a.GetName() < b.GetName()
		}
		return a.GetKind() < b.GetKind()
	})
	for i := range routes {
		root.Add(routeNode(&routes[i], ns, name))
	}
	return root
}

func conditionNote(c Condition) string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.Message != "" {
		s += ": " + oneLine(c.Message)
	}
	return s
}

// listenerNodes joins the TenantGateway's status.listeners (ready, reason,
// certificate) with the Gateway's own listener conditions; without the
// former, the Gateway's spec.listeners. Pure.
func listenerNodes(tgw, gw *unstructured.Unstructured) []*Node {
	gwConds := map[string][]any{}
	if gw != nil {
		sl, _, _ := unstructured.NestedSlice(gw.Object, "status", "listeners")
		for _, l := range sl {
			if m, ok := l.(map[string]any); ok {
				n, _ := m["name"].(string)
				c, _ := m["conditions"].([]any)
				gwConds[n] = c
			}
		}
	}
	var out []*Node
	add := func(name, hostname string, n *Node) {
		if hostname != "" {
			n.Notes = append(n.Notes, "hostname: "+hostname)
		}
		for _, t := range []string{"Accepted", "Programmed", "ResolvedRefs"} {
			if c, ok := findIn(gwConds[name], t); ok {
				n.Notes = append(n.Notes, conditionNote(c))
			}
		}
		out = append(out, n)
	}
	ls, _, _ := unstructured.NestedSlice(tgw.Object, "status", "listeners")
	if len(ls) > 0 {
		for _, l := range ls {
			m, ok := l.(map[string]any)
			if !ok {
				continue
			}
			s := func(k string) string { v, _ := m[k].(string); return v }
			n := &Node{Kind: "Listener", Name: s("name"), Status: "False", Reason: s("reason"), Message: s("message")}
			if r, _ := m["ready"].(bool); r {
				n.Status = "True"
			}
			if c := s("certificateName"); c != "" {
				n.Notes = append(n.Notes, "certificate: "+c)
			}
			add(s("name"), s("hostname"), n)
		}
		return out
	}
	if gw == nil {
		return nil
	}
	spec, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	for _, l := range spec {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		host, _ := m["hostname"].(string)
		n := &Node{Kind: "Listener", Name: name, Condition: "Programmed"}
		if c, ok := findIn(gwConds[name], "Programmed"); ok {
			n.Status, n.Reason, n.Message = c.Status, c.Reason, c.Message
		}
		add(name, host, n)
	}
	return out
}

func namespaceNode(owner string, n NamespaceState) *Node {
	node := &Node{Kind: "Namespace", Name: n.Name, Condition: "Attached"}
	switch {
	case n.Err != nil:
		node.Status, node.Reason, node.Message = "Unknown", "Unreadable", n.Err.Error()
	case !n.Exists:
		node.Status, node.Reason, node.Message = "Unknown", gatewayv1alpha1.ReasonNamespacesNotCreated, "not created yet; labelled as soon as it is"
	case n.Label == owner:
		node.Status, node.Message = "True", fmt.Sprintf("%s=%s: its routes may attach", gatewayv1alpha1.LabelNamespaceGateway, owner)
	case n.Label == "tenant-root" && n.Name != owner && !strings.HasPrefix(n.Name, "tenant-"):
		// A shared namespace (cozy-*, default) a child tenant lists as
		// upstream's chart renders it: published through the root's Gateway.
		node.Status, node.Reason, node.Message = "True", gatewayv1alpha1.ReasonSharedNamespacesOnRoot,
			fmt.Sprintf("shared: attached to the root tenant's Gateway (%s=tenant-root), its routes are published there", gatewayv1alpha1.LabelNamespaceGateway)
	case n.Label == "":
		node.Status, node.Message = "False", fmt.Sprintf("no %s label yet", gatewayv1alpha1.LabelNamespaceGateway)
	default:
		node.Status, node.Reason, node.Message = "False", gatewayv1alpha1.ReasonNamespaceLabelConflict,
			fmt.Sprintf("labelled %s=%s: it belongs to another tenant's gateway", gatewayv1alpha1.LabelNamespaceGateway, n.Label)
	}
	return node
}

// NamesGateway reports whether a route's parentRefs name the Gateway
// gwNamespace/gwName. Pure.
func NamesGateway(route *unstructured.Unstructured, gwNamespace, gwName string) bool {
	refs, _, _ := unstructured.NestedSlice(route.Object, "spec", "parentRefs")
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok && refNames(m, route.GetNamespace(), gwNamespace, gwName) {
			return true
		}
	}
	return false
}

func refNames(ref map[string]any, routeNS, gwNamespace, gwName string) bool {
	s := func(k string) string { v, _ := ref[k].(string); return v }
	r := names.ParentRef{Group: s("group"), Kind: s("kind"), Namespace: s("namespace"), Name: s("name")}
	return r.NamesGateway(routeNS, gwNamespace, gwName)
}

// routeNode shows a route with the verdict route-conflicts wrote for the
// Gateway (its status.parents entry, controllerName
// gateway.cozystack.io/tenantgateway-controller).
func routeNode(route *unstructured.Unstructured, gwNamespace, gwName string) *Node {
	n := &Node{Kind: route.GetKind(), Namespace: route.GetNamespace(), Name: route.GetName(), Condition: "Accepted",
		Message: "no verdict yet"}
	switch {
	case route.GetLabels()[gatewayv1alpha1.LabelHTTP01Solver] == "true":
		n.Message = "cert-manager's HTTP-01 solver route: exempt from conflict verdicts"
	case route.GetNamespace() == gwNamespace && route.GetLabels()[gatewayv1alpha1.LabelGateway] == gwName:
		n.Message = "derived from this TenantGateway (the HTTP-to-HTTPS redirect): no verdict needed"
	}
	if hosts, _, _ := unstructured.NestedStringSlice(route.Object, "spec", "hostnames"); len(hosts) > 0 {
		n.Notes = append(n.Notes, "hostnames: "+strings.Join(hosts, ", "))
	}
	parents, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	for _, p := range parents {
		m, ok := p.(map[string]any)
		if !ok || m["controllerName"] != gatewayv1alpha1.RouteConflictControllerName {
			continue
		}
		ref, _ := m["parentRef"].(map[string]any)
		if !refNames(ref, route.GetNamespace(), gwNamespace, gwName) {
			continue
		}
		conds, _ := m["conditions"].([]any)
		if c, ok := findIn(conds, "Accepted"); ok {
			n.Status, n.Reason, n.Message = c.Status, c.Reason, c.Message
		}
		break
	}
	return n
}
