package gateway

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// describe renders a listener on one line, every field that matters.
func describe(l gatewayv1.Listener) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d/%s", l.Name, l.Port, l.Protocol)
	if l.Hostname != nil {
		fmt.Fprintf(&b, " %s", *l.Hostname)
	}
	if l.TLS != nil {
		fmt.Fprintf(&b, " %s", *l.TLS.Mode)
		for _, r := range l.TLS.CertificateRefs {
			fmt.Fprintf(&b, " secret=%s", r.Name)
		}
	}
	ar := l.AllowedRoutes
	for _, k := range ar.Kinds {
		fmt.Fprintf(&b, " kind=%s/%s", *k.Group, k.Kind)
	}
	fmt.Fprintf(&b, " from=%s", *ar.Namespaces.From)
	sel := ar.Namespaces.Selector
	for k, v := range sel.MatchLabels {
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	for _, e := range sel.MatchExpressions {
		fmt.Fprintf(&b, " %s %s %v", e.Key, e.Operator, e.Values)
	}
	return b.String()
}

const (
	httpLine = "http 80/HTTP kind=gateway.networking.k8s.io/HTTPRoute from=Selector kubernetes.io/metadata.name In [cozy-cert-manager tenant-root]"
	// Every port-443 listener admits both kinds (Cilium merges the
	// listeners of one port and drops HTTPRoutes when their kinds differ).
	kinds443  = " kind=gateway.networking.k8s.io/HTTPRoute kind=gateway.networking.k8s.io/TLSRoute"
	httpsTail = kinds443 + " from=Selector namespace.cozystack.io/gateway=tenant-root"
	tlsTail   = " Passthrough" + kinds443 + " from=Selector namespace.cozystack.io/gateway=tenant-root"
	// One kind per protocol (any implementation but Cilium).
	httpsOnlyTail = " kind=gateway.networking.k8s.io/HTTPRoute from=Selector namespace.cozystack.io/gateway=tenant-root"
	tlsOnlyTail   = " Passthrough kind=gateway.networking.k8s.io/TLSRoute from=Selector namespace.cozystack.io/gateway=tenant-root"
)

var defaultTLSLines = []string{
	"tls-api 443/TLS api.example.org" + tlsTail,
	"tls-cdi-uploadproxy 443/TLS cdi-uploadproxy.example.org" + tlsTail,
	"tls-vm-exportproxy 443/TLS vm-exportproxy.example.org" + tlsTail,
}

func baseInput(mode gatewayv1alpha1.CertMode) ListenersInput {
	return ListenersInput{
		TenantGateway:          "cozystack",
		Namespace:              "tenant-root",
		Apex:                   "example.org",
		CertMode:               mode,
		TLSPassthroughServices: []string{"api", "vm-exportproxy", "cdi-uploadproxy"}, // as the gateway chart lists them
	}
}

