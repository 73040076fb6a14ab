package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// TestStatusAfterApply: the status a reconcile reports right after it
// created or changed the Gateway is the one the next reconcile (brought by
// the write's event, the Gateway unchanged since) reports: one status write
// per change of the Gateway, not one for the write and one for its event.
func TestStatusAfterApply(t *testing.T) {
	ctx := context.Background()
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-root", Name: "cozystack", UID: "u1", Generation: 1}}
	tgw.Spec.Apex = "example.org"
	c := fakeCache(t, tgw)
	r := &Reconciler{Base: gatewayruntime.Base{Client: c, APIReader: c, Name: "gateway-listeners"}}

	ready := func(st gatewayruntime.Status) metav1.Condition {
		for _, c := range st.Conditions {
			if c.Type == gatewayv1alpha1.ConditionListenersReady {
				return c
			}
		}
		t.Fatalf("no %s in %+v", gatewayv1alpha1.ConditionListenersReady, st.Conditions)
		return metav1.Condition{}
	}
	for _, step := range []string{"created", "updated"} {
		if step == "updated" {
			tgw.Spec.Apex, tgw.Generation = "example.net", 2
		}
		written, err := r.reconcile(ctx, tgw)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var gw gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-root", Name: "cozystack"}, &gw); err != nil {
			t.Fatalf("%s: the Gateway: %v", step, err)
		}
		next, err := r.reconcile(ctx, tgw)
		if err != nil {
			t.Fatalf("%s, its event: %v", step, err)
		}
		if a, b := ready(written), ready(next); a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message {
			t.Errorf("%s: ListenersReady after the write %s/%s %q, on its event %s/%s %q; want the same",
				step, a.Status, a.Reason, a.Message, b.Status, b.Reason, b.Message)
		}
		if !slices.Equal(written.Listeners, next.Listeners) {
			t.Errorf("%s: listeners after the write %+v, on its event %+v; want the same", step, written.Listeners, next.Listeners)
		}
		if a := ready(written); a.Reason != gatewayv1alpha1.ReasonProgressing || !strings.Contains(a.Message, fmt.Sprintf("generation %d", gw.Generation)) {
			t.Errorf("%s: ListenersReady %s %q; want Progressing, waiting at generation %d", step, a.Reason, a.Message, gw.Generation)
		}
	}
}

// fakeCache is a client holding objs with the indexes the manager's cache
// has (SetupWithManager).
func fakeCache(t *testing.T, objs ...client.Object) client.WithWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, gatewayv1.Install, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	parents := func(o client.Object) []string {
		return gatewayruntime.ParentGateways(o.GetNamespace(), gatewayruntime.RouteParentRefs(o))
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&gatewayv1alpha1.TenantGateway{}, &gatewayv1.Gateway{}, &gatewayv1.HTTPRoute{}).
		WithIndex(&gatewayv1.HTTPRoute{}, gatewayruntime.IndexParentGateway, parents).
		WithIndex(&gatewayv1.TLSRoute{}, gatewayruntime.IndexParentGateway, parents).
		WithIndex(&corev1.Namespace{}, indexGatewayOwner, gatewayOwner).Build()
}

// TestInputsChildApexes: the inheriting child apexes come from the
// namespaces labelled with the TenantGateway's namespace, found through the
// index, and from no other: not one labelled for another owner, not one
// without the label, and not the owner namespace itself.
func TestInputsChildApexes(t *testing.T) {
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-root", Name: "cozystack", UID: "u1", Generation: 1}}
	tgw.Spec.Apex = "example.org"
	ns := func(name, owner, host string) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if owner != "" {
			n.Labels[gatewayv1alpha1.LabelNamespaceGateway] = owner
		}
		if host != "" {
			n.Labels[gatewayv1alpha1.LabelNamespaceHost] = host
		}
		return n
	}
	c := fakeCache(t, tgw,
		ns("tenant-root", "tenant-root", "example.org"),
		ns("tenant-a", "tenant-root", "a.example.org"),
		ns("tenant-b", "tenant-root", "b.example.org"),
		ns("tenant-c", "tenant-other", "c.example.org"),
		ns("tenant-d", "", "d.example.org"))
	r := &Reconciler{Base: gatewayruntime.Base{Client: c, APIReader: c, Name: "gateway-listeners"}}
	in, rejected, err := r.inputs(context.Background(), tgw)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.example.org", "b.example.org"}; !slices.Equal(in.ChildApexes, want) {
		t.Errorf("child apexes: got %v, want %v", in.ChildApexes, want)
	}
	if len(rejected) != 0 {
		t.Errorf("rejected: %v", rejected)
	}
	if got := gatewayOwner(ns("x", "", "")); got != nil {
		t.Errorf("an unlabelled namespace is indexed under %v", got)
	}
}
