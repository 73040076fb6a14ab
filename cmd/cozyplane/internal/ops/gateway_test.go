package ops

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGatewayTree(t *testing.T) {
	tgw := obj(t, `
kind: TenantGateway
metadata: {name: cozystack, namespace: root, uid: u1}
spec: {apex: example.org, attachedNamespaces: [cozy-dash, cozy-none, cozy-other]}
status:
  conditions:
  - {type: Ready, status: "False", reason: Progressing, message: waiting for the Gateway}
  - {type: CertificatesReady, status: Unknown, reason: CertificatesNotReady, message: "1 of 1 not issued"}
  listeners:
  - {name: http, ready: true}
  - {name: https-dash-9fe89ea1, hostname: dash.example.org, ready: false, certificateName: cozystack-dash-9fe89ea1-tls, reason: ResolvedRefs, message: secret missing}
`)
	gw := obj(t, `
kind: Gateway
metadata: {name: cozystack, namespace: root}
status:
  conditions:
  - {type: Accepted, status: "True", reason: Accepted}
  - {type: Programmed, status: "False", reason: Invalid, message: a listener is invalid}
  listeners:
  - name: https-dash-9fe89ea1
    conditions:
    - {type: Programmed, status: "False", reason: Invalid}
    - {type: ResolvedRefs, status: "False", reason: InvalidCertificateRef, message: secret missing}
`)
	issuer := obj(t, `{kind: Issuer, metadata: {name: cozystack-gateway, namespace: root}, status: {conditions: [{type: Ready, status: "True", reason: ACMEAccountRegistered}]}}`)
	cert := obj(t, `{kind: Certificate, metadata: {name: cozystack-dash-9fe89ea1-tls, namespace: root}, spec: {dnsNames: [dash.example.org]}}`)
	route := func(s string) unstructured.Unstructured { return *obj(t, s) }
	routes := []unstructured.Unstructured{
		route(`
kind: HTTPRoute
metadata: {name: dashboard, namespace: cozy-dash}
spec: {hostnames: [dash.example.org], parentRefs: [{name: cozystack, namespace: root}]}
status:
  parents:
  - controllerName: io.cilium/gateway-controller
    parentRef: {name: cozystack, namespace: root}
    conditions: [{type: Accepted, status: "False", reason: NotAllowedByListeners}]
  - controllerName: gateway.cozystack.io/tenantgateway-controller
    parentRef: {name: cozystack, namespace: root}
    conditions: [{type: Accepted, status: "True", reason: Accepted, message: no conflict}]
`),
		route(`
kind: HTTPRoute
metadata: {name: a-thief, namespace: cozy-dash}
spec: {hostnames: [dash.example.org], parentRefs: [{name: cozystack, namespace: root}]}
status:
  parents:
  - controllerName: gateway.cozystack.io/tenantgateway-controller
    parentRef: {name: cozystack, namespace: root}
    conditions: [{type: Accepted, status: "False", reason: HostnameConflict, message: dash.example.org is claimed by cozy-dash/dashboard}]
`),
		route(`{kind: TLSRoute, metadata: {name: api, namespace: root}, spec: {parentRefs: [{name: cozystack}]}}`),
		route(`{kind: HTTPRoute, metadata: {name: cozystack-http-redirect, namespace: root, labels: {cozystack.io/gateway: cozystack}}, spec: {parentRefs: [{name: cozystack}]}}`),
		route(`{kind: HTTPRoute, metadata: {name: cm-acme-http-solver-x, namespace: root, labels: {acme.cert-manager.io/http01-solver: "true"}}, spec: {parentRefs: [{name: cozystack}]}}`),
	}
	got := plain(t, GatewayTree(GatewayTrace{
		TenantGateway: tgw, Gateway: gw, Issuer: issuer,
		Certificates: []unstructured.Unstructured{*cert},
		Namespaces: []NamespaceState{
			{Name: "root", Exists: true, Label: "root"},
			{Name: "cozy-dash", Exists: true, Label: "root"},
			{Name: "cozy-none"},
			{Name: "cozy-other", Exists: true, Label: "tenant-b"},
		},
		Routes: routes,
	}))
	want := `TenantGateway root/cozystack  Ready=False  Progressing: waiting for the Gateway
│   CertificatesReady=Unknown CertificatesNotReady: 1 of 1 not issued
├── Gateway root/cozystack  Programmed=False  Invalid: a listener is invalid
│   │   Accepted=True Accepted
│   ├── Listener http  Ready=True
│   └── Listener https-dash-9fe89ea1  Ready=False  ResolvedRefs: secret missing
│           certificate: cozystack-dash-9fe89ea1-tls
│           hostname: dash.example.org
│           Programmed=False Invalid
│           ResolvedRefs=False InvalidCertificateRef: secret missing
├── Issuer root/cozystack-gateway  Ready=True  ACMEAccountRegistered
├── Certificate root/cozystack-dash-9fe89ea1-tls  Ready=-
│       dnsNames: dash.example.org
├── Namespace root  Attached=True  namespace.cozystack.io/gateway=root: its routes may attach
├── Namespace cozy-dash  Attached=True  namespace.cozystack.io/gateway=root: its routes may attach
├── Namespace cozy-none  Attached=Unknown  NamespacesNotCreated: not created yet; labelled as soon as it is
├── Namespace cozy-other  Attached=False  NamespaceLabelConflict: labelled namespace.cozystack.io/gateway=tenant-b: it belongs to another tenant's gateway
├── HTTPRoute cozy-dash/a-thief  Accepted=False  HostnameConflict: dash.example.org is claimed by cozy-dash/dashboard
│       hostnames: dash.example.org
├── HTTPRoute cozy-dash/dashboard  Accepted=True  Accepted: no conflict
│       hostnames: dash.example.org
├── TLSRoute root/api  Accepted=-  no verdict yet
├── HTTPRoute root/cm-acme-http-solver-x  Accepted=-  cert-manager's HTTP-01 solver route: exempt from conflict verdicts
└── HTTPRoute root/cozystack-http-redirect  Accepted=-  derived from this TenantGateway (the HTTP-to-HTTPS redirect): no verdict needed
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGatewayTreeMissingObjects(t *testing.T) {
	tgw := obj(t, `{kind: TenantGateway, metadata: {name: g, namespace: ns1}, spec: {certMode: existingSecret, wildcardSecretRef: {name: wild}}}`)
	got := plain(t, GatewayTree(GatewayTrace{TenantGateway: tgw, GatewayErr: errors.New("the API server does not serve Gateway.gateway.networking.k8s.io")}))
	want := `TenantGateway ns1/g  Ready=-
├── Gateway ns1/g  Programmed=-  Unreadable: the API server does not serve Gateway.gateway.networking.k8s.io
└── Secret ns1/wild  Provided=-  certMode existingSecret: the wildcard certificate is provided, no Issuer
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Without the TenantGateway's listener status, the Gateway's spec.
	gw := obj(t, `{kind: Gateway, metadata: {name: g, namespace: ns1}, spec: {listeners: [{name: http}]}}`)
	got = plain(t, GatewayTree(GatewayTrace{TenantGateway: obj(t, `{kind: TenantGateway, metadata: {name: g, namespace: ns1}}`), Gateway: gw}))
	if want := "│   └── Listener http  Programmed=-\n└── Issuer ns1/g-gateway  Ready=-  NotFound: does not exist yet\n"; !strings.Contains(got, want) {
		t.Errorf("got\n%s", got)
	}
}

