package certs

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestCertificatesReadyCondition(t *testing.T) {
	ready := ReadyState{Name: "cozystack-gateway", Status: "True"}
	cert := func(name string, s metav1.ConditionStatus) ReadyState {
		return ReadyState{Name: name, Status: s, Reason: "R", Message: "m"}
	}
	tests := []struct {
		name       string
		state      CertificatesState
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"foreign object", CertificatesState{Mode: "http01", Refused: []string{"issuer x already exists"}, GatewayFound: true, Issuer: ready},
			"False", gatewayv1alpha1.ReasonReconcileError, "issuer x already exists"},
		{"secret: no gateway", CertificatesState{Mode: "existingSecret", SecretName: "wild", Gateway: "ns/cozystack"}, "False", gatewayv1alpha1.ReasonGatewayNotFound, "ns/cozystack"},
		{"secret unresolved", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true,
			Secret: SecretState{Listeners: 2, Unresolved: []string{"https (InvalidCertificateRef: gone)"}}}, "False", gatewayv1alpha1.ReasonSecretNotFound, "Secret wild"},
		{"secret: listeners unresolved for another reason than the certificate", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true,
			Secret: SecretState{Listeners: 2, OtherRefs: []string{"https (InvalidRouteKinds: TLSRoute is not supported)"}}},
			"Unknown", gatewayv1alpha1.ReasonListenersNotReady, "https (InvalidRouteKinds"},
		{"secret: a certificate problem wins over another reason", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true,
			Secret: SecretState{Listeners: 2, Unresolved: []string{"https (InvalidCertificateRef: gone)"}, OtherRefs: []string{"https-apex (InvalidRouteKinds: x)"}}},
			"False", gatewayv1alpha1.ReasonSecretNotFound, "https (InvalidCertificateRef"},
		{"secret not referenced yet", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true}, "Unknown", gatewayv1alpha1.ReasonProgressing, "no listener"},
		{"secret pending", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true,
			Secret: SecretState{Listeners: 2, Pending: []string{"https"}}}, "Unknown", gatewayv1alpha1.ReasonProgressing, "waiting for the Gateway implementation"},
		{"secret resolved", CertificatesState{Mode: "existingSecret", SecretName: "wild", GatewayFound: true, Secret: SecretState{Listeners: 2}},
			"True", gatewayv1alpha1.ReasonReady, "wild on 2 listeners"},
		{"no gateway", CertificatesState{Mode: "dns01", Gateway: "ns/cozystack"}, "False", gatewayv1alpha1.ReasonGatewayNotFound, "ns/cozystack"},
		{"issuer pending", CertificatesState{Mode: "dns01", GatewayFound: true, Issuer: ReadyState{Name: "cozystack-gateway"}},
			"Unknown", gatewayv1alpha1.ReasonIssuerNotReady, "waiting for cert-manager"},
		{"issuer failed", CertificatesState{Mode: "dns01", GatewayFound: true, Issuer: ReadyState{Name: "i", Status: "False", Reason: "ErrRegisterACMEAccount", Message: "no"}},
			"False", gatewayv1alpha1.ReasonIssuerNotReady, "ErrRegisterACMEAccount"},
		{"certificate failed", CertificatesState{Mode: "http01", GatewayFound: true, Issuer: ready, Certificates: []ReadyState{cert("a", "True"), cert("b", "False"), cert("c", "")}},
			"False", gatewayv1alpha1.ReasonCertificatesNotReady, "b (R: m)"},
		{"certificate pending", CertificatesState{Mode: "http01", GatewayFound: true, Issuer: ready, Certificates: []ReadyState{cert("a", "True"), cert("c", "")}},
			"Unknown", gatewayv1alpha1.ReasonCertificatesNotReady, "issue c"},
		{"none needed", CertificatesState{Mode: "http01", GatewayFound: true, Issuer: ready}, "True", gatewayv1alpha1.ReasonReady, "no HTTPS listener"},
		{"all ready", CertificatesState{Mode: "http01", GatewayFound: true, Issuer: ready, Certificates: []ReadyState{cert("a", "True"), cert("b", "True")}},
			"True", gatewayv1alpha1.ReasonReady, "2 certificates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CertificatesReadyCondition(tt.state)
			if c.Type != gatewayv1alpha1.ConditionCertificatesReady || c.Status != tt.wantStatus || c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMsg) {
				t.Errorf("got %s/%s %q, want %s/%s containing %q", c.Status, c.Reason, c.Message, tt.wantStatus, tt.wantReason, tt.wantMsg)
			}
		})
	}
}

