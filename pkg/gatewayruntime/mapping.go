package gatewayruntime

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
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

// Batched wraps h so that a TenantGateway it enqueues that is not already
// waiting becomes ready only after window: the events that follow within
// the window join the same reconcile. Routes arrive in bursts (a chart
// installing an application, a tenant's apps on a migration), each a new
// listener, and the Gateway would otherwise be written, and its
// implementation reprogram the data plane, once per route. An item already
// ready stays ready; one already waiting keeps the earlier time. A window
// of 0 is h itself.
func Batched(h handler.EventHandler, window time.Duration) handler.EventHandler {
	if window <= 0 {
		return h
	}
	wrap := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			return batchedPriorityQueue{PriorityQueue: pq, window: window}
		}
		return batchedQueue{TypedRateLimitingInterface: q, window: window}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, wrap(q))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, wrap(q))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, wrap(q))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, wrap(q))
		},
	}
}

// batchedQueue adds after its window (Batched), for a plain work queue.
type batchedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	window time.Duration
}

func (q batchedQueue) Add(item reconcile.Request) { q.AddAfter(item, q.window) }

// batchedPriorityQueue adds after its window (Batched), keeping the
// priority the handler gives (a resync's or a start's low one).
type batchedPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	window time.Duration
}

func (q batchedPriorityQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q batchedPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.After < q.window && !o.RateLimited {
		o.After = q.window
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}
