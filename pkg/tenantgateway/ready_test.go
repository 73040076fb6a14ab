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
		{"all true", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, T, "Ready", 3), c(N, T, "Ready", 3)}, T, "Reconciled", "m-ListenersReady"},
		{"programmed Gateway, certificates not issued yet", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, U, "CertificatesNotReady", 3), c(N, T, "Ready", 3)}, T, "Reconciled", ""},
		{"programmed Gateway, ACME account not registered", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, F, "IssuerNotReady", 3)}, T, "Reconciled", ""},
		{"programmed Gateway, certificate conditions not written yet", []metav1.Condition{c(L, T, "Reconciled", 3)}, T, "Reconciled", ""},
		{"programmed Gateway, attached namespaces not created", []metav1.Condition{c(L, T, "Reconciled", 3), c(N, T, "NamespacesNotCreated", 3)}, T, "Reconciled", ""},
		{"programmed Gateway, a namespace labelled for another tenant", []metav1.Condition{c(L, T, "Reconciled", 3), c(N, F, "NamespaceLabelConflict", 3)}, T, "Reconciled", ""},
		{"rejected hostnames do not count", []metav1.Condition{c(L, T, "Reconciled", 3), c(H, T, "WildcardHostname", 3)}, T, "Reconciled", ""},
		{"gateway not programmed", []metav1.Condition{c(L, F, "GatewayNotProgrammed", 3), c(C, T, "Ready", 3)}, F, "GatewayNotProgrammed", "ListenersReady: m-ListenersReady"},
		{"listeners false wins over a blocking certificate error", []metav1.Condition{c(L, F, "ListenersNotReady", 3), c(C, F, "ReconcileError", 3)}, F, "ListenersNotReady", ""},
		{"foreign Issuer blocks", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, F, "ReconcileError", 3)}, F, "ReconcileError", "CertificatesReady: m-CertificatesReady"},
		{"spec the Issuer cannot be built from blocks", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, F, "InvalidSpec", 3)}, F, "InvalidSpec", ""},
		{"unknown issuer blocks", []metav1.Condition{c(L, U, "Progressing", 3), c(C, F, "UnknownIssuer", 3)}, F, "UnknownIssuer", ""},
		{"a blocking error of an older generation still blocks", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, F, "InvalidSpec", 2)}, F, "InvalidSpec", ""},
		{"namespace labelling failed", []metav1.Condition{c(L, T, "Reconciled", 3), c(C, T, "Ready", 3), c(N, F, "ReconcileError", 3)}, F, "ReconcileError", "NamespacesAttached: m-NamespacesAttached"},
		{"stale listeners wait", []metav1.Condition{c(L, T, "Reconciled", 2), c(C, T, "Ready", 3)}, U, "Progressing", "waiting for gateway-listeners to report ListenersReady for generation 3"},
		{"unknown listeners carry their reason", []metav1.Condition{c(L, U, "Progressing", 3), c(C, T, "Ready", 3)}, U, "Progressing", "ListenersReady: m-ListenersReady"},
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