func TestNamesGateway(t *testing.T) {
	for _, tc := range []struct {
		ref  string
		want bool
	}{
		{`{name: gw}`, true}, // same namespace as the route
		{`{name: gw, namespace: root}`, true},
		{`{name: gw, namespace: other}`, false},
		{`{name: other}`, false},
		{`{name: gw, kind: Service}`, false},
		{`{name: gw, group: example.org}`, false},
		{`{name: gw, group: gateway.networking.k8s.io, kind: Gateway, sectionName: https}`, true},
	} {
		r := obj(t, `{kind: HTTPRoute, metadata: {name: r, namespace: root}, spec: {parentRefs: [`+tc.ref+`]}}`)
		if got := NamesGateway(r, "root", "gw"); got != tc.want {
			t.Errorf("%s: got %t", tc.ref, got)
		}
	}
}

func TestNamespaceNode(t *testing.T) {
	tests := []struct {
		owner  string
		ns     NamespaceState
		status string
		reason string
	}{
		{"tenant-alice", NamespaceState{Name: "tenant-alice", Exists: true, Label: "tenant-alice"}, "True", ""},
		// Upstream's chart lists the shared namespaces in a child tenant's
		// TenantGateway too; the root tenant's Gateway publishes them.
		{"tenant-alice", NamespaceState{Name: "cozy-dash", Exists: true, Label: "tenant-root"}, "True", "SharedNamespacesOnRoot"},
		// A tenant namespace labelled for the root is another tenant's.
		{"tenant-alice", NamespaceState{Name: "tenant-bob", Exists: true, Label: "tenant-root"}, "False", "NamespaceLabelConflict"},
		{"tenant-alice", NamespaceState{Name: "cozy-dash", Exists: true, Label: "tenant-bob"}, "False", "NamespaceLabelConflict"},
		{"tenant-alice", NamespaceState{Name: "cozy-dash", Exists: true}, "False", ""},
		{"tenant-alice", NamespaceState{Name: "cozy-dash"}, "Unknown", "NamespacesNotCreated"},
	}
	for _, tt := range tests {
		n := namespaceNode(tt.owner, tt.ns)
		if n.Status != tt.status || n.Reason != tt.reason {
			t.Errorf("namespaceNode(%s, %+v) = %s/%s (%s), want %s/%s", tt.owner, tt.ns, n.Status, n.Reason, n.Message, tt.status, tt.reason)
		}
	}
}
