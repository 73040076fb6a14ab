package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// ConflictLoser reports whether route-conflicts marked the route not
// accepted on the Gateway namespace/name because of a hostname conflict. A
// route that is not accepted is not attached, so its hostnames get no
// listener.
func ConflictLoser(parents []gatewayv1.RouteParentStatus, routeNamespace, namespace, name string) bool {
	for _, p := range parents {
		if string(p.ControllerName) != gatewayv1alpha1.RouteConflictControllerName ||
			!tenantgateway.ParentRef(p.ParentRef).NamesGateway(routeNamespace, namespace, name) {
			continue
		}
		for _, c := range p.Conditions {
			if c.Type == string(gatewayv1.RouteConditionAccepted) && c.Status == metav1.ConditionFalse &&
				c.Reason == gatewayv1alpha1.ReasonHostnameConflict {
				return true
			}
		}
	}
	return false
}
