package verdicts

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

func TestRewriteRouteParents(t *testing.T) {
	old := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	ref := gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root"))}
	refHTTP := gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root")), SectionName: ptr.To(gatewayv1.SectionName("http"))}
	otherGW := gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-other"))}
	entry := func(controller string, r gatewayv1.ParentReference, status metav1.ConditionStatus, reason string, ltt metav1.Time) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: r, ControllerName: gatewayv1.GatewayController(controller),
			Conditions: []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason, Message: "m-" + reason, ObservedGeneration: 2, LastTransitionTime: ltt}}}
	}
	ours := gatewayv1alpha1.RouteConflictControllerName
	cilium := entry("io.cilium/gateway-controller", ref, "True", "Accepted", old)
	envoy := entry("gateway.envoyproxy.io/gatewayclass-controller", ref, "True", "Accepted", old)
	envoyRefused := entry("gateway.envoyproxy.io/gatewayclass-controller", ref, "False", "NotAllowedByListeners", old)
	accepted := &metav1.Condition{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "m-Accepted", ObservedGeneration: 2}
	lost := &metav1.Condition{Type: "Accepted", Status: "False", Reason: "HostnameConflict", Message: "m-HostnameConflict", ObservedGeneration: 2}

	tests := []struct {
		name        string
		parents     []gatewayv1.RouteParentStatus
		refs        []gatewayv1.ParentReference
		cond        *metav1.Condition
		want        []gatewayv1.RouteParentStatus
		wantChanged bool
	}{
		{"add ours after others", []gatewayv1.RouteParentStatus{cilium}, []gatewayv1.ParentReference{ref}, lost,
			[]gatewayv1.RouteParentStatus{cilium, entry(ours, ref, "False", "HostnameConflict", now)}, true},
		{"unchanged keeps everything", []gatewayv1.RouteParentStatus{entry(ours, ref, "True", "Accepted", old), cilium},
			[]gatewayv1.ParentReference{ref}, accepted,
			[]gatewayv1.RouteParentStatus{entry(ours, ref, "True", "Accepted", old), cilium}, false},
		{"flip to lost gets a new transition time", []gatewayv1.RouteParentStatus{cilium, entry(ours, ref, "True", "Accepted", old)},
			[]gatewayv1.ParentReference{ref}, lost,
			[]gatewayv1.RouteParentStatus{cilium, entry(ours, ref, "False", "HostnameConflict", now)}, true},
		{"one entry per parentRef", nil, []gatewayv1.ParentReference{ref, refHTTP}, accepted,
			[]gatewayv1.RouteParentStatus{entry(ours, ref, "True", "Accepted", now), entry(ours, refHTTP, "True", "Accepted", now)}, true},
		{"detached: ours removed, other Gateways' kept", []gatewayv1.RouteParentStatus{entry(ours, ref, "True", "Accepted", old), entry(ours, otherGW, "True", "Accepted", old), cilium},
			nil, nil,
			[]gatewayv1.RouteParentStatus{entry(ours, otherGW, "True", "Accepted", old), cilium}, true},
		{"the last entry removed leaves an empty list", []gatewayv1.RouteParentStatus{entry(ours, ref, "True", "Accepted", old)}, nil, nil,
			[]gatewayv1.RouteParentStatus{}, true},
		{"detached and nothing of ours: no write", []gatewayv1.RouteParentStatus{cilium}, nil, nil,
			[]gatewayv1.RouteParentStatus{cilium}, false},
		// Envoy Gateway v1.9.1 merges status.parents by parentRef alone: its
		// write replaces our entry with a copy of its own.
		{"a copy another controller left in our place: kept once, ours back", []gatewayv1.RouteParentStatus{envoy, envoy},
			[]gatewayv1.ParentReference{ref}, accepted,
			[]gatewayv1.RouteParentStatus{envoy, entry(ours, ref, "True", "Accepted", now)}, true},
		{"copies collapse even when ours is as desired", []gatewayv1.RouteParentStatus{envoy, entry(ours, ref, "True", "Accepted", old), envoy, envoy},
			[]gatewayv1.ParentReference{ref}, accepted,
			[]gatewayv1.RouteParentStatus{envoy, entry(ours, ref, "True", "Accepted", old)}, true},
		{"entries of one controller that differ are all kept", []gatewayv1.RouteParentStatus{envoy, envoyRefused, entry(ours, ref, "True", "Accepted", old)},
			[]gatewayv1.ParentReference{ref}, accepted,
			[]gatewayv1.RouteParentStatus{envoy, envoyRefused, entry(ours, ref, "True", "Accepted", old)}, false},
		{"two implementations' entries for one parentRef are both kept", []gatewayv1.RouteParentStatus{cilium, envoy},
			[]gatewayv1.ParentReference{ref}, accepted,
			[]gatewayv1.RouteParentStatus{cilium, envoy, entry(ours, ref, "True", "Accepted", now)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := RewriteRouteParents(tt.parents, "tenant-a", "tenant-root", "cozystack", tt.refs, tt.cond, now)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if got == nil {
				t.Errorf("parents is nil; the API server requires the field")
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parents =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestRewriteRouteParentsCap(t *testing.T) {
	var full []gatewayv1.RouteParentStatus
	for i := range MaxRouteParents {
		full = append(full, gatewayv1.RouteParentStatus{ControllerName: "example.com/x",
			ParentRef: gatewayv1.ParentReference{Name: gatewayv1.ObjectName(fmt.Sprintf("gw-%d", i))}})
	}
	cond := &metav1.Condition{Type: "Accepted", Status: "False", Reason: "HostnameConflict"}
	got, changed := RewriteRouteParents(full, "tenant-a", "tenant-a", "cozystack", []gatewayv1.ParentReference{{Name: "cozystack"}}, cond, metav1.Now())
	if changed || len(got) != MaxRouteParents {
		t.Errorf("a full list must not lose others' entries: changed=%v len=%d", changed, len(got))
	}
}

func TestAcceptedCondition(t *testing.T) {
	c := AcceptedCondition(Verdict{Accepted: true}, 3)
	if c.Status != metav1.ConditionTrue || c.Reason != "Accepted" || c.ObservedGeneration != 3 {
		t.Errorf("accepted: %+v", c)
	}
	c = AcceptedCondition(Verdict{Reason: gatewayv1alpha1.ReasonHostnameConflict, Message: "x is claimed by y"}, 3)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonHostnameConflict || c.Message != "x is claimed by y" {
		t.Errorf("lost: %+v", c)
	}
}

// BenchmarkConflicts5000 measures deciding and rewriting the status of 5,000
// routes attached to one Gateway, a fifth of them in conflict.
func BenchmarkConflicts5000(b *testing.B) {
	routes := make([]tenantgateway.RouteRef, 5000)
	for i := range routes {
		ns := fmt.Sprintf("tenant-%04d", i)
		host := fmt.Sprintf("app-%d.example.org", i)
		if i%5 == 0 {
			host = fmt.Sprintf("app-%d.example.org", i+1) // claims its neighbour's hostname
		}
		routes[i] = tenantgateway.RouteRef{Key: tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: ns, Name: "web"}, Hostnames: []string{host}}
	}
	ref := []gatewayv1.ParentReference{{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root"))}}
	now := metav1.Now()
	b.ReportAllocs()
	for b.Loop() {
		verdicts := ResolveConflicts(routes)
		for _, r := range routes {
			c := AcceptedCondition(verdicts[r.Key], 1)
			RewriteRouteParents(nil, r.Key.Namespace, "tenant-root", "cozystack", ref, &c, now)
		}
	}
}

func TestWasRefused(t *testing.T) {
	ref := gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root"))}
	otherGW := gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-other"))}
	entry := func(controller string, r gatewayv1.ParentReference, status metav1.ConditionStatus) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: r, ControllerName: gatewayv1.GatewayController(controller),
			Conditions: []metav1.Condition{{Type: "Accepted", Status: status, Reason: "r"}}}
	}
	ours := gatewayv1alpha1.RouteConflictControllerName
	for _, tc := range []struct {
		name    string
		parents []gatewayv1.RouteParentStatus
		want    bool
	}{
		{"no status yet: a first verdict", nil, false},
		{"our acceptance", []gatewayv1.RouteParentStatus{entry(ours, ref, "True")}, false},
		{"our conflict verdict", []gatewayv1.RouteParentStatus{entry(ours, ref, "False")}, true},
		{"another implementation refused it", []gatewayv1.RouteParentStatus{entry("gateway.envoyproxy.io/gatewayclass-controller", ref, "False")}, false},
		{"our conflict verdict on another Gateway", []gatewayv1.RouteParentStatus{entry(ours, otherGW, "False")}, false},
		{"an entry of ours without Accepted", []gatewayv1.RouteParentStatus{{ParentRef: ref, ControllerName: gatewayv1.GatewayController(ours)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WasRefused(tc.parents, "tenant-a", "tenant-root", "cozystack"); got != tc.want {
				t.Errorf("WasRefused = %v, want %v", got, tc.want)
			}
		})
	}
}
