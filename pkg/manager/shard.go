package manager

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// shardedCache returns a cache constructor for a shard: objects of the kinds
// sharded reports true for are cached (and watched, and read) only when they
// match sel; every other kind is cached whole. The manager's client reads
// through it, so a shard never sees, and never reconciles, another shard's
// objects, and holds only its own in memory. When w builds the caches'
// informers, it builds the shard's with the shard's selector.
func shardedCache(sel labels.Selector, sharded func(schema.GroupVersionKind) bool, w *wire) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		all, err := cache.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		shardOpts := opts
		shardOpts.DefaultLabelSelector = sel
		if w != nil && w.enabled {
			// The shard's informers list with its selector.
			shardOpts.NewInformer = w.informers(cfg, shardOpts)
		}
		mine, err := cache.New(cfg, shardOpts)
		if err != nil {
			return nil, err
		}
		return &byKindCache{scheme: opts.Scheme, sharded: sharded, shard: mine, all: all}, nil
	}
}

// byKindCache sends each request to shard or all by the object's kind.
type byKindCache struct {
	scheme     *runtime.Scheme
	sharded    func(schema.GroupVersionKind) bool
	shard, all cache.Cache
}

var _ cache.Cache = &byKindCache{}

func (c *byKindCache) forGVK(gvk schema.GroupVersionKind) cache.Cache {
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if c.sharded(gvk) {
		return c.shard
	}
	return c.all
}

func (c *byKindCache) forObject(o runtime.Object) (cache.Cache, error) {
	gvk, err := apiutil.GVKForObject(o, c.scheme)
	if err != nil {
		return nil, err
	}
	return c.forGVK(gvk), nil
}

func (c *byKindCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	ca, err := c.forObject(obj)
	if err != nil {
		return err
	}
	return ca.Get(ctx, key, obj, opts...)
}

func (c *byKindCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ca, err := c.forObject(list)
	if err != nil {
		return err
	}
	return ca.List(ctx, list, opts...)
}

func (c *byKindCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	ca, err := c.forObject(obj)
	if err != nil {
		return nil, err
	}
	return ca.GetInformer(ctx, obj, opts...)
}

func (c *byKindCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	return c.forGVK(gvk).GetInformerForKind(ctx, gvk, opts...)
}

func (c *byKindCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	ca, err := c.forObject(obj)
	if err != nil {
		return err
	}
	return ca.RemoveInformer(ctx, obj)
}

func (c *byKindCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	ca, err := c.forObject(obj)
	if err != nil {
		return err
	}
	return ca.IndexField(ctx, obj, field, extract)
}

// Start runs both caches until ctx ends or one of them fails, whose error
// it returns (the manager then stops, ending the other).
func (c *byKindCache) Start(ctx context.Context) error {
	errs := make(chan error, 2)
	for _, ca := range []cache.Cache{c.shard, c.all} {
		go func() { errs <- ca.Start(ctx) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (c *byKindCache) WaitForCacheSync(ctx context.Context) bool {
	a := c.shard.WaitForCacheSync(ctx)
	b := c.all.WaitForCacheSync(ctx)
	return a && b
}

// PrefixedRequirements returns sel's requirements with each key prefixed:
// the selector of a shard's instances, rewritten for the objects that carry
// the instances' labels under a prefix (the backing objects carry an
// instance's label k as apps.cozystack.io-k). Nil for a nil selector.
func PrefixedRequirements(sel labels.Selector, prefix string) ([]labels.Requirement, error) {
	if sel == nil {
		return nil, nil
	}
	reqs, _ := sel.Requirements()
	out := make([]labels.Requirement, 0, len(reqs))
	for _, r := range reqs {
		p, err := labels.NewRequirement(prefix+r.Key(), r.Operator(), r.Values().List())
		if err != nil {
			return nil, fmt.Errorf("selector key %q cannot be prefixed with %q: %w", r.Key(), prefix, err)
		}
		out = append(out, *p)
	}
	return out, nil
}
