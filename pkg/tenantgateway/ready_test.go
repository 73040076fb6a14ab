package tenantgateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestReady(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "m-" + typ, ObservedGeneration: gen}
	}
	const (
		L = gatewayv1alpha1.ConditionListenersReady
		C = gatewayv1alpha1.ConditionCertificatesReady
		N = gatewayv1alpha1.ConditionNamespacesAttached
		H = gatewayv1alpha1.ConditionHostnamesRejected
		T = metav1.ConditionTrue
		F = metav1.ConditionFalse
		U = metav1.ConditionUnknown
	)
	tests := []struct {
		name        string
		conds       []metav1.Condition
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"all true", []metav1.Condition{c(L, T, "Ready", 3), c(C, T, "Ready", 3), c(N, T, "Ready", 3)}, T, "Ready", ""},
		{"rejected hostnames do not count", []metav1.Condition{c(L, T, "Ready", 3), c(C, T, "Ready", 3), c(N, T, "Ready", 3), c(H, T, "WildcardHostname", 3)}, T, "Ready", ""},
		{"first false in order", []metav1.Condition{c(L, T, "Ready", 3), c(C, F, "CertificatesNotReady", 3), c(N, F, "NamespaceNotFound", 3)}, F, "CertificatesNotReady", "CertificatesReady: m-CertificatesReady"},
		{"false beats an earlier unknown", []metav1.Condition{c(L, U, "Progressing", 3), c(C, T, "Ready", 3), c(N, F, "NamespaceLabelConflict", 3)}, F, "NamespaceLabelConflict", "NamespacesAttached: m-NamespacesAttached"},
		{"missing condition waits for its controller", []metav1.Condition{c(L, T, "Ready", 3), c(N, T, "Ready", 3)}, U, "Progressing", "waiting for gateway-certs to report CertificatesReady"},
		{"stale generation waits", []metav1.Condition{c(L, T, "Ready", 3), c(C, T, "Ready", 2), c(N, T, "Ready", 3)}, U, "Progressing", "waiting for gateway-certs to report CertificatesReady for generation 3"},
		{"unknown carries its reason", []metav1.Condition{c(L, U, "GatewayNotProgrammed", 3), c(C, T, "Ready", 3), c(N, T, "Ready", 3)}, U, "GatewayNotProgrammed", "ListenersReady: m-ListenersReady"},
		{"nothing reported", nil, U, "Progressing", "waiting for gateway-listeners to report ListenersReady"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Ready(tt.conds, 3)
			if got.Type != gatewayv1alpha1.ConditionReady || got.Status != tt.wantStatus || got.Reason != tt.wantReason {
				t.Fatalf("Ready() = %s/%s/%s, want Ready/%s/%s", got.Type, got.Status, got.Reason, tt.wantStatus, tt.wantReason)
			}
			if tt.wantMessage != "" && got.Message != tt.wantMessage {
				t.Errorf("message = %q, want %q", got.Message, tt.wantMessage)
			}
		})
	}
}
