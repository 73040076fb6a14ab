package gatewayruntime

import (
	"context"
	"sync"
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

var (
	batchedTGW = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "tenant-a", Name: "cozystack"}}
	toTGW      = handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{batchedTGW}
	})
)

func batchedRoute(name string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: name}}
}

// TestBatch: a burst of changes, through any handler a Batch wraps, is one
// reconcile, ready a window after the burst's last change, however long the
// burst; with the priority queue controllers run and with a plain work
// queue. Only lower bounds on time are asserted: a busy machine makes
// timers late, never early.
func TestBatch(t *testing.T) {
	const window = 200 * time.Millisecond
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
			b := NewBatch(window)
			routes, tgws := b.Handler(toTGW), b.Handler(&handler.EnqueueRequestForObject{})
			tgws.Create(ctx, event.CreateEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Namespace: batchedTGW.Namespace, Name: batchedTGW.Name}}}, q)
			// Five changes half a window apart: the burst lasts two and a
			// half windows, longer than one window from its first change.
			var last time.Time
			for i, r := range []string{"app-0", "app-1", "app-2", "app-3", "app-4"} {
				if i > 0 {
					time.Sleep(window / 2)
				}
				routes.Create(ctx, event.CreateEvent{Object: batchedRoute(r)}, q)
				last = time.Now()
				if n := q.Len(); n != 0 && time.Since(last) < window {
					t.Fatalf("%d items ready within a window of the last change", n)
				}
			}
			item, _ := q.Get()
			if waited := time.Since(last); item != batchedTGW || waited < window {
				t.Fatalf("got %v %s after the last change, want %v after at least %s", item, waited, batchedTGW, window)
			}
			q.Done(item)
			if n, held := q.Len(), b.Held(); n != 0 || held != 0 {
				t.Errorf("the burst left %d items ready and %d held: it did not share one reconcile", n, held)
			}
		})
	}
	t.Run("a window of 0 is the handler itself", func(t *testing.T) {
		if h := NewBatch(0).Handler(toTGW); h != toTGW {
			t.Errorf("NewBatch(0).Handler(h) = %T, want h", h)
		}
	})
}

// TestBatchMaxWait: a stream of changes that never pauses for a window is
// still reconciled, BatchMaxWindows windows after its first change.
func TestBatchMaxWait(t *testing.T) {
	const window = 20 * time.Millisecond
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := NewBatch(window).Handler(toTGW)
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(window / 4):
				h.Update(context.Background(), event.UpdateEvent{ObjectOld: batchedRoute("app-0"), ObjectNew: batchedRoute("app-0")}, q)
			}
		}
	})
	// The stream goes on for 100 windows, ten times the longest hold.
	ready := make(chan time.Duration, 1)
	go func() {
		item, _ := q.Get()
		q.Done(item)
		ready <- time.Since(start)
	}()
	select {
	case waited := <-ready:
		if waited < BatchMaxWindows*window {
			t.Errorf("ready after %s, before the longest hold of %s", waited, BatchMaxWindows*window)
		}
	case <-time.After(100 * window):
		t.Errorf("nothing ready after %s of changes: the longest hold is %s", 100*window, BatchMaxWindows*window)
	}
	close(stop)
	wg.Wait()
}

// TestBatchPriority: a held item is added with the highest priority asked
// for it, so a change is not left behind a start's low priority; adds with
// a delay or a rate limit of their own are not held.
func TestBatchPriority(t *testing.T) {
	q := &recordingQueue{added: make(chan priorityqueue.AddOpts, 4)}
	b := NewBatch(10 * time.Millisecond)
	wq := b.Handler(toTGW)
	low := handler.WithLowPriorityWhenUnchanged(toTGW)
	ctx := context.Background()
	// A route in the informer's initial list: low priority.
	b.Handler(low).Create(ctx, event.CreateEvent{Object: batchedRoute("app-0"), IsInInitialList: true}, q)
	wq.Create(ctx, event.CreateEvent{Object: batchedRoute("app-1")}, q)
	o := <-q.added
	if o.Priority == nil || *o.Priority != 0 {
		t.Errorf("released with priority %v, want 0 (the change's, not the initial list's %d)", o.Priority, handler.LowPriority)
	}
	held := priorityqueue.AddOpts{After: time.Hour}
	heldPriorityQueue{PriorityQueue: q, batch: b}.AddWithOpts(held, batchedTGW)
	if o := <-q.added; o.After != time.Hour {
		t.Errorf("an add with a delay of its own was changed to %+v", o)
	}
	if n := b.Held(); n != 0 {
		t.Errorf("%d items held, want none", n)
	}
}

