package tenantgateway

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		{"secret missing", CertificatesState{Mode: "existingSecret", SecretName: "wild"}, "False", gatewayv1alpha1.ReasonSecretNotFound, "Secret wild"},
		{"secret present", CertificatesState{Mode: "existingSecret", SecretName: "wild", SecretFound: true}, "True", gatewayv1alpha1.ReasonReady, "wild"},
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
