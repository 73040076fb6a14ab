package instance

// The backing objects whose create entry has been handed over to the apply
// entry: their next apply needs no read of the API server.

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
)

// handedOver remembers, by namespace and name, the backing objects an apply
// of this process has written: the applier (ssa.Applier.Creates) hands a
// plain create's fields to the apply entry before the first apply, reading
// the object's managed fields from the API server because the cache drops
// them; once an apply has succeeded there is no create entry left, so every
// later apply of the object is served from the cache instead of costing one
// GET per instance on every definition change. A create of the name (an
// object made anew) forgets it. After a restart each object is read once, at
// its first apply.
type handedOver struct{ keys sync.Map }

func (h *handedOver) has(key client.ObjectKey) bool { _, ok := h.keys.Load(key); return ok }
func (h *handedOver) forget(key client.ObjectKey)   { h.keys.Delete(key) }

// applyClient is the applier's client: it records each successful apply in
// done, and forgets a name it creates.
type applyClient struct {
	client.Client
	done *handedOver
}

func (c applyClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if err := c.Client.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	if u, ok := obj.(interface {
		GetName() string
		GetNamespace() string
	}); ok {
		c.done.keys.Store(client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}, struct{}{})
	}
	return nil
}

func (c applyClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.done.forget(client.ObjectKeyFromObject(obj))
	return c.Client.Create(ctx, obj, opts...)
}

// handOverReader is the applier's reader of managed fields (Creates): an
// object an apply of this process wrote is read from the cache (it has no
// create entry to hand over, and the cache holds no managed fields, so none
// is found), any other from the API server.
type handOverReader struct {
	cache, api client.Reader
	done       *handedOver
}

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
	c, ok := r.applier.Client.(applyClient)
	if !ok {
		return
	}
	c.done.forget(client.ObjectKey{Namespace: r.Components.Placement.Namespace(inst), Name: r.Backend.TargetName(def, inst)})
}
