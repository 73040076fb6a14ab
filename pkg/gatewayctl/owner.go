package gatewayctl

import (
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// TenantGatewayGVK is the kind every derived object is owned by.
var TenantGatewayGVK = gatewayv1alpha1.GroupVersion.WithKind("TenantGateway")

// Owner is the TenantGateway as the controller owner of derived objects.
func Owner(tgw *gatewayv1alpha1.TenantGateway) ownership.Owner {
	return ownership.Owner{GVK: TenantGatewayGVK, Name: tgw.Name, UID: string(tgw.UID)}
}
