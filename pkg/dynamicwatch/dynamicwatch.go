// Package dynamicwatch watches kinds that are only known at runtime.
//
// The user-facing kinds of apps.cozystack.io come and go with
// ApplicationDefinitions, so a backend controller cannot list them in its
// builder at start-up. controller-runtime's builder wires watches once, before
// the controller starts, and offers no way to stop watching a kind whose CRD
// has been deleted: its informer would keep failing to list and fill the log.
//
// A Set is a source for one typed controller. Register it once with the
// controller (ctrl.Watch(set)); then Watch and Unwatch kinds at any time, from
// any goroutine. Each watched kind gets an informer from the manager's cache
// (so cached reads of that kind work, and objects are stored once), and an
// event handler that turns events into Requests on the controller's queue.
// Unwatch removes the handler and stops the informer.
package dynamicwatch

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Request names one object of a kind known only at runtime.
type Request struct {
	GVK schema.GroupVersionKind
	types.NamespacedName
}

func (r Request) String() string {
	return r.GVK.Kind + " " + r.NamespacedName.String()
}

// MapFunc turns an object of a watched kind into the requests to enqueue.
type MapFunc func(client.Object) []Request

// Self enqueues the object itself.
func Self(gvk schema.GroupVersionKind) MapFunc {
	return func(o client.Object) []Request {
		return []Request{{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}}
	}
}

// Options of one watch.
type Options struct {
	// Map turns events into requests; Self(gvk) when nil.
	Map MapFunc
	// MetadataOnly watches PartialObjectMetadata instead of whole objects:
	// far less memory, for kinds whose spec the controller never reads.
	MetadataOnly bool
	// Filter drops events for which it returns false (nil keeps all).
	Filter func(client.Object) bool
	// Deleted, when not nil, is told of every deletion the informer sees
	// (one it missed while disconnected included), with the object's last
	// known state, before the deletion's requests are enqueued: a reconcile
	// of such a request can count on it. It must not block.
	Deleted func(client.Object)
	// Observe, when not nil, is told of every event the informer sees,
	// before Filter and before the event's requests are enqueued: old is
	// nil for an add, new is nil for a delete (old is then the object's
	// last known state). A reconcile of such a request can count on what
	// it kept (an index of the objects). It must not block.
	Observe func(old, new client.Object)
	// Echo, when not nil, is asked of every add and update event, after
	// Observe: true when the object as the event shows it is the version
	// the controller's own write made, which the reconcile that wrote it
	// acted on, so the event enqueues nothing. Never asked of a deletion.
	// It must not block.
	Echo func(client.Object) bool
}

type watch struct {
	obj  client.Object
	opts Options
	reg  toolscache.ResourceEventHandlerRegistration
	inf  cache.Informer
}

// Set is the dynamic set of kinds one controller watches.
type Set struct {
	cache cache.Cache

	mu      sync.Mutex
	ctx     context.Context
	queue   workqueue.TypedRateLimitingInterface[Request]
	watches map[schema.GroupVersionKind]*watch
}

var _ source.TypedSource[Request] = &Set{}

// New returns an empty set whose informers come from c (the manager's cache).
func New(c cache.Cache) *Set {
	return &Set{cache: c, watches: map[schema.GroupVersionKind]*watch{}}
}

// Start implements source.TypedSource: the controller hands over its queue.
// Kinds watched before Start are hooked up now.
func (s *Set) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[Request]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queue != nil {
		return fmt.Errorf("dynamicwatch: set started twice")
	}
	s.ctx, s.queue = ctx, q
	for gvk, w := range s.watches {
		if err := s.hookLocked(gvk, w); err != nil {
			return err
		}
	}
	return nil
}

// Watch starts watching gvk. Watching a kind already watched with the same
// options is a no-op, so reconcilers can call it on every pass.
func (s *Set) Watch(gvk schema.GroupVersionKind, opts Options) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watches[gvk]; ok {
		return nil
	}
	if opts.Map == nil {
		opts.Map = Self(gvk)
	}
	var obj client.Object
	if opts.MetadataOnly {
		pom := &metav1.PartialObjectMetadata{}
		pom.SetGroupVersionKind(gvk)
		obj = pom
	} else {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		obj = u
	}
	w := &watch{obj: obj, opts: opts}
	if s.queue != nil {
		if err := s.hookLocked(gvk, w); err != nil {
			return err
		}
	}
	s.watches[gvk] = w
	return nil
}

