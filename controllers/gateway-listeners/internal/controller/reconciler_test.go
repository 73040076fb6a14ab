package controller

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
)

// TestFailedStatus: a refused TenantGateway (too many listeners) reports the
// Gateway's current listeners only when it controls the Gateway, and the
// status carries the kstatus summary (Stalled) next to the controller's own
// conditions, with observedGeneration.
func TestFailedStatus(t *testing.T) {
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-root", Name: "cozystack", UID: "u1", Generation: 4}}
	yes := true
	gw := func(controllerUID types.UID) *gatewayv1.Gateway {
		g := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-root", Name: "cozystack",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "gateway.cozystack.io/v1alpha1", Kind: "TenantGateway", Name: "cozystack", UID: controllerUID, Controller: &yes}}}}
		g.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
		return g
	}
	r := &Reconciler{Base: gatewayruntime.Base{Name: "test"}}
	st := r.failed(tgw, gw("u1"), nil, gatewayv1alpha1.ReasonTooManyListeners, "too many")
	if len(st.Listeners) != 1 || st.Listeners[0].Name != "http" || !st.OwnsListeners || !st.ObservedGeneration {
		t.Errorf("own Gateway: %+v", st)
	}
	// Reconciling is left out: it is present only while True.
	want := map[string]metav1.ConditionStatus{
		gatewayv1alpha1.ConditionReady: metav1.ConditionFalse, gatewayv1alpha1.ConditionStalled: metav1.ConditionTrue,
		gatewayv1alpha1.ConditionListenersReady:    metav1.ConditionFalse,
		gatewayv1alpha1.ConditionHostnamesRejected: metav1.ConditionFalse,
	}
	if len(st.Conditions) != len(want) {
		t.Fatalf("conditions = %+v", st.Conditions)
	}
	// Both kstatus conditions are declared owned even when left out, so a
	// Reconciling=False an earlier version wrote is removed, not kept.
	if !slices.Equal(st.Absent, []string{gatewayv1alpha1.ConditionReconciling, gatewayv1alpha1.ConditionStalled}) {
		t.Errorf("owned types that may be absent = %v", st.Absent)
	}
	for _, c := range st.Conditions {
		if want[c.Type] != c.Status {
			t.Errorf("%s = %s, want %s", c.Type, c.Status, want[c.Type])
		}
		if c.Type != gatewayv1alpha1.ConditionHostnamesRejected && c.Reason != gatewayv1alpha1.ReasonTooManyListeners {
			t.Errorf("%s reason %s", c.Type, c.Reason)
		}
	}
	if st := r.failed(tgw, gw("other"), nil, gatewayv1alpha1.ReasonReconcileError, "foreign"); len(st.Listeners) != 0 {
		t.Errorf("a Gateway it does not control must not be reported: %+v", st.Listeners)
	}
}
