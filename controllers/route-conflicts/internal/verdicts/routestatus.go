package verdicts

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// MaxRouteParents is the most status.parents entries a route may carry.
const MaxRouteParents = 32

// AcceptedCondition is the Accepted condition route-conflicts writes for a
// verdict: True, or False with reason HostnameConflict naming the winners.
func AcceptedCondition(v Verdict, generation int64) metav1.Condition {
	c := metav1.Condition{Type: string(gatewayv1.RouteConditionAccepted), ObservedGeneration: generation}
	if v.Accepted {
		c.Status, c.Reason = metav1.ConditionTrue, string(gatewayv1.RouteReasonAccepted)
		c.Message = "no route in another namespace claims its hostnames first"
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionFalse, v.Reason, v.Message
	return c
}

// RewriteRouteParents returns a route's status.parents with our entries for
// the Gateway gwNamespace/gwName (controllerName
// gateway.cozystack.io/tenantgateway-controller) replaced by one entry per
// parentRef in refs, each carrying cond; with cond nil, our entries for that
// Gateway are removed. Every other entry is kept as it is, in order. A
// condition whose status did not change keeps its lastTransitionTime (now
// otherwise). When the list would exceed MaxRouteParents, our new entries
// that do not fit are left out rather than anyone else's. An entry of another
// controller that is identical to an earlier one (parentRef, controllerName
// and conditions alike) is kept once: it says nothing the first does not, and
// Envoy Gateway v1.9.1, which merges status.parents by parentRef alone,
// replaces our entry with a copy of its own on each of its writes; without
// this the copies would pile up to the cap, one per write. changed is false
// (and parents returned as given) when our entries are already as desired
// and no copy was dropped.
func RewriteRouteParents(parents []gatewayv1.RouteParentStatus, routeNamespace, gwNamespace, gwName string,
	refs []gatewayv1.ParentReference, cond *metav1.Condition, now metav1.Time) ([]gatewayv1.RouteParentStatus, bool) {
	var others, ours []gatewayv1.RouteParentStatus
	copies := false
	for _, p := range parents {
		switch {
		case string(p.ControllerName) == gatewayv1alpha1.RouteConflictControllerName && tenantgateway.ParentRef(p.ParentRef).NamesGateway(routeNamespace, gwNamespace, gwName):
			ours = append(ours, p)
		case slices.ContainsFunc(others, func(o gatewayv1.RouteParentStatus) bool { return equality.Semantic.DeepEqual(o, p) }):
			copies = true
		default:
			others = append(others, p)
		}
	}
	var want []gatewayv1.RouteParentStatus
	if cond != nil {
		for _, ref := range refs {
			c := *cond
			c.LastTransitionTime = now
			for _, old := range ours {
				if equalParentRef(old.ParentRef, ref) {
					if o := meta.FindStatusCondition(old.Conditions, c.Type); o != nil && o.Status == c.Status {
						c.LastTransitionTime = o.LastTransitionTime
					}
				}
			}
			want = append(want, gatewayv1.RouteParentStatus{
				ParentRef:      ref,
				ControllerName: gatewayv1alpha1.RouteConflictControllerName,
				Conditions:     []metav1.Condition{c},
			})
		}
	}
	if room := MaxRouteParents - len(others); len(want) > room {
		want = want[:max(room, 0)]
	}
	if !copies && sameEntries(ours, want) {
		return parents, false
	}
	// Never nil: status.parents is required, an empty list is how a route
	// says no controller reports on it.
	return append(append(make([]gatewayv1.RouteParentStatus, 0, len(others)+len(want)), others...), want...), true
}

func equalParentRef(a, b gatewayv1.ParentReference) bool {
	return ptrEq(a.Group, b.Group) && ptrEq(a.Kind, b.Kind) && ptrEq(a.Namespace, b.Namespace) &&
		a.Name == b.Name && ptrEq(a.SectionName, b.SectionName) && ptrEq(a.Port, b.Port)
}

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameEntries compares our entries ignoring transition times.
func sameEntries(a, b []gatewayv1.RouteParentStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalParentRef(a[i].ParentRef, b[i].ParentRef) || len(a[i].Conditions) != len(b[i].Conditions) {
			return false
		}
		for j := range a[i].Conditions {
			x, y := a[i].Conditions[j], b[i].Conditions[j]
			if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message || x.ObservedGeneration != y.ObservedGeneration {
				return false
			}
		}
	}
	return true
}

// WasRefused reports whether parents carry an entry of ours for the Gateway
// gwNamespace/gwName whose Accepted condition is False: the route held a
// conflict verdict. An acceptance after one is a recovery, told as an event;
// a first acceptance is told by the route's status alone. Pure.
func WasRefused(parents []gatewayv1.RouteParentStatus, routeNamespace, gwNamespace, gwName string) bool {
	for _, p := range parents {
		if string(p.ControllerName) != gatewayv1alpha1.RouteConflictControllerName ||
			!tenantgateway.ParentRef(p.ParentRef).NamesGateway(routeNamespace, gwNamespace, gwName) {
			continue
		}
		if c := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil && c.Status == metav1.ConditionFalse {
			return true
		}
	}
	return false
}