// recordingQueue is a priority queue that only records its adds.
type recordingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	added chan priorityqueue.AddOpts
}

func (q *recordingQueue) Add(reconcile.Request) { q.added <- priorityqueue.AddOpts{} }

func (q *recordingQueue) AddWithOpts(o priorityqueue.AddOpts, _ ...reconcile.Request) { q.added <- o }

// TestBatchDeletes: held for deletions only (Held with no changes Batch), a
// delete event is held for the window while a create or an update is
// enqueued at once; a window of 0 wraps nothing.
func TestBatchDeletes(t *testing.T) {
	ctx := context.Background()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	b := NewBatch(time.Hour)
	h := Held(nil, b, toTGW)
	h.Delete(ctx, event.DeleteEvent{Object: batchedRoute("app-0")}, q)
	if q.Len() != 0 || b.Held() != 1 {
		t.Fatalf("after a delete: %d queued, %d held; want 0 queued, 1 held", q.Len(), b.Held())
	}
	h.Create(ctx, event.CreateEvent{Object: batchedRoute("app-1")}, q)
	if q.Len() != 1 {
		t.Errorf("after a create: %d queued, want 1 at once", q.Len())
	}
	item, _ := q.Get()
	q.Done(item)
	h.Update(ctx, event.UpdateEvent{ObjectOld: batchedRoute("app-1"), ObjectNew: batchedRoute("app-1")}, q)
	if q.Len() != 1 {
		t.Errorf("after an update: %d queued, want 1 at once", q.Len())
	}

	short := NewBatch(20 * time.Millisecond)
	q2 := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q2.ShutDown()
	Held(nil, short, toTGW).Delete(ctx, event.DeleteEvent{Object: batchedRoute("app-0")}, q2)
	if got, _ := q2.Get(); got != batchedTGW {
		t.Errorf("released %v, want %v", got, batchedTGW)
	}
	if Held(nil, NewBatch(0), toTGW) != toTGW {
		t.Error("a window of 0 wraps the handler")
	}
}

// TestHeld: changes and deletions are held by a window each, whatever the
// handler's type (handler.Funcs holds functions, which do not compare);
// with neither Batch holding anything, nothing waits.
func TestHeld(t *testing.T) {
	ctx := context.Background()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	changes, deletions := NewBatch(20*time.Millisecond), NewBatch(time.Hour)
	funcs := handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			toTGW.Create(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			toTGW.Delete(ctx, e, q)
		},
	}
	h := Held(changes, deletions, funcs)
	h.Delete(ctx, event.DeleteEvent{Object: batchedRoute("app-0")}, q)
	h.Create(ctx, event.CreateEvent{Object: batchedRoute("app-1")}, q)
	if changes.Held() != 1 || deletions.Held() != 1 || q.Len() != 0 {
		t.Fatalf("held: %d changes, %d deletions, %d queued; want 1, 1 and 0", changes.Held(), deletions.Held(), q.Len())
	}
	if got, _ := q.Get(); got != batchedTGW {
		t.Errorf("released %v, want %v", got, batchedTGW)
	}
	if deletions.Held() != 1 {
		t.Error("the deletion was released with the change's window")
	}
	q.Done(batchedTGW)
	Held(nil, NewBatch(0), funcs).Delete(ctx, event.DeleteEvent{Object: batchedRoute("app-2")}, q)
	if q.Len() != 1 {
		t.Errorf("with nothing held, a delete queued %d at once, want 1", q.Len())
	}
}
