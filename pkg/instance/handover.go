package instance

// The backing objects whose create entry has been handed over to the apply
// entry: their next apply needs no read of the API server.

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
)

// handedOver remembers, by namespace and name, the backing objects that have
// no create entry left: the applier (ssa.Applier.Creates) hands a plain
// create's fields to the apply entry before the first apply of another
// shape than the create's, reading the object's managed fields from the API
// server because the cache drops them; once such an apply has succeeded
// there is no create entry left, so every later apply of the object is
// served from the cache instead of costing one GET per instance on every
// definition change. A create of the name (an object made anew), or the
// create's mark still on the object, forgets it. After a restart each object
// is read once, at its first apply of a new shape.
type handedOver struct{ keys sync.Map }

func (h *handedOver) has(key client.ObjectKey) bool { _, ok := h.keys.Load(key); return ok }
func (h *handedOver) forget(key client.ObjectKey)   { h.keys.Delete(key) }

// handOverReader is the applier's reader of managed fields (Creates): an
// object with no create entry left is read from the cache (which holds no
// managed fields, so no hand-over is found), any other from the API server.
// It learns which objects those are as ssa.CreateEntries.
type handOverReader struct {
	cache, api client.Reader
	done       *handedOver
}

func (r handOverReader) MayHaveCreateEntry(key client.ObjectKey) { r.done.forget(key) }
func (r handOverReader) HasNoCreateEntry(key client.ObjectKey)   { r.done.keys.Store(key, struct{}{}) }

func (r handOverReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.done.has(key) {
		if err := r.cache.Get(ctx, key, obj, opts...); err == nil {
			obj.SetManagedFields(nil)
			return nil
		}
		r.done.forget(key) // not cached (yet, or any more): ask the API server
	}
	return r.api.Get(ctx, key, obj, opts...)
}

func (r handOverReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.api.List(ctx, list, opts...)
}

// forgetTarget drops the backing object of the instance req names from
// handedOver once the instance is gone (its definition still known).
func (r *Reconciler) forgetTarget(req dynamicwatch.Request) {
	def := r.defs.forKind(req.GVK)
	if def == nil {
		return
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(req.GVK)
	inst.SetNamespace(req.Namespace)
	inst.SetName(req.Name)
	c, ok := r.applier.Creates.(handOverReader)
	if !ok {
		return
	}
	c.done.forget(client.ObjectKey{Namespace: r.Components.Placement.Namespace(inst), Name: r.Backend.TargetName(def, inst)})
}
