package gatewayruntime

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// BatchMaxWindows bounds how long a Batch holds an item back: a stream of
// changes that never pauses for a window is reconciled every BatchMaxWindows
// windows, not never.
const BatchMaxWindows = 10

// Batch holds back the reconciles that the handlers it wraps enqueue until
// their item has had no new change for a window: the changes of a burst
// share one reconcile however long the burst lasts, as long as it does not
// pause for a window (and for at most BatchMaxWindows windows after its
// first change). A TenantGateway's routes come in bursts (a chart installing
// an application, a tenant's apps migrated together; a new tenant's
// TenantGateway, then its routes, then the labels ns-labels writes on its
// namespaces), each a new listener: reconciled one by one, the Gateway would
// be written, and its implementation reprogram the data plane, once for
// each.
//
// Every handler of one controller wraps through the same Batch, so that a
// change of any watched kind moves the same item's time. An item enqueued
// by a handler the Batch does not wrap is not held back, nor is an add
// that asks for a delay or a rate limit of its own. Held items keep the
// highest priority asked for them (a start's or a resync's low one, or a
// change's).
type Batch struct {
	window time.Duration
	mu     sync.Mutex
	held   map[reconcile.Request]*heldItem
}

// heldItem is one item a Batch holds back: the queue to add it to, the
// priority to add it with, and when it is due.
type heldItem struct {
	queue    workqueue.TypedRateLimitingInterface[reconcile.Request]
	priority int
	first    time.Time
	due      time.Time
	timer    *time.Timer
}

// NewBatch is a Batch of window; a window of 0 (or less) holds nothing back.
func NewBatch(window time.Duration) *Batch {
	return &Batch{window: window, held: map[reconcile.Request]*heldItem{}}
}

// holds reports whether b holds anything back (a nil Batch, or one of window
// 0, does not).
func (b *Batch) holds() bool { return b != nil && b.window > 0 }

// Held is how many items wait for their window.
func (b *Batch) Held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.held)
}

// Handler wraps h so that what it enqueues is held back by b; with a window
// of 0 it is h itself.
func (b *Batch) Handler(h handler.EventHandler) handler.EventHandler {
	if !b.holds() {
		return h
	}
	wrap := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			return heldPriorityQueue{PriorityQueue: pq, batch: b}
		}
		return heldQueue{TypedRateLimitingInterface: q, batch: b}
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

// Held wraps h so that what its delete events enqueue is held back by
// deletions and what its other events enqueue by changes: two windows, one
// for a burst of deletions and one for a burst of changes. A nil Batch, or
// one of window 0, holds nothing back.
func Held(changes, deletions *Batch, h handler.EventHandler) handler.EventHandler {
	if !changes.holds() && !deletions.holds() {
		return h
	}
	c, d := changes.Handler(h), deletions.Handler(h)
	return handler.Funcs{CreateFunc: c.Create, UpdateFunc: c.Update, DeleteFunc: d.Delete, GenericFunc: c.Generic}
}

// hold holds item back for q: a new item is due a window from now; one
// already held is due a window from now, but no later than BatchMaxWindows
// windows after its first change.
func (b *Batch) hold(q workqueue.TypedRateLimitingInterface[reconcile.Request], priority int, item reconcile.Request) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.held[item]
	if h == nil {
		h = &heldItem{queue: q, priority: priority, first: now, due: now.Add(b.window)}
		h.timer = time.AfterFunc(b.window, func() { b.release(item) })
		b.held[item] = h
		return
	}
	h.priority = max(h.priority, priority)
	h.due = now.Add(b.window)
	if last := h.first.Add(BatchMaxWindows * b.window); h.due.After(last) {
		h.due = last
	}
}

// release adds item to its queue once it is due; its timer runs again
// until then (a change only moves the due time, so that the timer is never
// reset from outside its own run).
func (b *Batch) release(item reconcile.Request) {
	b.mu.Lock()
	h := b.held[item]
	if h == nil {
		b.mu.Unlock()
		return
	}
	if wait := time.Until(h.due); wait > 0 {
		h.timer.Reset(wait)
		b.mu.Unlock()
		return
	}
	delete(b.held, item)
	b.mu.Unlock()
	if pq, ok := h.queue.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &h.priority}, item)
		return
	}
	h.queue.Add(item)
}

// heldQueue is a plain work queue whose adds a Batch holds back.
type heldQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	batch *Batch
}

func (q heldQueue) Add(item reconcile.Request) {
	q.batch.hold(q.TypedRateLimitingInterface, 0, item)
}

// heldPriorityQueue is a priority queue whose adds a Batch holds back,
// with the priority they ask for.
type heldPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	batch *Batch
}

func (q heldPriorityQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q heldPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.After > 0 || o.RateLimited {
		q.PriorityQueue.AddWithOpts(o, items...)
		return
	}
	priority := 0
	if o.Priority != nil {
		priority = *o.Priority
	}
	for _, item := range items {
		q.batch.hold(q.PriorityQueue, priority, item)
	}
}
