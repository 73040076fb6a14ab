package gateway

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestListenersStatus(t *testing.T) {
	desired := []gatewayv1.Listener{
		{Name: "http", Port: 80},
		{Name: "https-app-b0bf13b6", Hostname: ptr.To(gatewayv1.Hostname("app.example.org")), Port: 443,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cozystack-app-b0bf13b6-tls"}}}},
	}
	cond := func(t string, s metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: "msg " + reason, ObservedGeneration: gen}
	}
	listener := func(name string, conds ...metav1.Condition) gatewayv1.ListenerStatus {
		return gatewayv1.ListenerStatus{Name: gatewayv1.SectionName(name), Conditions: conds}
	}
	ok := func(name string, gen int64) gatewayv1.ListenerStatus {
		return listener(name, cond("Accepted", "True", "Accepted", gen), cond("ResolvedRefs", "True", "ResolvedRefs", gen), cond("Programmed", "True", "Programmed", gen))
	}
	gw := func(gen int64, conds []metav1.Condition, listeners ...gatewayv1.ListenerStatus) *gatewayv1.Gateway {
		g := &gatewayv1.Gateway{}
		g.Name, g.Namespace, g.Generation = "cozystack", "tenant-root", gen
		g.Spec.GatewayClassName = "cilium"
		g.Status.Conditions = conds
		g.Status.Listeners = listeners
		return g
	}
	accepted := func(gen int64) metav1.Condition { return cond("Accepted", "True", "Accepted", gen) }
	programmed := func(gen int64) metav1.Condition { return cond("Programmed", "True", "Programmed", gen) }

	tests := []struct {
		name       string
		gw         *gatewayv1.Gateway
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
		wantReady  []bool
	}{
		{"no gateway", nil, metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "does not exist", []bool{false, false}},
		{"not reported", gw(2, nil), metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "waiting for the implementation of GatewayClass cilium", []bool{false, false}},
		{"reported for an older generation", gw(2, []metav1.Condition{accepted(1), programmed(1)}, ok("http", 1), ok("https-app-b0bf13b6", 1)),
			metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "generation 2", []bool{false, false}},
		{"not accepted", gw(2, []metav1.Condition{cond("Accepted", "False", "InvalidParameters", 2)}), metav1.ConditionFalse,
			gatewayv1alpha1.ReasonGatewayNotAccepted, "not accepted (InvalidParameters)", []bool{false, false}},
		{"accepted, not programmed yet", gw(2, []metav1.Condition{accepted(2)}, ok("http", 2), ok("https-app-b0bf13b6", 2)),
			metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "waiting for it to be programmed", []bool{true, true}},
		{"not programmed", gw(2, []metav1.Condition{accepted(2), cond("Programmed", "False", "AddressNotAssigned", 2)}),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotProgrammed, "AddressNotAssigned", []bool{false, false}},
		{"not programmed, every listener ready: none named", gw(2, []metav1.Condition{accepted(2), cond("Programmed", "False", "AddressNotAssigned", 2)},
			ok("http", 2), ok("https-app-b0bf13b6", 2)),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotProgrammed, "is not programmed (AddressNotAssigned): msg AddressNotAssigned", []bool{true, true}},
		{"not programmed and a listener with a missing secret: the listener is named", gw(2, []metav1.Condition{accepted(2), cond("Programmed", "False", "AddressNotAssigned", 2)},
			ok("http", 2), listener("https-app-b0bf13b6", cond("Accepted", "True", "Accepted", 2), cond("ResolvedRefs", "False", "InvalidCertificateRef", 2), cond("Programmed", "False", "Invalid", 2))),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotProgrammed,
			"(AddressNotAssigned): msg AddressNotAssigned; listeners not programmed either: https-app-b0bf13b6 (InvalidCertificateRef)", []bool{true, false}},
		{"a listener with a missing secret", gw(2, []metav1.Condition{accepted(2), programmed(2)}, ok("http", 2),
			listener("https-app-b0bf13b6", cond("Accepted", "True", "Accepted", 2), cond("ResolvedRefs", "False", "InvalidCertificateRef", 2), cond("Programmed", "False", "Invalid", 2))),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonListenersNotReady, "listeners not programmed: https-app-b0bf13b6 (InvalidCertificateRef);", []bool{true, false}},
		{"a conflicted listener", gw(2, []metav1.Condition{accepted(2), programmed(2)}, ok("http", 2),
			listener("https-app-b0bf13b6", cond("Conflicted", "True", "HostnameConflict", 2), cond("Programmed", "True", "Programmed", 2))),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonListenersNotReady, "https-app-b0bf13b6", []bool{true, false}},
		{"a listener programmed but not reported accepted (upstream needs both)", gw(2, []metav1.Condition{accepted(2), programmed(2)}, ok("http", 2),
			listener("https-app-b0bf13b6", cond("Programmed", "True", "Programmed", 2))),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonListenersNotReady, "https-app-b0bf13b6", []bool{true, false}},
		{"a listener not reported", gw(2, []metav1.Condition{accepted(2), programmed(2)}, ok("http", 2)),
			metav1.ConditionFalse, gatewayv1alpha1.ReasonListenersNotReady, "https-app-b0bf13b6", []bool{true, false}},
		{"programmed", gw(2, []metav1.Condition{accepted(2), programmed(2)}, ok("http", 2), ok("https-app-b0bf13b6", 2)),
			metav1.ConditionTrue, gatewayv1alpha1.ReasonReconciled, "programmed with 2 listeners", []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			statuses, c := ListenersStatus(desired, tt.gw)
			if c.Type != gatewayv1alpha1.ConditionListenersReady || c.Status != tt.wantStatus || c.Reason != tt.wantReason {
				t.Fatalf("condition = %s/%s/%s (%s), want %s/%s", c.Type, c.Status, c.Reason, c.Message, tt.wantStatus, tt.wantReason)
			}
			if !strings.Contains(c.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", c.Message, tt.wantMsg)
			}
			if !slices.Contains(tt.wantReady, false) && strings.Contains(c.Message, "listeners not programmed") {
				t.Errorf("message %q names listeners, but every listener is ready", c.Message)
			}
			if len(statuses) != 2 {
				t.Fatalf("got %d listener statuses, want 2", len(statuses))
			}
			for i, s := range statuses {
				if s.Ready != tt.wantReady[i] {
					t.Errorf("listener %s ready = %v, want %v (%s: %s)", s.Name, s.Ready, tt.wantReady[i], s.Reason, s.Message)
				}
			}
			if statuses[1].Hostname != "app.example.org" || statuses[1].CertificateName != "cozystack-app-b0bf13b6-tls" {
				t.Errorf("listener status = %+v", statuses[1])
			}
		})
	}
}

func TestHostnamesRejectedCondition(t *testing.T) {
	c := HostnamesRejectedCondition(nil)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonAllHostnamesServed {
		t.Errorf("no rejections: %+v", c)
	}
	c = HostnamesRejectedCondition([]RejectedHostname{
		{Hostname: "*.example.org", Reason: gatewayv1alpha1.ReasonWildcardHostname, Message: "use dns01"},
		{Hostname: "x.other.org", Reason: gatewayv1alpha1.ReasonHostnameOutsideApex, Message: "outside"},
	})
	want := "*.example.org (WildcardHostname): use dns01; x.other.org (HostnameOutsideApex): outside"
	if c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonWildcardHostname || c.Message != want {
		t.Errorf("rejections: %+v", c)
	}
}