// hookLocked gets the informer and registers the handler. It does not wait
// for the informer to sync: a kind whose CRD is not served yet must not block
// the caller.
func (s *Set) hookLocked(gvk schema.GroupVersionKind, w *watch) error {
	inf, err := s.cache.GetInformer(s.ctx, w.obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("dynamicwatch: informer for %s: %w", gvk, err)
	}
	reg, err := inf.AddEventHandler(handler{q: s.queue, opts: w.opts})
	if err != nil {
		return fmt.Errorf("dynamicwatch: handler for %s: %w", gvk, err)
	}
	w.inf, w.reg = inf, reg
	return nil
}

// Unwatch stops watching gvk and stops its informer. Unwatching a kind that
// is not watched is a no-op.
func (s *Set) Unwatch(ctx context.Context, gvk schema.GroupVersionKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watches[gvk]
	if !ok {
		return nil
	}
	delete(s.watches, gvk)
	if w.inf == nil {
		return nil
	}
	if err := w.inf.RemoveEventHandler(w.reg); err != nil {
		return fmt.Errorf("dynamicwatch: removing handler for %s: %w", gvk, err)
	}
	return s.cache.RemoveInformer(ctx, w.obj)
}

// Watched lists the watched kinds, sorted.
func (s *Set) Watched() []schema.GroupVersionKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]schema.GroupVersionKind, 0, len(s.watches))
	for gvk := range s.watches {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// IsWatched reports whether gvk is watched.
func (s *Set) IsWatched(gvk schema.GroupVersionKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.watches[gvk]
	return ok
}

// HasSynced reports whether gvk is watched and its informer has synced, so
// that a cached List of that kind is complete.
func (s *Set) HasSynced(gvk schema.GroupVersionKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watches[gvk]
	return ok && w.inf != nil && w.reg.HasSynced()
}

// handler enqueues requests for informer events.
type handler struct {
	q    workqueue.TypedRateLimitingInterface[Request]
	opts Options
}

// object returns the informer's object as a client.Object (nil when it has
// no metadata).
func object(obj any) client.Object {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if o, ok := obj.(client.Object); ok {
		return o
	}
	// Informers deliver runtime objects; anything else has no metadata.
	if acc, err := meta.Accessor(obj); err == nil {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID(), Labels: acc.GetLabels()}}
	}
	return nil
}

func (h handler) enqueue(obj any, deleted bool) {
	o := object(obj)
	if o == nil || h.opts.Filter != nil && !h.opts.Filter(o) {
		return
	}
	if deleted && h.opts.Deleted != nil {
		h.opts.Deleted(o)
	}
	for _, r := range h.opts.Map(o) {
		h.q.Add(r)
	}
}

func (h handler) OnAdd(obj any, _ bool) {
	h.observe(nil, obj)
	if !h.echo(obj) {
		h.enqueue(obj, false)
	}
}

func (h handler) OnUpdate(old, obj any) {
	h.observe(old, obj)
	if !h.echo(obj) {
		h.enqueue(obj, false)
	}
}

// echo asks Options.Echo whether an add or update needs no reconcile.
func (h handler) echo(obj any) bool {
	if h.opts.Echo == nil {
		return false
	}
	o := object(obj)
	return o != nil && h.opts.Echo(o)
}

func (h handler) OnDelete(obj any) {
	h.observe(obj, nil)
	h.enqueue(obj, true)
}

// observe tells Options.Observe of an event.
func (h handler) observe(old, obj any) {
	if h.opts.Observe == nil {
		return
	}
	var o, n client.Object
	if old != nil {
		o = object(old)
	}
	if obj != nil {
		n = object(obj)
	}
	h.opts.Observe(o, n)
}

// Enqueue adds requests to the controller's queue (after Start; requests
// made before are dropped, as the initial list of each informer covers them).
func (s *Set) Enqueue(reqs ...Request) {
	s.mu.Lock()
	q := s.queue
	s.mu.Unlock()
	if q == nil {
		return
	}
	for _, r := range reqs {
		q.Add(r)
	}
}
