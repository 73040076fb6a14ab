package gateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestConflictLoser(t *testing.T) {
	entry := func(controller, reason string, status metav1.ConditionStatus, ns string) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{
			ParentRef:      gatewayv1.ParentReference{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace(ns))},
			ControllerName: gatewayv1.GatewayController(controller),
			Conditions:     []metav1.Condition{{Type: "Accepted", Status: status, Reason: reason}},
		}
	}
	ours := gatewayv1alpha1.RouteConflictControllerName
	tests := []struct {
		name    string
		parents []gatewayv1.RouteParentStatus
		want    bool
	}{
		{"no status", nil, false},
		{"lost", []gatewayv1.RouteParentStatus{entry(ours, "HostnameConflict", "False", "tenant-root")}, true},
		{"won", []gatewayv1.RouteParentStatus{entry(ours, "Accepted", "True", "tenant-root")}, false},
		{"another controller's rejection", []gatewayv1.RouteParentStatus{entry("io.cilium/gateway-controller", "HostnameConflict", "False", "tenant-root")}, false},
		{"lost on another Gateway", []gatewayv1.RouteParentStatus{entry(ours, "HostnameConflict", "False", "tenant-other")}, false},
	}
	for _, tt := range tests {
		if got := ConflictLoser(tt.parents, "tenant-a", "tenant-root", "cozystack"); got != tt.want {
			t.Errorf("%s: ConflictLoser = %v, want %v", tt.name, got, tt.want)
		}
	}
}
