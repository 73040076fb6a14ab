package tenantgateway

import (
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
)

// HTTPListenerRef is the parentRef of a route on the port-80 listener (http)
// of the Gateway of the TenantGateway tgw in namespace: the redirect route's
// (gateway-listeners) and cert-manager's HTTP-01 challenge routes' (the
// Issuer's solver, gateway-certs).
func HTTPListenerRef(tgw, namespace string) gatewayv1.ParentReference {
	return gatewayv1.ParentReference{
		Group:       ptr.To(gatewayv1.Group(gatewayv1.GroupName)),
		Kind:        ptr.To(gatewayv1.Kind("Gateway")),
		Namespace:   ptr.To(gatewayv1.Namespace(namespace)),
		Name:        gatewayv1.ObjectName(names.Gateway(tgw)),
		SectionName: ptr.To(gatewayv1.SectionName(names.ListenerHTTP)),
	}
}
