package certs

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// certLines renders each Certificate as "name secret=... [per-listener] dnsNames".
func certLines(certs []cmv1.Certificate) []string {
	var out []string
	for _, c := range certs {
		line := c.Name + " secret=" + c.Spec.SecretName
		if c.Labels[gatewayv1alpha1.LabelPerListenerCert] == "true" {
			line += " per-listener"
		}
		out = append(out, line+" "+strings.Join(c.Spec.DNSNames, ","))
	}
	return out
}

// The listeners below are those gateway-listeners writes on the Gateway of
// the TenantGateway cozystack in tenant-root (apex example.org, the
// passthrough service api), written out: the port-80 listener, the HTTPS
// listeners of the certMode with the Secrets they serve, and a passthrough
// listener. allowedRoutes are left out: no Certificate depends on them.

// plainListener is the port-80 listener.
func plainListener() gatewayv1.Listener {
	return gatewayv1.Listener{Name: names.ListenerHTTP, Port: 80, Protocol: gatewayv1.HTTPProtocolType}
}

// terminatingListener serves hostname over HTTPS with the Secret secret of
// tenant-root.
func terminatingListener(name, hostname, secret string) gatewayv1.Listener {
	return gatewayv1.Listener{
		Name: gatewayv1.SectionName(name), Hostname: ptr.To(gatewayv1.Hostname(hostname)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{{
			Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Secret")), Name: gatewayv1.ObjectName(secret)}}},
	}
}

// passingListener passes TLS for api.example.org through.
func passingListener() gatewayv1.Listener {
	return gatewayv1.Listener{
		Name: gatewayv1.SectionName(names.PassthroughListener("api")), Hostname: ptr.To(gatewayv1.Hostname(names.PassthroughHostname("api", "example.org"))),
		Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)},
	}
}

// http01Listeners: one HTTPS listener per hostname, each serving the Secret
// of its own Certificate.
func http01Listeners(hostnames ...string) []gatewayv1.Listener {
	l := []gatewayv1.Listener{plainListener(), passingListener()}
	for _, h := range hostnames {
		l = append(l, terminatingListener(names.PerHostListener(h), h, names.PerListenerCertificate("cozystack", h)))
	}
	return sortedListeners(l)
}

// sharedSecretListeners: *.example.org, example.org and *.<child> for each child
// apex, all serving secret (dns01 and existingSecret).
func sharedSecretListeners(secret string, childApexes ...string) []gatewayv1.Listener {
	l := []gatewayv1.Listener{plainListener(), passingListener(),
		terminatingListener(names.ListenerHTTPS, "*.example.org", secret), terminatingListener(names.ListenerHTTPSApex, "example.org", secret)}
	for _, c := range childApexes {
		l = append(l, terminatingListener(names.ChildListener(c), "*."+c, secret))
	}
	return sortedListeners(l)
}

func sortedListeners(l []gatewayv1.Listener) []gatewayv1.Listener {
	slices.SortFunc(l, func(a, b gatewayv1.Listener) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return l
}

func TestDesiredCertificates(t *testing.T) {
	// The wildcard route hostname gets no listener with http01.
	http01 := http01Listeners("dashboard.example.org", "harbor.example.org")
	dns01 := sharedSecretListeners("cozystack-gateway-tls", "alice.example.org", "bob.alice.example.org")
	existing := sharedSecretListeners("cozystack-gateway-tls") // the user's, despite the name
	foreign := []gatewayv1.Listener{
		terminatingListener("https-other", "other.example.org", "someone-elses-secret"),
		// Our naming, but for another hostname than the listener's.
		terminatingListener("https-x", "x.example.org", names.PerListenerCertificate("cozystack", "y.example.org")),
		// Our name, but a Secret in another namespace.
		func() gatewayv1.Listener {
			l := terminatingListener("https-ns", "ns.example.org", names.PerListenerCertificate("cozystack", "ns.example.org"))
			l.TLS.CertificateRefs[0].Namespace = ptr.To(gatewayv1.Namespace("elsewhere"))
			return l
		}(),
		// Passthrough and HTTP listeners never need certificates.
		passingListener(),
		plainListener(),
	}
	tests := []struct {
		name      string
		mode      gatewayv1alpha1.CertMode
		listeners []gatewayv1.Listener
		want      []string
	}{
		{
			name:      "http01: one per HTTPS listener, for exactly its hostname",
			mode:      gatewayv1alpha1.CertModeHTTP01,
			listeners: http01,
			want: []string{
				"cozystack-dashboard-dfe8b0e4-tls secret=cozystack-dashboard-dfe8b0e4-tls per-listener dashboard.example.org",
				"cozystack-harbor-91fb3185-tls secret=cozystack-harbor-91fb3185-tls per-listener harbor.example.org",
			},
		},
		{
			name:      "dns01: one wildcard certificate with every apex and its wildcard",
			mode:      gatewayv1alpha1.CertModeDNS01,
			listeners: dns01,
			want: []string{
				"cozystack-gateway-tls secret=cozystack-gateway-tls example.org,*.example.org,alice.example.org,*.alice.example.org,bob.alice.example.org,*.bob.alice.example.org",
			},
		},
		{
			name:      "existingSecret: none, even for a Secret bearing our name",
			mode:      gatewayv1alpha1.CertModeExistingSecret,
			listeners: existing,
		},
		{
			name:      "while moving from http01 to dns01 the listeners still served keep their certificates",
			mode:      gatewayv1alpha1.CertModeDNS01,
			listeners: http01,
			want: []string{
				"cozystack-dashboard-dfe8b0e4-tls secret=cozystack-dashboard-dfe8b0e4-tls per-listener dashboard.example.org",
				"cozystack-harbor-91fb3185-tls secret=cozystack-harbor-91fb3185-tls per-listener harbor.example.org",
			},
		},
		{
			name:      "references that do not follow the naming contract get nothing",
			mode:      gatewayv1alpha1.CertModeHTTP01,
			listeners: foreign,
		},
		{
			name: "no Gateway listeners yet: nothing",
			mode: gatewayv1alpha1.CertModeDNS01,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certs := DesiredCertificates(CertificatesInput{
				TenantGateway: "cozystack", Namespace: "tenant-root", CertMode: tt.mode, Listeners: tt.listeners, ManagedBy: "gateway-certs",
			})
			if got := certLines(certs); !slices.Equal(got, tt.want) {
				t.Fatalf("certificates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Every field of one per-listener and one wildcard Certificate.
func TestDesiredCertificateObjects(t *testing.T) {
	issuerRef := cmmetav1.IssuerReference{Name: "cozystack-gateway", Kind: "Issuer", Group: "cert-manager.io"}
	typeMeta := metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Certificate"}

	certs := DesiredCertificates(CertificatesInput{
		TenantGateway: "cozystack", Namespace: "tenant-root", CertMode: gatewayv1alpha1.CertModeHTTP01, ManagedBy: "gateway-certs",
		Listeners: http01Listeners("harbor.example.org"),
	})
	want := []cmv1.Certificate{{
		TypeMeta: typeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack-harbor-91fb3185-tls", Namespace: "tenant-root", Labels: map[string]string{
			"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack", "cozystack.io/managed-by": "gateway-certs", "cozystack.io/per-listener-cert": "true",
		}},
		Spec: cmv1.CertificateSpec{SecretName: "cozystack-harbor-91fb3185-tls", DNSNames: []string{"harbor.example.org"}, IssuerRef: issuerRef},
	}}
	if !reflect.DeepEqual(certs, want) {
		t.Errorf("per-listener:\n got %+v\nwant %+v", certs, want)
	}

	certs = DesiredCertificates(CertificatesInput{
		TenantGateway: "cozystack", Namespace: "tenant-root", CertMode: gatewayv1alpha1.CertModeDNS01, ManagedBy: "gateway-certs",
		Listeners: sharedSecretListeners("cozystack-gateway-tls"),
	})
	want = []cmv1.Certificate{{
		TypeMeta: typeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack-gateway-tls", Namespace: "tenant-root", Labels: map[string]string{
			"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack", "cozystack.io/managed-by": "gateway-certs",
		}},
		Spec: cmv1.CertificateSpec{SecretName: "cozystack-gateway-tls", DNSNames: []string{"example.org", "*.example.org"}, IssuerRef: issuerRef},
	}}
	if !reflect.DeepEqual(certs, want) {
		t.Errorf("wildcard:\n got %+v\nwant %+v", certs, want)
	}
}

func TestSortDNSNames(t *testing.T) {
	in := []string{"*.b.example.org", "b.example.org", "*.example.org", "example.org", "a.b.example.org", "example.org", "*.a.example.org", "a.example.org"}
	want := []string{"example.org", "*.example.org", "a.example.org", "*.a.example.org", "b.example.org", "*.b.example.org", "a.b.example.org"}
	if got := sortDNSNames(in); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A pure function of the set.
	for i := range in {
		rotated := append(slices.Clone(in[i:]), in[:i]...)
		if got := sortDNSNames(rotated); !slices.Equal(got, want) {
			t.Fatalf("rotation %d: got %v", i, got)
		}
	}
}

// The certificate set follows the listener set: as many per-listener
// certificates as HTTPS listeners, whatever the number of routes.
func TestDesiredCertificatesFollowListeners(t *testing.T) {
	for _, n := range []int{0, 1, 7, 60} {
		var hosts []string
		for i := range n {
			hosts = append(hosts, fmt.Sprintf("app%d.example.org", i))
		}
		certs := DesiredCertificates(CertificatesInput{
			TenantGateway: "cozystack", Namespace: "tenant-root", CertMode: gatewayv1alpha1.CertModeHTTP01,
			Listeners: http01Listeners(hosts...),
		})
		if len(certs) != n {
			t.Fatalf("%d hostnames: %d certificates", n, len(certs))
		}
	}
}
