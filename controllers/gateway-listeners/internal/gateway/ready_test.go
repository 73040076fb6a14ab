package gateway

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
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

func TestSummarize(t *testing.T) {
	l := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: gatewayv1alpha1.ConditionListenersReady, Status: s, Reason: reason, Message: "m", ObservedGeneration: 2}}
	}
	// "" is a condition left out: Reconciling and Stalled are present only
	// while True.
	tests := []struct {
		name                        string
		conds                       []metav1.Condition
		ready, reconciling, stalled metav1.ConditionStatus
		reason                      string
	}{
		{"ready", l("True", "Reconciled"), "True", "", "", "Reconciled"},
		{"too many listeners", l("False", gatewayv1alpha1.ReasonTooManyListeners), "False", "", "True", gatewayv1alpha1.ReasonTooManyListeners},
		{"invalid spec", l("False", gatewayv1alpha1.ReasonInvalidSpec), "False", "", "True", gatewayv1alpha1.ReasonInvalidSpec},
		{"gateway class rejects it", l("False", gatewayv1alpha1.ReasonGatewayNotAccepted), "False", "", "True", gatewayv1alpha1.ReasonGatewayNotAccepted},
		{"not programmed yet", l("False", gatewayv1alpha1.ReasonGatewayNotProgrammed), "False", "True", "", gatewayv1alpha1.ReasonGatewayNotProgrammed},
		{"api error is retried", l("False", gatewayv1alpha1.ReasonReconcileError), "False", "True", "", gatewayv1alpha1.ReasonReconcileError},
		{"progressing", l("Unknown", gatewayv1alpha1.ReasonProgressing), "Unknown", "True", "", gatewayv1alpha1.ReasonProgressing},
		{"nothing reported", nil, "Unknown", "True", "", gatewayv1alpha1.ReasonProgressing},
	}
	status := func(conds []metav1.Condition, typ string) metav1.ConditionStatus {
		if c := meta.FindStatusCondition(conds, typ); c != nil {
			return c.Status
		}
		return ""
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.conds, 2)
			if len(got) == 0 || got[0].Type != gatewayv1alpha1.ConditionReady {
				t.Fatalf("Summarize() = %+v, want Ready first", got)
			}
			ready, reconciling, stalled := status(got, gatewayv1alpha1.ConditionReady), status(got, gatewayv1alpha1.ConditionReconciling), status(got, gatewayv1alpha1.ConditionStalled)
			if ready != tt.ready || reconciling != tt.reconciling || stalled != tt.stalled {
				t.Errorf("Ready/Reconciling/Stalled = %q/%q/%q, want %q/%q/%q", ready, reconciling, stalled, tt.ready, tt.reconciling, tt.stalled)
			}
			for _, c := range got {
				if c.Reason != tt.reason || c.Message == "" || c.ObservedGeneration != 2 {
					t.Errorf("%s: reason %q message %q generation %d, want reason %q, a message and generation 2", c.Type, c.Reason, c.Message, c.ObservedGeneration, tt.reason)
				}
				if c.Status != metav1.ConditionTrue && c.Type != gatewayv1alpha1.ConditionReady {
					t.Errorf("%s is %s: only Ready is written when not True", c.Type, c.Status)
				}
			}
		})
	}
}
