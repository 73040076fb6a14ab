package instance

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ownSyncSource is the events of one kind's informer, as controller-runtime's
// Kind source gives them, but its controller starts its workers once that
// informer has its first list, not once every informer of the cache has.
//
// The Kind source waits for the whole cache. For the definitions controller
// that is the backing objects' informer too: on a restart over 100,000
// HelmReleases, streaming them took 26 s, and only then were the definitions
// read and the instances' informers started, which then took 16 s more to
// list the instances. The definitions are a handful of objects; with this
// source the instances' informers start at once and list beside the backing
// objects'. Nothing is lost by not waiting: a reconcile reading a kind from
// the cache waits for that kind's informer (controller-runtime's cache reader
// blocks on an informer that has not synced).
type ownSyncSource struct {
	informer cache.Informer
	source   *source.Informer
}

var _ source.SyncingSource = ownSyncSource{}

// ownSync returns the source of obj's kind in c: requests for the objects
// themselves (handler.EnqueueRequestForObject).
func ownSync(ctx context.Context, c cache.Cache, obj client.Object) (ownSyncSource, error) {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return ownSyncSource{}, fmt.Errorf("the informer of %T: %w", obj, err)
	}
	return ownSyncSource{informer: inf, source: &source.Informer{Informer: inf, Handler: &handler.EnqueueRequestForObject{}}}, nil
}

func (s ownSyncSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return s.source.Start(ctx, q)
}

// WaitForSync waits for this kind's informer alone.
func (s ownSyncSource) WaitForSync(ctx context.Context) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return fmt.Errorf("timed out waiting for %s to have its first list", s)
	}
	return nil
}

func (s ownSyncSource) String() string { return "own-sync " + s.source.String() }