func TestDesiredListeners(t *testing.T) {
	tests := []struct {
		name         string
		in           func(*ListenersInput)
		want         []string
		wantRejected []string
	}{
		{
			name: "http01: one listener per acceptable route hostname",
			in: func(in *ListenersInput) {
				in.RouteHostnames = []string{
					"harbor.example.org", "Dashboard.example.org", "harbor.example.org", "harbor.alice.example.org",
					"*.example.org", "api.example.org", "harbor.example.com", "",
				}
				in.ChildApexes = []string{"alice.example.org"}
			},
			want: append([]string{
				httpLine,
				"https-dashboard-dfe8b0e4 443/HTTPS dashboard.example.org Terminate secret=cozystack-dashboard-dfe8b0e4-tls" + httpsTail,
				"https-harbor-45348fe9 443/HTTPS harbor.alice.example.org Terminate secret=cozystack-harbor-45348fe9-tls" + httpsTail,
				"https-harbor-91fb3185 443/HTTPS harbor.example.org Terminate secret=cozystack-harbor-91fb3185-tls" + httpsTail,
			}, defaultTLSLines...),
			wantRejected: []string{
				"*.example.org " + gatewayv1alpha1.ReasonWildcardHostname,
				"api.example.org " + gatewayv1alpha1.ReasonReservedHostname,
				"harbor.example.com " + gatewayv1alpha1.ReasonHostnameOutsideApex,
			},
		},
		{
			name: "http01: two hostnames with the same first label and hash, the later one is left out",
			in: func(in *ListenersInput) {
				in.RouteHostnames = []string{"app.n100065.example.org", "app.n5313.example.org"}
				in.TLSPassthroughServices = nil
			},
			want: []string{
				httpLine,
				"https-app-a643cfae 443/HTTPS app.n100065.example.org Terminate secret=cozystack-app-a643cfae-tls" + httpsTail,
			},
			wantRejected: []string{"app.n5313.example.org " + gatewayv1alpha1.ReasonListenerNameCollision},
		},
		{
			name: "http01 without routes: http and passthrough only",
			in:   func(*ListenersInput) {},
			want: append([]string{httpLine}, defaultTLSLines...),
		},
		{
			name: "dns01: apex, wildcard and one wildcard per child, one Secret",
			in: func(in *ListenersInput) {
				in.CertMode = gatewayv1alpha1.CertModeDNS01
				in.ChildApexes = []string{"bob.example.org", "alice.example.org", "ALICE.example.org"}
				in.RouteHostnames = []string{"harbor.example.org", "harbor.alice.example.org", "a.b.example.org", "api.example.org"}
			},
			want: append([]string{
				httpLine,
				"https 443/HTTPS *.example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
				"https-apex 443/HTTPS example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
				"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
				"https-child-bob-" + names.HostnameHash("bob.example.org") + " 443/HTTPS *.bob.example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
			}, defaultTLSLines...),
			wantRejected: []string{
				"a.b.example.org " + gatewayv1alpha1.ReasonHostnameNotCovered,
				"api.example.org " + gatewayv1alpha1.ReasonReservedHostname,
			},
		},
		{
			name: "dns01: a child apex outside the apex gets no listener",
			in: func(in *ListenersInput) {
				in.CertMode = gatewayv1alpha1.CertModeDNS01
				in.ChildApexes = []string{"customer1.example", "example.org"}
				in.TLSPassthroughServices = []string{}
			},
			want: []string{
				httpLine,
				"https 443/HTTPS *.example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
				"https-apex 443/HTTPS example.org Terminate secret=cozystack-gateway-tls" + httpsTail,
			},
			wantRejected: []string{"customer1.example " + gatewayv1alpha1.ReasonHostnameOutsideApex},
		},
		{
			name: "dns01: a child apex too long for its wildcard gets no listener",
			in: func(in *ListenersInput) {
				in.CertMode = gatewayv1alpha1.CertModeDNS01
				in.Apex = strings.Repeat("a.", 110) + "org"
				in.ChildApexes = []string{strings.Repeat("c.", 15) + in.Apex}
				in.TLSPassthroughServices = nil
				in.Namespace = "cozy-cert-manager"
			},
			want: []string{
				"http 80/HTTP kind=gateway.networking.k8s.io/HTTPRoute from=Selector kubernetes.io/metadata.name In [cozy-cert-manager]",
				"https 443/HTTPS *." + strings.Repeat("a.", 110) + "org Terminate secret=cozystack-gateway-tls" + kinds443 + " from=Selector namespace.cozystack.io/gateway=cozy-cert-manager",
				"https-apex 443/HTTPS " + strings.Repeat("a.", 110) + "org Terminate secret=cozystack-gateway-tls" + kinds443 + " from=Selector namespace.cozystack.io/gateway=cozy-cert-manager",
			},
			wantRejected: []string{strings.Repeat("c.", 15) + strings.Repeat("a.", 110) + "org " + gatewayv1alpha1.ReasonInvalidHostname},
		},
		{
			name: "existingSecret: the wildcard listeners serve the user's Secret",
			in: func(in *ListenersInput) {
				in.CertMode = gatewayv1alpha1.CertModeExistingSecret
				in.WildcardSecretName = "my-wildcard"
				in.ChildApexes = []string{"alice.example.org"}
				in.TLSPassthroughServices = []string{"api"}
			},
			want: []string{
				httpLine,
				"https 443/HTTPS *.example.org Terminate secret=my-wildcard" + httpsTail,
				"https-apex 443/HTTPS example.org Terminate secret=my-wildcard" + httpsTail,
				"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org Terminate secret=my-wildcard" + httpsTail,
				"tls-api 443/TLS api.example.org" + tlsTail,
			},
		},
		{
			name: "owner namespace cozy-cert-manager is listed once on port 80",
			in: func(in *ListenersInput) {
				in.Namespace = "cozy-cert-manager"
				in.TLSPassthroughServices = nil
			},
			want: []string{"http 80/HTTP kind=gateway.networking.k8s.io/HTTPRoute from=Selector kubernetes.io/metadata.name In [cozy-cert-manager]"},
		},
		{
			name: "cert-manager in another namespace (a stock install) is the one port 80 admits",
			in: func(in *ListenersInput) {
				in.CertManagerNamespace = "cert-manager"
				in.TLSPassthroughServices = nil
			},
			want: []string{"http 80/HTTP kind=gateway.networking.k8s.io/HTTPRoute from=Selector kubernetes.io/metadata.name In [cert-manager tenant-root]"},
		},
		{
			name: "per protocol (not Cilium), http01: HTTPS listeners admit HTTPRoutes, passthrough ones TLSRoutes",
			in: func(in *ListenersInput) {
				in.RouteKinds = RouteKindsPerProtocol
				in.RouteHostnames = []string{"harbor.example.org"}
			},
			want: []string{
				httpLine,
				"https-harbor-91fb3185 443/HTTPS harbor.example.org Terminate secret=cozystack-harbor-91fb3185-tls" + httpsOnlyTail,
				"tls-api 443/TLS api.example.org" + tlsOnlyTail,
				"tls-cdi-uploadproxy 443/TLS cdi-uploadproxy.example.org" + tlsOnlyTail,
				"tls-vm-exportproxy 443/TLS vm-exportproxy.example.org" + tlsOnlyTail,
			},
		},
		{
			name: "per protocol (not Cilium), dns01: the wildcard, apex and child listeners admit HTTPRoutes",
			in: func(in *ListenersInput) {
				in.RouteKinds = RouteKindsPerProtocol
				in.CertMode = gatewayv1alpha1.CertModeDNS01
				in.ChildApexes = []string{"alice.example.org"}
				in.TLSPassthroughServices = []string{"api"}
			},
			want: []string{
				httpLine,
				"https 443/HTTPS *.example.org Terminate secret=cozystack-gateway-tls" + httpsOnlyTail,
				"https-apex 443/HTTPS example.org Terminate secret=cozystack-gateway-tls" + httpsOnlyTail,
				"https-child-alice-cf290f3a 443/HTTPS *.alice.example.org Terminate secret=cozystack-gateway-tls" + httpsOnlyTail,
				"tls-api 443/TLS api.example.org" + tlsOnlyTail,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(gatewayv1alpha1.CertModeHTTP01)
			tt.in(&in)
			listeners, rejected, err := DesiredListeners(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range listeners {
				got = append(got, describe(l))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("listeners:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var gotRejected []string
			for _, r := range rejected {
				gotRejected = append(gotRejected, r.Hostname+" "+r.Reason)
			}
			if !slices.Equal(gotRejected, tt.wantRejected) {
				t.Errorf("rejected = %v, want %v", gotRejected, tt.wantRejected)
			}
			assertListenerInvariants(t, listeners, in.RouteKinds)
		})
	}
}

// assertListenerInvariants checks what Gateway API and our admission layers
// require of any listener set we produce.
func assertListenerInvariants(t *testing.T, listeners []gatewayv1.Listener, policy RouteKinds) {
	t.Helper()
	if len(listeners) > MaxListeners {
		t.Errorf("%d listeners", len(listeners))
	}
	seen := map[gatewayv1.SectionName]bool{}
	triples := map[string]bool{}
	var httpsKinds []gatewayv1.RouteGroupKind
	for i, l := range listeners {
		if errs := validation.IsDNS1123Label(string(l.Name)); len(errs) > 0 {
			t.Errorf("listener name %q: %v", l.Name, errs)
		}
		if seen[l.Name] {
			t.Errorf("duplicate listener name %q", l.Name)
		}
		seen[l.Name] = true
		triple := fmt.Sprintf("%d/%s/%s", l.Port, l.Protocol, ptr.Deref(l.Hostname, ""))
		if triples[triple] {
			t.Errorf("duplicate port/protocol/hostname %s", triple)
		}
		triples[triple] = true
		if i > 0 && listeners[i-1].Name >= l.Name {
			t.Errorf("listeners not sorted: %q before %q", listeners[i-1].Name, l.Name)
		}
		// Wildcards only on the fixed wildcard-mode listeners.
		if l.Hostname != nil && strings.Contains(string(*l.Hostname), "*") &&
			l.Name != names.ListenerHTTPS && !strings.HasPrefix(string(l.Name), "https-child-") {
			t.Errorf("wildcard hostname on listener %q", l.Name)
		}
		// Per protocol, each listener admits the one kind its protocol
		// carries.
		if l.Port == 443 && policy == RouteKindsPerProtocol {
			want := map[gatewayv1.ProtocolType]gatewayv1.Kind{gatewayv1.HTTPSProtocolType: tenantgateway.KindHTTPRoute, gatewayv1.TLSProtocolType: tenantgateway.KindTLSRoute}[l.Protocol]
			if k := l.AllowedRoutes.Kinds; len(k) != 1 || k[0].Kind != want {
				t.Errorf("listener %q (%s) admits %v, want only %s", l.Name, l.Protocol, k, want)
			}
		}
		// Shared, every port-443 listener, HTTPS or passthrough, admits the
		// same kinds: HTTPRoute and TLSRoute.
		if l.Port == 443 && policy == RouteKindsShared443 {
			if httpsKinds == nil {
				httpsKinds = l.AllowedRoutes.Kinds
				if len(httpsKinds) != 2 || httpsKinds[0].Kind != tenantgateway.KindHTTPRoute || httpsKinds[1].Kind != tenantgateway.KindTLSRoute {
					t.Errorf("listener %q admits %v, want HTTPRoute and TLSRoute", l.Name, httpsKinds)
				}
			} else if !reflect.DeepEqual(httpsKinds, l.AllowedRoutes.Kinds) {
				t.Errorf("listener %q admits %v, other port-443 listeners %v", l.Name, l.AllowedRoutes.Kinds, httpsKinds)
			}
		}
	}
}

func TestDesiredListenersIsDeterministic(t *testing.T) {
	in := baseInput(gatewayv1alpha1.CertModeHTTP01)
	for i := range 20 {
		in.RouteHostnames = append(in.RouteHostnames, fmt.Sprintf("app%d.example.org", i), fmt.Sprintf("*.w%d.example.org", i))
	}
	want, wantRejected, err := DesiredListeners(in)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		shuffled := in
		shuffled.RouteHostnames = slices.Clone(in.RouteHostnames)
		r.Shuffle(len(shuffled.RouteHostnames), func(i, j int) {
			shuffled.RouteHostnames[i], shuffled.RouteHostnames[j] = shuffled.RouteHostnames[j], shuffled.RouteHostnames[i]
		})
		shuffled.TLSPassthroughServices = []string{"vm-exportproxy", "cdi-uploadproxy", "api"}
		got, gotRejected, err := DesiredListeners(shuffled)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotRejected, wantRejected) {
			t.Fatal("the order of the input changed the output")
		}
	}
}

// Listeners share no pointers: a caller editing one (or the API server
// defaulting one) cannot change another.
func TestDesiredListenersShareNothing(t *testing.T) {
	in := baseInput(gatewayv1alpha1.CertModeDNS01)
	listeners, _, err := DesiredListeners(in)
	if err != nil {
		t.Fatal(err)
	}
	listeners[1].AllowedRoutes.Namespaces.Selector.MatchLabels[gatewayv1alpha1.LabelNamespaceGateway] = "changed"
	*listeners[1].AllowedRoutes.Kinds[0].Group = "changed"
	*listeners[1].TLS.CertificateRefs[0].Kind = "changed"
	for _, l := range listeners[2:] {
		if strings.Contains(describe(l), "changed") {
			t.Fatalf("listener %q changed with another: %s", l.Name, describe(l))
		}
	}
}

func TestDesiredListenersTooMany(t *testing.T) {
	hosts := func(n int) []string {
		var h []string
		for i := range n {
			h = append(h, fmt.Sprintf("app%d.example.org", i))
		}
		return h
	}
	children := func(n int) []string {
		var c []string
		for i := range n {
			c = append(c, fmt.Sprintf("t%d.example.org", i))
		}
		return c
	}
	tests := []struct {
		name      string
		mode      gatewayv1alpha1.CertMode
		hosts     []string
		children  []string
		wantCount int // 0: no error
		wantHint  string
	}{
		// http + 60 + 3 passthrough = 64: the most Gateway API allows.
		{name: "http01 at the limit", mode: gatewayv1alpha1.CertModeHTTP01, hosts: hosts(60)},
		{name: "http01 past the limit", mode: gatewayv1alpha1.CertModeHTTP01, hosts: hosts(61), wantCount: 65, wantHint: "switch to certMode dns01"},
		// Rejected hostnames do not count.
		{name: "http01, rejected hostnames do not count", mode: gatewayv1alpha1.CertModeHTTP01, hosts: append(hosts(60), "*.example.org", "x.example.com")},
		// http + https + https-apex + 58 children + 3 passthrough = 64.
		{name: "dns01 at the limit", mode: gatewayv1alpha1.CertModeDNS01, hosts: hosts(200), children: children(58)},
		{name: "dns01 past the limit", mode: gatewayv1alpha1.CertModeDNS01, children: children(59), wantCount: 65, wantHint: "inheriting child apex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(tt.mode)
			in.RouteHostnames, in.ChildApexes = tt.hosts, tt.children
			listeners, _, err := DesiredListeners(in)
			if tt.wantCount == 0 {
				if err != nil || len(listeners) != MaxListeners {
					t.Fatalf("got %d listeners, err %v; want %d", len(listeners), err, MaxListeners)
				}
				return
			}
			var tooMany *TooManyListenersError
			if !errors.As(err, &tooMany) {
				t.Fatalf("err = %v, want *TooManyListenersError", err)
			}
			if tooMany.Count != tt.wantCount || listeners != nil {
				t.Fatalf("count %d, %d listeners; want count %d and none", tooMany.Count, len(listeners), tt.wantCount)
			}
			if !strings.Contains(err.Error(), tt.wantHint) || !strings.Contains(err.Error(), fmt.Sprint(tt.wantCount)) {
				t.Fatalf("message %q lacks %q or the count", err, tt.wantHint)
			}
			if reason := reconcileerr.Reason(err, ""); reason != gatewayv1alpha1.ReasonTooManyListeners {
				t.Fatalf("reason %q", reason)
			}
		})
	}
}

func TestDesiredListenersSpecErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        func(*ListenersInput)
		wantField string
	}{
		{"existingSecret without a Secret", func(in *ListenersInput) { in.CertMode = gatewayv1alpha1.CertModeExistingSecret }, "wildcardSecretRef"},
		{"unknown mode", func(in *ListenersInput) { in.CertMode = "tls-alpn01" }, "certMode"},
		{"empty mode (defaults are the caller's job)", func(in *ListenersInput) { in.CertMode = "" }, "certMode"},
		{"invalid apex", func(in *ListenersInput) { in.Apex = "exa_mple.org" }, "apex"},
		{"empty apex", func(in *ListenersInput) { in.Apex = "" }, "apex"},
		{"apex too long for *.<apex>", func(in *ListenersInput) { in.Apex = strings.Repeat("a.", 125) + "org" }, "apex"},
		{"invalid passthrough service", func(in *ListenersInput) { in.TLSPassthroughServices = []string{"API"} }, "tlsPassthroughServices"},
		{"passthrough service too long for a listener name", func(in *ListenersInput) {
			in.TLSPassthroughServices = []string{strings.Repeat("s", 60)}
		}, "tlsPassthroughServices"},
		{"passthrough hostname too long", func(in *ListenersInput) {
			in.Apex = strings.Repeat("a.", 110) + "org"
			in.TLSPassthroughServices = []string{strings.Repeat("s", 40)}
		}, "tlsPassthroughServices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput(gatewayv1alpha1.CertModeHTTP01)
			tt.in(&in)
			_, _, err := DesiredListeners(in)
			var specErr *tenantgateway.SpecError
			if !errors.As(err, &specErr) || specErr.Field != tt.wantField {
				t.Fatalf("err = %v, want a tenantgateway.SpecError on %s", err, tt.wantField)
			}
			if reason := reconcileerr.Reason(err, ""); reason != gatewayv1alpha1.ReasonInvalidSpec {
				t.Fatalf("reason %q", reason)
			}
		})
	}
}

