package verdicts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

func route(kind, ns, name string, hostnames ...string) tenantgateway.RouteRef {
	return tenantgateway.RouteRef{Key: tenantgateway.RouteKey{Kind: kind, Namespace: ns, Name: name}, Hostnames: hostnames}
}

func solverRoute(ns, name string, hostnames ...string) tenantgateway.RouteRef {
	r := route(tenantgateway.KindHTTPRoute, ns, name, hostnames...)
	r.Labels = map[string]string{gatewayv1alpha1.LabelHTTP01Solver: "true"}
	return r
}

// summary renders verdicts as sorted "key: accepted" or
// "key: lost host to winner, ..." lines.
func summary(v map[tenantgateway.RouteKey]Verdict) []string {
	var out []string
	for k, vd := range v {
		line := k.String() + ": accepted"
		if !vd.Accepted {
			var parts []string
			for _, c := range vd.Conflicts {
				parts = append(parts, fmt.Sprintf("lost %s to %s", c.Hostname, c.Winner))
			}
			line = k.String() + ": " + strings.Join(parts, ", ")
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

func TestResolveConflicts(t *testing.T) {
	tests := []struct {
		name   string
		routes []tenantgateway.RouteRef
		want   []string
	}{
		{
			name: "a cozy-* namespace wins over a tenant namespace that sorts first",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-a", "dash", "dashboard.example.org"),
				route(tenantgateway.KindHTTPRoute, "cozy-dashboard", "dashboard", "dashboard.example.org"),
			},
			want: []string{
				"HTTPRoute cozy-dashboard/dashboard: accepted",
				"HTTPRoute tenant-a/dash: lost dashboard.example.org to HTTPRoute cozy-dashboard/dashboard",
			},
		},
		{
			name: "among tenants the smallest namespace wins, whatever the names",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-b", "a", "app.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "z", "app.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/z: accepted",
				"HTTPRoute tenant-b/a: lost app.example.org to HTTPRoute tenant-a/z",
			},
		},
		{
			name: "among cozy-* namespaces the smallest namespace wins",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "cozy-b", "r", "x.example.org"),
				route(tenantgateway.KindHTTPRoute, "cozy-a", "r", "x.example.org"),
			},
			want: []string{
				"HTTPRoute cozy-a/r: accepted",
				"HTTPRoute cozy-b/r: lost x.example.org to HTTPRoute cozy-a/r",
			},
		},
		{
			// Joined, "a-b/y" < "a/x" because '-' (0x2d) < '/' (0x2f); as
			// separate fields "a" < "a-b".
			name: "namespace and name compare as separate fields",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "a-b", "y", "app.example.org"),
				route(tenantgateway.KindHTTPRoute, "a", "x", "app.example.org"),
			},
			want: []string{
				"HTTPRoute a-b/y: lost app.example.org to HTTPRoute a/x",
				"HTTPRoute a/x: accepted",
			},
		},
		{
			name: "same-namespace routes share a hostname without conflict, and all beat another namespace",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-a", "api", "app.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "web", "app.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-b", "web", "app.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/api: accepted",
				"HTTPRoute tenant-a/web: accepted",
				"HTTPRoute tenant-b/web: lost app.example.org to HTTPRoute tenant-a/api",
			},
		},
		{
			name: "cert-manager solver routes are exempt: no verdict, and they win nothing",
			routes: []tenantgateway.RouteRef{
				solverRoute("cozy-cert-manager", "cm-acme-http-solver-abc", "app.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "app", "app.example.org"),
			},
			want: []string{"HTTPRoute tenant-a/app: accepted"},
		},
		{
			name: "hostnames compare case-insensitively; wildcards only with the same wildcard",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-a", "r", "App.Example.org", "*.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-b", "r", "app.example.org", "a.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-c", "r", "*.EXAMPLE.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost app.example.org to HTTPRoute tenant-a/r",
				"HTTPRoute tenant-c/r: lost *.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name: "a route winning one hostname and losing another is not accepted",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-b", "r", "mine.example.org", "shared.example.org", "also.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "r", "shared.example.org"),
				route(tenantgateway.KindHTTPRoute, "cozy-x", "r", "also.example.org"),
			},
			want: []string{
				"HTTPRoute cozy-x/r: accepted",
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost also.example.org to HTTPRoute cozy-x/r, lost shared.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name: "kinds take part: a TLSRoute and an HTTPRoute on one hostname conflict across namespaces",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindTLSRoute, "default", "kubernetes-api", "api.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "api", "api.example.org"),
				route(tenantgateway.KindHTTPRoute, "default", "kubernetes-api", "other.example.org"),
			},
			want: []string{
				"HTTPRoute default/kubernetes-api: accepted",
				"HTTPRoute tenant-a/api: lost api.example.org to TLSRoute default/kubernetes-api",
				"TLSRoute default/kubernetes-api: accepted",
			},
		},
		{
			name: "a route listed twice is one route with both hostname lists",
			routes: []tenantgateway.RouteRef{
				route(tenantgateway.KindHTTPRoute, "tenant-b", "r", "one.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-b", "r", "two.example.org"),
				route(tenantgateway.KindHTTPRoute, "tenant-a", "r", "two.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost two.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name:   "a route without hostnames is accepted",
			routes: []tenantgateway.RouteRef{route(tenantgateway.KindHTTPRoute, "tenant-a", "r")},
			want:   []string{"HTTPRoute tenant-a/r: accepted"},
		},
		{
			name: "nothing in, nothing out",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(ResolveConflicts(tt.routes))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("verdicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// The case from DESIGN.md: a joined "namespace/name" comparison picks the
// other route.
func TestJoinedComparisonWouldMisorder(t *testing.T) {
	a, ab := tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: "a", Name: "x"}, tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: "a-b", Name: "y"}
	if joined := ab.Namespace+"/"+ab.Name < a.Namespace+"/"+a.Name; !joined {
		t.Fatal("premise: the joined strings should rank a-b/y first")
	}
	v := ResolveConflicts([]tenantgateway.RouteRef{
		{Key: ab, Hostnames: []string{"app.example.org"}},
		{Key: a, Hostnames: []string{"app.example.org"}},
	})
	if !v[a].Accepted || v[ab].Accepted || v[ab].Conflicts[0].Winner != a {
		t.Fatalf("verdicts %+v: a/x must win", v)
	}
}

func TestVerdictMessages(t *testing.T) {
	v := ResolveConflicts([]tenantgateway.RouteRef{
		route(tenantgateway.KindHTTPRoute, "tenant-b", "web", "b.example.org", "a.example.org"),
		route(tenantgateway.KindHTTPRoute, "cozy-harbor", "harbor", "a.example.org"),
		route(tenantgateway.KindTLSRoute, "tenant-a", "db", "b.example.org"),
	})
	loser := v[tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: "tenant-b", Name: "web"}]
	wantMsg := "hostname conflict: a.example.org is served by HTTPRoute cozy-harbor/harbor; b.example.org is served by TLSRoute tenant-a/db." +
		" Routes in cozy-* namespaces take precedence, then the smallest namespace, then the smallest name: use another hostname"
	if loser.Accepted || loser.Reason != gatewayv1alpha1.ReasonHostnameConflict || loser.Message != wantMsg {
		t.Fatalf("loser verdict %+v\nwant message %q", loser, wantMsg)
	}
	winner := v[tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: "cozy-harbor", Name: "harbor"}]
	if !winner.Accepted || winner.Reason != "Accepted" || winner.Message == "" || winner.Conflicts != nil {
		t.Fatalf("winner verdict %+v", winner)
	}
}

// The verdicts do not depend on the order of the routes.
func TestResolveConflictsIsDeterministic(t *testing.T) {
	routes := []tenantgateway.RouteRef{
		route(tenantgateway.KindHTTPRoute, "tenant-b", "r1", "x.example.org", "y.example.org"),
		route(tenantgateway.KindHTTPRoute, "tenant-a", "r2", "y.example.org"),
		route(tenantgateway.KindTLSRoute, "cozy-z", "r3", "x.example.org"),
		route(tenantgateway.KindHTTPRoute, "tenant-a", "r0", "x.example.org"),
		route(tenantgateway.KindHTTPRoute, "a", "x", "z.example.org"),
		route(tenantgateway.KindHTTPRoute, "a-b", "y", "z.example.org"),
	}
	want := ResolveConflicts(routes)
	for i := range routes {
		rotated := append(slices.Clone(routes[i:]), routes[:i]...)
		slices.Reverse(rotated)
		got := ResolveConflicts(rotated)
		if !maps.EqualFunc(got, want, func(a, b Verdict) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Fatalf("order %d changed the verdicts:\n%v\nwant\n%v", i, summary(got), summary(want))
		}
	}
}
