package controller

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
)

// routeToTenantGateways maps a route to the TenantGateways whose Gateways its
// parentRefs name (a Gateway is named after its TenantGateway). Updates map
// the old and the new object, so a route that moves away is seen by both.
func routeToTenantGateways() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		var out []reconcile.Request
		for _, k := range gatewayruntime.ParentGateways(o.GetNamespace(), gatewayruntime.RouteParentRefs(o)) {
			ns, name, _ := strings.Cut(k, "/")
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
		return out
	})
}
