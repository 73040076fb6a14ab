package gatewayruntime

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// TenantGatewayGVK is the kind every derived object is owned by.
var TenantGatewayGVK = gatewayv1alpha1.GroupVersion.WithKind("TenantGateway")

// Owner is the TenantGateway as the controller owner of derived objects.
func Owner(tgw *gatewayv1alpha1.TenantGateway) ownership.Owner {
	return ownership.Owner{GVK: TenantGatewayGVK, Name: tgw.Name, UID: string(tgw.UID)}
}

// ControlledBy reports whether obj's controller reference names tgw: its
// group, kind, name and uid (ownership.IsControlledBy), not its uid alone as
// metav1.IsControlledBy does.
func ControlledBy(obj metav1.Object, tgw *gatewayv1alpha1.TenantGateway) bool {
	return ownership.IsControlledBy(obj, Owner(tgw))
}