func TestNewListenersInput(t *testing.T) {
	tgw := &gatewayv1alpha1.TenantGateway{
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: "tenant-root"},
		Spec:       gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org"},
	}
	// No tlsPassthroughServices means no passthrough listener: the CRD has
	// no default, as upstream's (its chart lists the services).
	in := NewListenersInput(tgw, []string{"a.example.org"}, []string{"alice.example.org"})
	want := ListenersInput{
		TenantGateway:  "cozystack",
		Namespace:      "tenant-root",
		Apex:           "example.org",
		CertMode:       gatewayv1alpha1.CertModeHTTP01,
		RouteHostnames: []string{"a.example.org"},
		ChildApexes:    []string{"alice.example.org"},
	}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("got %+v\nwant %+v", in, want)
	}
	tgw.Spec.CertMode = gatewayv1alpha1.CertModeExistingSecret
	tgw.Spec.WildcardSecretRef = &corev1.LocalObjectReference{Name: "mine"}
	tgw.Spec.TLSPassthroughServices = []string{"api"}
	in = NewListenersInput(tgw, nil, nil)
	if in.CertMode != gatewayv1alpha1.CertModeExistingSecret || in.WildcardSecretName != "mine" || !reflect.DeepEqual(in.TLSPassthroughServices, []string{"api"}) {
		t.Fatalf("got %+v", in)
	}
}

func TestRouteKindsFor(t *testing.T) {
	tests := []struct {
		name           string
		controllerName string
		found          bool
		want           RouteKinds
	}{
		{"Cilium keeps HTTPRoute and TLSRoute on every port-443 listener", CiliumControllerName, true, RouteKindsShared443},
		{"Envoy Gateway: one kind per protocol", "gateway.envoyproxy.io/gatewayclass-controller", true, RouteKindsPerProtocol},
		{"any other implementation: one kind per protocol", "example.net/gateway", true, RouteKindsPerProtocol},
		{"a near miss of Cilium's name is another implementation", "io.cilium/gateway-controller-2", true, RouteKindsPerProtocol},
		{"no GatewayClass: the default class's (cilium) kinds", "", false, RouteKindsShared443},
		{"a GatewayClass not found, whatever name was read", "example.net/gateway", false, RouteKindsShared443},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RouteKindsFor(tt.controllerName, tt.found); got != tt.want {
				t.Errorf("RouteKindsFor(%q, %v) = %v, want %v", tt.controllerName, tt.found, got, tt.want)
			}
		})
	}
}
