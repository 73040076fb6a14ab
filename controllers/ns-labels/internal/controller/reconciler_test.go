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

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func tgw(ns, name string, attached ...string) *gatewayv1alpha1.TenantGateway {
	return &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org", AttachedNamespaces: attached}}
}

// TestWantedBy: the namespaces ns-labels labels for a TenantGateway follow
// the attach rule, whoever wrote the TenantGateway.
func TestWantedBy(t *testing.T) {
	tests := []struct {
		tgw  *gatewayv1alpha1.TenantGateway
		want []string
	}{
		{tgw("tenant-root", "cozystack", "cozy-dashboard", "default"), []string{"tenant-root", "cozy-dashboard", "default"}},
		{tgw("tenant-alice", "gw", "cozy-dashboard", "tenant-alice-bob", "tenant-bob"), []string{"tenant-alice", "tenant-alice-bob"}},
		{tgw("platform", "gw", "tenant-bob"), []string{"platform", "tenant-bob"}},
	}
	for _, tt := range tests {
		if got := wantedBy(tt.tgw); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("wantedBy(%s) = %v, want %v", tt.tgw.Namespace, got, tt.want)
		}
	}
}

// TestOwnersOfNamespace: a namespace event reaches every owner namespace it
// concerns: itself, the owner its annotation and its label name, and the
// owners whose TenantGateways list it (through the field index).
func TestOwnersOfNamespace(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(tgw("tenant-root", "cozystack", "cozy-dashboard"), tgw("platform", "gw", "cozy-dashboard"), tgw("tenant-x", "gw")).
		WithIndex(&gatewayv1alpha1.TenantGateway{}, indexAttached,
			func(o client.Object) []string { return o.(*gatewayv1alpha1.TenantGateway).Spec.AttachedNamespaces }).
		Build()
	r := &Reconciler{Client: c, Name: "test"}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cozy-dashboard",
		Labels:      map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-label"},
		Annotations: map[string]string{gatewayv1alpha1.AnnotationAttachedBy: "tenant-annotation"}}}
	var got []string
	for _, req := range r.ownersOfNamespace(context.Background(), ns) {
		if req.Name != "" {
			t.Errorf("request %v carries a name; ns-labels reconciles owner namespaces", req)
		}
		got = append(got, req.Namespace)
	}
	slices.Sort(got)
	want := []string{"cozy-dashboard", "platform", "tenant-annotation", "tenant-label", "tenant-root"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("owners = %v, want %v", got, want)
	}
}
