package gatewayruntime

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestBatched: what a batched handler enqueues waits for its window, so
// that the events within it share one reconcile; an item already ready is
// not held back. With the priority queue controllers run and with a plain
// work queue.
func TestBatched(t *testing.T) {
	const window = time.Second
	tgw := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "tenant-a", Name: "cozystack"}}
	toTGW := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{tgw} })
	route := func(name string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: name}}
	}
	queues := map[string]func() workqueue.TypedRateLimitingInterface[reconcile.Request]{
		"priority queue": func() workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return priorityqueue.New[reconcile.Request]("batched")
		},
		"work queue": func() workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		},
	}
	for name, newQueue := range queues {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			q := newQueue()
			defer q.ShutDown()
			h := Batched(toTGW, window)
			start := time.Now()
			for _, r := range []string{"app-0", "app-1", "app-2"} {
				h.Create(ctx, event.CreateEvent{Object: route(r)}, q)
			}
			h.Update(ctx, event.UpdateEvent{ObjectOld: route("app-0"), ObjectNew: route("app-0")}, q)
			if n := q.Len(); n != 0 && time.Since(start) < window {
				t.Fatalf("%d items ready before the window passed", n)
			}
			item, _ := q.Get()
			if waited := time.Since(start); item != tgw || waited < window {
				t.Fatalf("got %v after %s, want %v after %s", item, waited, tgw, window)
			}
			q.Done(item)
			if n := q.Len(); n != 0 {
				t.Errorf("the burst left %d more items: it did not share one reconcile", n)
			}

			// An item already ready (a TenantGateway's own event) stays ready.
			q.Add(tgw)
			h.Create(ctx, event.CreateEvent{Object: route("app-3")}, q)
			start = time.Now()
			item, _ = q.Get()
			if waited := time.Since(start); waited >= window {
				t.Errorf("a ready item waited %s for the window", waited)
			}
			q.Done(item)
		})
	}
	t.Run("a window of 0 is the handler itself", func(t *testing.T) {
		if h := Batched(toTGW, 0); h != toTGW {
			t.Errorf("Batched(h, 0) = %T, want h", h)
		}
	})
}
