package tenantgateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func route(kind, ns, name string, hostnames ...string) RouteRef {
	return RouteRef{Key: RouteKey{Kind: kind, Namespace: ns, Name: name}, Hostnames: hostnames}
}

func solverRoute(ns, name string, hostnames ...string) RouteRef {
	r := route(KindHTTPRoute, ns, name, hostnames...)
	r.Labels = map[string]string{gatewayv1alpha1.LabelHTTP01Solver: "true"}
	return r
}

// summary renders verdicts as sorted "key: accepted" or
// "key: lost host to winner, ..." lines.
func summary(v map[RouteKey]Verdict) []string {
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
		routes []RouteRef
		want   []string
	}{
		{
			name: "a cozy-* namespace wins over a tenant namespace that sorts first",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-a", "dash", "dashboard.example.org"),
				route(KindHTTPRoute, "cozy-dashboard", "dashboard", "dashboard.example.org"),
			},
			want: []string{
				"HTTPRoute cozy-dashboard/dashboard: accepted",
				"HTTPRoute tenant-a/dash: lost dashboard.example.org to HTTPRoute cozy-dashboard/dashboard",
			},
		},
		{
			name: "among tenants the smallest namespace wins, whatever the names",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-b", "a", "app.example.org"),
				route(KindHTTPRoute, "tenant-a", "z", "app.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/z: accepted",
				"HTTPRoute tenant-b/a: lost app.example.org to HTTPRoute tenant-a/z",
			},
		},
		{
			name: "among cozy-* namespaces the smallest namespace wins",
			routes: []RouteRef{
				route(KindHTTPRoute, "cozy-b", "r", "x.example.org"),
				route(KindHTTPRoute, "cozy-a", "r", "x.example.org"),
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
			routes: []RouteRef{
				route(KindHTTPRoute, "a-b", "y", "app.example.org"),
				route(KindHTTPRoute, "a", "x", "app.example.org"),
			},
			want: []string{
				"HTTPRoute a-b/y: lost app.example.org to HTTPRoute a/x",
				"HTTPRoute a/x: accepted",
			},
		},
		{
			name: "same-namespace routes share a hostname without conflict, and all beat another namespace",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-a", "api", "app.example.org"),
				route(KindHTTPRoute, "tenant-a", "web", "app.example.org"),
				route(KindHTTPRoute, "tenant-b", "web", "app.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/api: accepted",
				"HTTPRoute tenant-a/web: accepted",
				"HTTPRoute tenant-b/web: lost app.example.org to HTTPRoute tenant-a/api",
			},
		},
		{
			name: "cert-manager solver routes are exempt: no verdict, and they win nothing",
			routes: []RouteRef{
				solverRoute("cozy-cert-manager", "cm-acme-http-solver-abc", "app.example.org"),
				route(KindHTTPRoute, "tenant-a", "app", "app.example.org"),
			},
			want: []string{"HTTPRoute tenant-a/app: accepted"},
		},
		{
			name: "hostnames compare case-insensitively; wildcards only with the same wildcard",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-a", "r", "App.Example.org", "*.example.org"),
				route(KindHTTPRoute, "tenant-b", "r", "app.example.org", "a.example.org"),
				route(KindHTTPRoute, "tenant-c", "r", "*.EXAMPLE.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost app.example.org to HTTPRoute tenant-a/r",
				"HTTPRoute tenant-c/r: lost *.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name: "a route winning one hostname and losing another is not accepted",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-b", "r", "mine.example.org", "shared.example.org", "also.example.org"),
				route(KindHTTPRoute, "tenant-a", "r", "shared.example.org"),
				route(KindHTTPRoute, "cozy-x", "r", "also.example.org"),
			},
			want: []string{
				"HTTPRoute cozy-x/r: accepted",
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost also.example.org to HTTPRoute cozy-x/r, lost shared.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name: "kinds take part: a TLSRoute and an HTTPRoute on one hostname conflict across namespaces",
			routes: []RouteRef{
				route(KindTLSRoute, "default", "kubernetes-api", "api.example.org"),
				route(KindHTTPRoute, "tenant-a", "api", "api.example.org"),
				route(KindHTTPRoute, "default", "kubernetes-api", "other.example.org"),
			},
			want: []string{
				"HTTPRoute default/kubernetes-api: accepted",
				"HTTPRoute tenant-a/api: lost api.example.org to TLSRoute default/kubernetes-api",
				"TLSRoute default/kubernetes-api: accepted",
			},
		},
		{
			name: "a route listed twice is one route with both hostname lists",
			routes: []RouteRef{
				route(KindHTTPRoute, "tenant-b", "r", "one.example.org"),
				route(KindHTTPRoute, "tenant-b", "r", "two.example.org"),
				route(KindHTTPRoute, "tenant-a", "r", "two.example.org"),
			},
			want: []string{
				"HTTPRoute tenant-a/r: accepted",
				"HTTPRoute tenant-b/r: lost two.example.org to HTTPRoute tenant-a/r",
			},
		},
		{
			name:   "a route without hostnames is accepted",
			routes: []RouteRef{route(KindHTTPRoute, "tenant-a", "r")},
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
	a, ab := RouteKey{KindHTTPRoute, "a", "x"}, RouteKey{KindHTTPRoute, "a-b", "y"}
	if joined := ab.Namespace+"/"+ab.Name < a.Namespace+"/"+a.Name; !joined {
		t.Fatal("premise: the joined strings should rank a-b/y first")
	}
	v := ResolveConflicts([]RouteRef{
		{Key: ab, Hostnames: []string{"app.example.org"}},
		{Key: a, Hostnames: []string{"app.example.org"}},
	})
	if !v[a].Accepted || v[ab].Accepted || v[ab].Conflicts[0].Winner != a {
		t.Fatalf("verdicts %+v: a/x must win", v)
	}
}

func TestVerdictMessages(t *testing.T) {
	v := ResolveConflicts([]RouteRef{
		route(KindHTTPRoute, "tenant-b", "web", "b.example.org", "a.example.org"),
		route(KindHTTPRoute, "cozy-harbor", "harbor", "a.example.org"),
		route(KindTLSRoute, "tenant-a", "db", "b.example.org"),
	})
	loser := v[RouteKey{KindHTTPRoute, "tenant-b", "web"}]
	wantMsg := "hostname conflict: a.example.org is served by HTTPRoute cozy-harbor/harbor; b.example.org is served by TLSRoute tenant-a/db." +
		" Routes in cozy-* namespaces take precedence, then the smallest namespace, then the smallest name: use another hostname"
	if loser.Accepted || loser.Reason != gatewayv1alpha1.ReasonHostnameConflict || loser.Message != wantMsg {
		t.Fatalf("loser verdict %+v\nwant message %q", loser, wantMsg)
	}
	winner := v[RouteKey{KindHTTPRoute, "cozy-harbor", "harbor"}]
	if !winner.Accepted || winner.Reason != "Accepted" || winner.Message == "" || winner.Conflicts != nil {
		t.Fatalf("winner verdict %+v", winner)
	}
}

// The verdicts do not depend on the order of the routes.
func TestResolveConflictsIsDeterministic(t *testing.T) {
	routes := []RouteRef{
		route(KindHTTPRoute, "tenant-b", "r1", "x.example.org", "y.example.org"),
		route(KindHTTPRoute, "tenant-a", "r2", "y.example.org"),
		route(KindTLSRoute, "cozy-z", "r3", "x.example.org"),
		route(KindHTTPRoute, "tenant-a", "r0", "x.example.org"),
		route(KindHTTPRoute, "a", "x", "z.example.org"),
		route(KindHTTPRoute, "a-b", "y", "z.example.org"),
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
