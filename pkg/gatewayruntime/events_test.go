package gatewayruntime

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestChangedConditions(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "m"}
	}
	have := []metav1.Condition{c("Ready", "Unknown", "Progressing"), c("Stalled", "False", "Progressing"), c("CertificatesReady", "True", "Ready"),
		c("Reconciling", "False", "Reconciled")}
	tests := []struct {
		name      string
		want      []metav1.Condition
		wantTypes []string
		wantN     []string
	}{
		{"nothing changed, message only", []metav1.Condition{{Type: "Ready", Status: "Unknown", Reason: "Progressing", Message: "other"}}, nil, nil},
		{"ready turns true", []metav1.Condition{c("Ready", "True", "Reconciled")}, []string{"Normal"}, []string{"Ready"}},
		{"stalled", []metav1.Condition{c("Ready", "False", "TooManyListeners"), c("Stalled", "True", "TooManyListeners"), c("Reconciling", "False", "TooManyListeners")},
			[]string{"Warning", "Warning", "Normal"}, []string{"Ready", "Stalled", "Reconciling"}},
		{"reconciling is progress", []metav1.Condition{c("Reconciling", "True", "Progressing")}, []string{"Normal"}, []string{"Reconciling"}},
		{"a first value that is no problem is no event", []metav1.Condition{c("ListenersReady", "True", "Ready"), c("NamespacesAttached", "True", "Attached"),
			c("HostnamesRejected", "False", "AllHostnamesServed")}, nil, nil},
		{"a first value that is a problem is", []metav1.Condition{c("ListenersReady", "False", "Progressing"), c("HostnamesRejected", "True", "WildcardHostname")},
			[]string{"Warning", "Warning"}, []string{"ListenersReady", "HostnamesRejected"}},
		{"a refusal", []metav1.Condition{c("CertificatesReady", "False", "ReconcileError")}, []string{"Warning"}, []string{"CertificatesReady"}},
		{"hostnames rejected", []metav1.Condition{c("HostnamesRejected", "True", "WildcardHostname")}, []string{"Warning"}, []string{"HostnamesRejected"}},
		{"reason change alone", []metav1.Condition{c("CertificatesReady", "True", "Other")}, []string{"Normal"}, []string{"CertificatesReady"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, types := ChangedConditions(have, tt.want)
			var names []string
			for _, c := range changed {
				names = append(names, c.Type)
			}
			if !reflect.DeepEqual(types, tt.wantTypes) || !reflect.DeepEqual(names, tt.wantN) {
				t.Errorf("got %v %v, want %v %v", names, types, tt.wantN, tt.wantTypes)
			}
		})
	}
}
