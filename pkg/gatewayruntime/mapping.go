package gatewayruntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// GatewayToTenantGateway maps a Gateway to the TenantGateway of the same name
// and namespace, whoever maintains the Gateway.
func GatewayToTenantGateway() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}}
	})
}

// NamespaceToTenantGateways maps a namespace to the TenantGateways it
// concerns: those in the namespace itself, and those in the namespace its
// namespace.cozystack.io/gateway label names. Updates map the old and the new
// labels, so a namespace leaving a Gateway is seen by it.
func NamespaceToTenantGateways(reader client.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		owners := []string{o.GetName()}
		if ns, ok := o.(*corev1.Namespace); ok {
			if g := ns.Labels[gatewayv1alpha1.LabelNamespaceGateway]; g != "" && g != ns.Name {
				owners = append(owners, g)
			}
		}
		return TenantGatewaysIn(ctx, reader, owners...)
	})
}

// TenantGatewaysIn lists the TenantGateways in the given namespaces as
// requests.
func TenantGatewaysIn(ctx context.Context, reader client.Reader, namespaces ...string) []reconcile.Request {
	var out []reconcile.Request
	for _, ns := range namespaces {
		var list gatewayv1alpha1.TenantGatewayList
		if err := reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			log.FromContext(ctx).Error(err, "listing TenantGateways", "namespace", ns)
			continue
		}
		for _, t := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}})
		}
	}
	return out
}
