package gatewayctl

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// TenantGatewayGVK is the kind every derived object is owned by.
var TenantGatewayGVK = gatewayv1alpha1.GroupVersion.WithKind("TenantGateway")

// Owner is the TenantGateway as the controller owner of derived objects.
func Owner(tgw *gatewayv1alpha1.TenantGateway) ownership.Owner {
	return ownership.Owner{GVK: TenantGatewayGVK, Name: tgw.Name, UID: string(tgw.UID)}
}

// Desired turns a typed desired object into what ssa.Applier sends: kind set,
// the fields the API server owns (status, creation time) dropped, and the
// TenantGateway as its controller owner.
func Desired(obj runtime.Object, gvk schema.GroupVersionKind, owner ownership.Owner) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	u.SetOwnerReferences([]metav1.OwnerReference{ownership.ControllerRef(owner)})
	return u, nil
}
