package controller

import (
	"errors"
	"fmt"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-certs/internal/certs"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// TestCertReady: a Certificate's Ready counts only for its current
// generation (its dnsNames changed since: not ready yet), and a Certificate
// that does not exist has no status.
func TestCertReady(t *testing.T) {
	cert := func(gen, observed int64, s cmmeta.ConditionStatus) *cmv1.Certificate {
		c := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		c.Status.Conditions = []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: s, Reason: "R", ObservedGeneration: observed}}
		return c
	}
	tests := []struct {
		name  string
		cert  *cmv1.Certificate
		found bool
		want  metav1.ConditionStatus
	}{
		{"ready", cert(2, 2, cmmeta.ConditionTrue), true, metav1.ConditionTrue},
		{"failed", cert(2, 2, cmmeta.ConditionFalse), true, metav1.ConditionFalse},
		{"ready for an older generation", cert(3, 2, cmmeta.ConditionTrue), true, ""},
		{"not found", cert(2, 2, cmmeta.ConditionTrue), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := certReady("c", tt.cert, tt.found); got.Status != tt.want || got.Name != "c" {
				t.Errorf("certReady() = %+v, want status %q", got, tt.want)
			}
		})
	}
}

// TestReadyState: the Issuer's Ready condition with its reason and message.
func TestReadyState(t *testing.T) {
	conds := []cmv1.IssuerCondition{{Type: cmv1.IssuerConditionReady, Status: cmmeta.ConditionFalse, Reason: "ErrRegisterACMEAccount", Message: "no"}}
	got := readyState("i", conds, true)
	if got.Status != metav1.ConditionFalse || got.Reason != "ErrRegisterACMEAccount" || got.Message != "no" {
		t.Errorf("readyState() = %+v", got)
	}
	if got := readyState("i", conds, false); got.Status != "" {
		t.Errorf("readyState(not found) = %+v", got)
	}
}

// TestCertificatesReadyOutcome: a phase that could not complete decides
// CertificatesReady from the same outcome that decides the result: a
// stalled state with its own reason and no retry, anything else as
// ReconcileError, retried; with no error, what the phases gathered decides.
func TestCertificatesReadyOutcome(t *testing.T) {
	gathered := &gathered{state: certs.CertificatesState{Mode: gatewayv1alpha1.CertModeHTTP01, Gateway: "ns/cozystack"}}
	tests := []struct {
		name    string
		err     error
		status  metav1.ConditionStatus
		reason  string
		retried bool
	}{
		{"stalled: the spec must change", fmt.Errorf("issuer: %w", &certs.UnknownIssuerError{Name: "x"}),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonUnknownIssuer, false},
		{"an API error is retried", errors.New("connection refused"), metav1.ConditionFalse, gatewayv1alpha1.ReasonReconcileError, true},
		{"complete: what was gathered", nil, metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := certificatesReady(gathered, tt.err)
			if c.Type != gatewayv1alpha1.ConditionCertificatesReady || c.Status != tt.status || c.Reason != tt.reason {
				t.Errorf("condition %s %s %s, want %s %s", c.Type, c.Status, c.Reason, tt.status, tt.reason)
			}
			if tt.err != nil && c.Message != tt.err.Error() {
				t.Errorf("message %q, want the error's", c.Message)
			}
			res, err := reconcileerr.Result(tt.err, 0)
			if retried := err != nil || res.RequeueAfter > 0; retried != tt.retried {
				t.Errorf("result %+v, %v: retried %v, want %v", res, err, retried, tt.retried)
			}
		})
	}
}
