package gatewayruntime

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/statusapply"
)

func TestStampAndUpToDate(t *testing.T) {
	old := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tgw := &gatewayv1alpha1.TenantGateway{}
	tgw.Generation = 4
	tgw.Status.Conditions = []metav1.Condition{
		{Type: "A", Status: "True", Reason: "Ready", Message: "ok", ObservedGeneration: 4, LastTransitionTime: old},
		{Type: "B", Status: "False", Reason: "X", Message: "bad", ObservedGeneration: 3, LastTransitionTime: old},
	}
	want := []metav1.Condition{
		Condition("A", "True", "Ready", "ok"),
		Condition("B", "True", "Ready", "fine"),
	}
	got := statusapply.Stamp(tgw.Status.Conditions, want, 4)
	if !got[0].LastTransitionTime.Equal(&old) {
		t.Errorf("A kept its status but its transition time changed")
	}
	if got[1].LastTransitionTime.Equal(&old) {
		t.Errorf("B changed status but kept its transition time")
	}
	if got[0].ObservedGeneration != 4 || got[1].ObservedGeneration != 4 {
		t.Errorf("generation not stamped: %+v", got)
	}
	if upToDate(t, tgw, got, Status{}) {
		t.Errorf("B differs, yet up to date")
	}
	if !upToDate(t, tgw, got[:1], Status{}) {
		t.Errorf("A alone is up to date")
	}
	if upToDate(t, tgw, got[:1], Status{ObservedGeneration: true}) {
		t.Errorf("observedGeneration 0 != 4, yet up to date")
	}
	if upToDate(t, tgw, got[:1], Status{OwnsListeners: true, Listeners: []gatewayv1alpha1.TenantGatewayListenerStatus{{Name: "http"}}}) {
		t.Errorf("listeners differ, yet up to date")
	}
	if !upToDate(t, tgw, got[:1], Status{OwnsListeners: true, Listeners: []gatewayv1alpha1.TenantGatewayListenerStatus{}}) {
		t.Errorf("no listeners either way, yet not up to date")
	}
	long := statusapply.Stamp(nil, []metav1.Condition{Condition("C", "True", "R", string(make([]byte, conditions.MaxMessage+10)))}, 1)
	if len(long[0].Message) != conditions.MaxMessage {
		t.Errorf("message not cut to %d: %d", conditions.MaxMessage, len(long[0].Message))
	}
}

func TestParentRefs(t *testing.T) {
	refs := []gatewayv1.ParentReference{
		{Name: "cozystack"},
		{Name: "cozystack", SectionName: ptr.To(gatewayv1.SectionName("http"))},
		{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root"))},
		{Name: "mesh", Kind: ptr.To(gatewayv1.Kind("Service")), Group: ptr.To(gatewayv1.Group(""))},
		{Name: "other", Group: ptr.To(gatewayv1.Group("example.com")), Kind: ptr.To(gatewayv1.Kind("Gateway"))},
	}
	got := ParentGateways("tenant-a", refs)
	if want := []string{"tenant-a/cozystack", "tenant-root/cozystack"}; !slices.Equal(got, want) {
		t.Errorf("ParentGateways = %v, want %v", got, want)
	}
}

func TestAttachedRoutes(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, gatewayv1.Install, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: "tenant-root", UID: types.UID("tgw-uid")}}
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	route := func(ns, name string, parentNS *string, hosts ...gatewayv1.Hostname) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "cozystack"}}
		if parentNS != nil {
			r.Spec.ParentRefs[0].Namespace = (*gatewayv1.Namespace)(parentNS)
		}
		r.Spec.Hostnames = hosts
		return r
	}
	redirect := route("tenant-root", "cozystack-http-redirect", nil, "example.org")
	redirect.OwnerReferences = []metav1.OwnerReference{ownership.ControllerRef(Owner(tgw))}
	tls := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-kubevirt", Name: "vm-exportproxy"}}
	tls.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "cozystack", Namespace: ptr.To(gatewayv1.Namespace("tenant-root"))}}
	tls.Spec.Hostnames = []gatewayv1.Hostname{"vm-exportproxy.example.org"}
	root := ptr.To("tenant-root")
	objs := []client.Object{
		tgw,
		ns("tenant-root", nil),
		ns("tenant-alice", map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-root"}),
		ns("tenant-mallory", nil),
		ns("cozy-kubevirt", map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-root"}),
		route("tenant-root", "dashboard", nil, "dashboard.example.org"),
		route("tenant-alice", "app", root, "app.alice.example.org"),
		route("tenant-mallory", "steal", root, "dashboard.example.org"),
		route("tenant-alice", "elsewhere", nil, "x.example.org"),
		redirect,
		tls,
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&gatewayv1.HTTPRoute{}, IndexParentGateway, func(o client.Object) []string {
			r := o.(*gatewayv1.HTTPRoute)
			return ParentGateways(r.Namespace, r.Spec.ParentRefs)
		}).
		WithIndex(&gatewayv1.TLSRoute{}, IndexParentGateway, func(o client.Object) []string {
			r := o.(*gatewayv1.TLSRoute)
			return ParentGateways(r.Namespace, r.Spec.ParentRefs)
		}).Build()
	routes, err := AttachedRoutes(context.Background(), c, tgw)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range routes {
		got = append(got, r.Key.String())
	}
	slices.Sort(got)
	want := []string{"HTTPRoute tenant-alice/app", "HTTPRoute tenant-root/dashboard", "TLSRoute cozy-kubevirt/vm-exportproxy"}
	if !slices.Equal(got, want) {
		t.Errorf("AttachedRoutes = %v, want %v (not the redirect route, not a namespace without the label, not another Gateway)", got, want)
	}
}

// upToDate is what the writer decides before writing: whether tgw's status
// already carries conds (stamped) and the other fields st owns.
func upToDate(t *testing.T, tgw *gatewayv1alpha1.TenantGateway, conds []metav1.Condition, st Status) bool {
	t.Helper()
	part, err := statusPart(tgw, st)
	if err != nil {
		t.Fatal(err)
	}
	part.Conditions = conds
	return statusapply.UpToDate(tgw.Status.Conditions, statusapply.Of(tgw), part)
}