func TestSecretResolution(t *testing.T) {
	secretRef := func(name string) *gatewayv1.ListenerTLSConfig {
		return &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(name)}}}
	}
	gw := func(gen, observed int64, listeners ...gatewayv1.ListenerStatus) *gatewayv1.Gateway {
		g := &gatewayv1.Gateway{}
		g.Generation = gen
		g.Spec.Listeners = []gatewayv1.Listener{{Name: "http"}, {Name: "https", TLS: secretRef("wild")},
			{Name: "https-apex", TLS: secretRef("wild")}, {Name: "tls-api", TLS: secretRef("other")}}
		g.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: "True", ObservedGeneration: observed}}
		g.Status.Listeners = listeners
		return g
	}
	resolved := func(name string, s metav1.ConditionStatus) gatewayv1.ListenerStatus {
		return gatewayv1.ListenerStatus{Name: gatewayv1.SectionName(name), Conditions: []metav1.Condition{
			{Type: "ResolvedRefs", Status: s, Reason: "InvalidCertificateRef", Message: "secret not found"}}}
	}
	refs := func(name, reason, message string) gatewayv1.ListenerStatus {
		return gatewayv1.ListenerStatus{Name: gatewayv1.SectionName(name), Conditions: []metav1.Condition{
			{Type: "ResolvedRefs", Status: "False", Reason: reason, Message: message}}}
	}
	tests := []struct {
		name string
		gw   *gatewayv1.Gateway
		want SecretState
	}{
		{"no gateway", nil, SecretState{}},
		{"not reported", gw(2, 2), SecretState{Listeners: 2, Pending: []string{"https", "https-apex"}}},
		{"older generation", gw(2, 1, resolved("https", "True"), resolved("https-apex", "True")),
			SecretState{Listeners: 2, Pending: []string{"https", "https-apex"}}},
		{"one unresolved", gw(1, 1, resolved("https", "False"), resolved("https-apex", "True")),
			SecretState{Listeners: 2, Unresolved: []string{"https (InvalidCertificateRef: secret not found)"}}},
		// Only a certificate reference's reason means the Secret: the
		// rest (Envoy Gateway's InvalidRouteKinds for a TLSRoute kind on an
		// HTTPS listener) is another reference.
		{"unresolved for the route kinds", gw(1, 1, refs("https", "InvalidRouteKinds", "TLSRoute not supported"), resolved("https-apex", "True")),
			SecretState{Listeners: 2, OtherRefs: []string{"https (InvalidRouteKinds: TLSRoute not supported)"}}},
		{"one reason of each", gw(1, 1, refs("https", "InvalidRouteKinds", "x"), refs("https-apex", "InvalidCertificateRef", "secret wild does not exist")),
			SecretState{Listeners: 2, Unresolved: []string{"https-apex (InvalidCertificateRef: secret wild does not exist)"}, OtherRefs: []string{"https (InvalidRouteKinds: x)"}}},
		{"RefNotPermitted is not a missing Secret", gw(1, 1, refs("https", "RefNotPermitted", "y"), resolved("https-apex", "True")),
			SecretState{Listeners: 2, OtherRefs: []string{"https (RefNotPermitted: y)"}}},
		{"all resolved", gw(1, 1, resolved("https", "True"), resolved("https-apex", "True"), resolved("tls-api", "False")),
			SecretState{Listeners: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SecretResolution(tt.gw, "wild"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
