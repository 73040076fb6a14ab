// Package verdicts decides, for the routes attached to one TenantGateway's
// Gateway, which route owns each hostname claimed from more than one
// namespace (ResolveConflicts), and the status.parents entry route-conflicts
// writes on each route for its verdict (AcceptedCondition,
// RewriteRouteParents). Pure: no client, no I/O.
package verdicts

import (
	"fmt"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// HostnameConflict: Hostname is claimed by Winner, a route in another
// namespace that takes precedence.
type HostnameConflict struct {
	Hostname string
	Winner   tenantgateway.RouteKey
}

// Verdict on one route. Accepted is false when the route lost at least one
// hostname; Reason and Message are then those of its Accepted=False
// condition (HostnameConflict, naming each winner). A route that wins some
// hostnames and loses others is not accepted.
type Verdict struct {
	Accepted  bool
	Conflicts []HostnameConflict
	Reason    string
	Message   string
}

// ResolveConflicts decides, for routes attached to one Gateway, which route
// owns each hostname claimed from more than one namespace: a route in a
// cozy-* namespace first, then the smallest namespace, then the smallest
// name, then the kind. Namespace and name are compared as separate fields:
// comparing a joined "namespace/name" would rank "a-b/y" before "a/x"
// because '-' sorts before '/'.
//
// Hostnames compare case-insensitively and literally: a wildcard only
// conflicts with the same wildcard. Routes in the winner's own namespace are
// not in conflict (Gateway API merges them by path and headers). Routes
// labelled acme.cert-manager.io/http01-solver=true are exempt: they get no
// verdict, and the caller must leave their status alone. Every other route
// gets one; a key given twice is one route with the union of its
// hostnames.
func ResolveConflicts(routes []tenantgateway.RouteRef) map[tenantgateway.RouteKey]Verdict {
	hostnames := map[tenantgateway.RouteKey][]string{}
	exempt := map[tenantgateway.RouteKey]bool{}
	for _, r := range routes {
		hostnames[r.Key] = append(hostnames[r.Key], r.Hostnames...)
		if r.Labels[gatewayv1alpha1.LabelHTTP01Solver] == "true" {
			exempt[r.Key] = true
		}
	}

	claims := map[string][]tenantgateway.RouteKey{} // hostname → claimants
	for key, hs := range hostnames {
		if exempt[key] {
			continue
		}
		for _, h := range tenantgateway.NormalizeHostnames(hs) {
			claims[h] = append(claims[h], key)
		}
	}

	conflicts := map[tenantgateway.RouteKey][]HostnameConflict{}
	for h, keys := range claims {
		winner := slices.MinFunc(keys, comparePrecedence)
		for _, k := range keys {
			if k.Namespace != winner.Namespace {
				conflicts[k] = append(conflicts[k], HostnameConflict{Hostname: h, Winner: winner})
			}
		}
	}

	verdicts := make(map[tenantgateway.RouteKey]Verdict, len(hostnames))
	for key := range hostnames {
		if exempt[key] {
			continue
		}
		verdicts[key] = verdictFor(conflicts[key])
	}
	return verdicts
}

// comparePrecedence orders routes by who wins a hostname: the smallest wins.
func comparePrecedence(a, b tenantgateway.RouteKey) int {
	if ca, cb := isPlatformNamespace(a.Namespace), isPlatformNamespace(b.Namespace); ca != cb {
		if ca {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Kind, b.Kind)
}

// isPlatformNamespace: cozy-* namespaces hold cluster-admin-managed platform
// services.
func isPlatformNamespace(ns string) bool { return strings.HasPrefix(ns, "cozy-") }

func verdictFor(conflicts []HostnameConflict) Verdict {
	if len(conflicts) == 0 {
		return Verdict{Accepted: true, Reason: string(gatewayv1.RouteReasonAccepted),
			Message: "no route in another namespace takes precedence for its hostnames"}
	}
	slices.SortFunc(conflicts, func(a, b HostnameConflict) int { return strings.Compare(a.Hostname, b.Hostname) })
	parts := make([]string, len(conflicts))
	for i, c := range conflicts {
		parts[i] = fmt.Sprintf("%s is served by %s", c.Hostname, c.Winner)
	}
	return Verdict{
		Conflicts: conflicts,
		Reason:    gatewayv1alpha1.ReasonHostnameConflict,
		Message: "hostname conflict: " + strings.Join(parts, "; ") +
			". Routes in cozy-* namespaces take precedence, then the smallest namespace, then the smallest name: use another hostname",
	}
}
