package controller

import (
	"context"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
)

func tgw(ns, name string, attached ...string) *gatewayv1alpha1.TenantGateway {
	return &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: attached}}
}

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&gatewayv1alpha1.TenantGateway{}, indexAttached,
			func(o client.Object) []string { return o.(*gatewayv1alpha1.TenantGateway).Spec.AttachedNamespaces }).
		WithIndex(&corev1.Namespace{}, indexAttachedBy, attachedBy).
		Build()
}

func owners(t *testing.T, reqs []reconcile.Request) []string {
	t.Helper()
	var got []string
	for _, req := range reqs {
		if req.Name != "" {
			t.Errorf("request %v carries a name; ns-labels reconciles owner namespaces", req)
		}
		got = append(got, req.Namespace)
	}
	slices.Sort(got)
	return got
}

// TestRootAttached: a TenantGateway outside the root tenant is judged against
// what the root tenant's TenantGateways list.
func TestRootAttached(t *testing.T) {
	r := &Reconciler{Base: gatewayruntime.Base{Client: fakeClient(t, tgw("tenant-root", "cozystack", "cozy-dashboard", "default"),
		tgw("tenant-root", "second", "cozy-keycloak"), tgw("tenant-alice", "gw", "cozy-other"))}}
	got, err := r.rootAttached(context.Background())
	slices.Sort(got)
	if want := []string{"cozy-dashboard", "cozy-keycloak", "default"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("rootAttached = %v, %v, want %v", got, err, want)
	}
}

// TestOwnersOfTenantGateway: a TenantGateway event reaches its owner
// namespace and, for one of the root tenant, the owners of the TenantGateways
// listing the same entries, whose NamespacesAttached depends on it.
func TestOwnersOfTenantGateway(t *testing.T) {
	root := tgw("tenant-root", "cozystack", "cozy-dashboard")
	alice := tgw("tenant-alice", "gw", "cozy-dashboard")
	r := &Reconciler{Base: gatewayruntime.Base{Client: fakeClient(t, root, alice, tgw("tenant-x", "gw", "cozy-other"))}}
	if got, want := owners(t, r.ownersOfTenantGateway(context.Background(), root)), []string{"tenant-alice", "tenant-root"}; !reflect.DeepEqual(got, want) {
		t.Errorf("owners of the root's = %v, want %v", got, want)
	}
	if got, want := owners(t, r.ownersOfTenantGateway(context.Background(), alice)), []string{"tenant-alice"}; !reflect.DeepEqual(got, want) {
		t.Errorf("owners of a child's = %v, want %v", got, want)
	}
}

// TestOwnersOfNamespace: a namespace event reaches every owner namespace it
// concerns: itself, the owner its annotation and its label name, and the
// owners whose TenantGateways list it (through the field index).
func TestOwnersOfNamespace(t *testing.T) {
	r := &Reconciler{Base: gatewayruntime.Base{Name: "test", Client: fakeClient(t,
		tgw("tenant-root", "cozystack", "cozy-dashboard"), tgw("platform", "gw", "cozy-dashboard"), tgw("tenant-x", "gw"))}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cozy-dashboard",
		Labels:      map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-label"},
		Annotations: map[string]string{gatewayv1alpha1.AnnotationAttachedBy: "tenant-annotation"}}}
	got := owners(t, r.ownersOfNamespace(context.Background(), ns))
	want := []string{"cozy-dashboard", "platform", "tenant-annotation", "tenant-label", "tenant-root"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("owners = %v, want %v", got, want)
	}
}
