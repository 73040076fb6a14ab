package instance

import (
	"errors"
	"hash/fnv"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownerIndex finds the cached backing objects of an instance by its kind,
// namespace and name (OwnerKey): a delete finds an instance's objects in the
// cache, with no LIST of the API server however many objects the cluster
// holds.
//
// It is kept from the events of the backing objects' watch, before their
// requests are enqueued (dynamicwatch.Options.Observe), not by the
// informer's indexer: client-go's indexer keeps each key as a set of its
// own and the object's key once more in it, some 350 bytes an object here,
// where an instance has one backing object. This keeps, under the hash of
// the owner key, the objects the informer's store holds (the same values,
// no copy): some 70 bytes an object. Two owner keys with one hash share a
// bucket; readers check what each object's labels name (Owns, Orphan).
type ownerIndex struct {
	mu      sync.RWMutex
	byOwner map[uint64][]client.Object
	// synced reports whether the watch has seen the informer's first list:
	// until then an instance's objects may be missing.
	synced func() bool
}

func newOwnerIndex() *ownerIndex { return &ownerIndex{byOwner: map[uint64][]client.Object{}} }

// ownerHash is the bucket of an owner key.
func ownerHash(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return h.Sum64()
}

// errIndexNotSynced: the index has not seen every cached backing object yet.
var errIndexNotSynced = errors.New("the index of the backing objects by instance has not seen the cache's first list yet")

// objects returns the indexed objects whose owner key is key (and any that
// share its hash), as the cache stores them: the caller must not change them.
func (x *ownerIndex) objects(key string) ([]client.Object, error) {
	if x.synced != nil && !x.synced() {
		return nil, errIndexNotSynced
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(x.byOwner[ownerHash(key)]), nil
}

// set puts o (nil: none, a delete) under its owner key in place of the
// object of the same namespace and name that old names (nil: none, an
// add), wherever that was: dynamicwatch.Options.Observe.
func (x *ownerIndex) set(old, o client.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old != nil {
		x.removeLocked(old)
	}
	if o == nil {
		return
	}
	key, ok := OwnerKeyOf(o)
	if !ok {
		return
	}
	x.removeLocked(o) // an add of an object already there (a relist)
	h := ownerHash(key)
	x.byOwner[h] = append(x.byOwner[h], o)
}

// removeLocked drops the object of o's namespace and name from o's owner
// key.
func (x *ownerIndex) removeLocked(o client.Object) {
	key, ok := OwnerKeyOf(o)
	if !ok {
		return
	}
	h := ownerHash(key)
	objs := x.byOwner[h]
	for i, have := range objs {
		if have.GetNamespace() == o.GetNamespace() && have.GetName() == o.GetName() {
			objs = append(objs[:i], objs[i+1:]...)
			break
		}
	}
	if len(objs) == 0 {
		delete(x.byOwner, h)
	} else {
		x.byOwner[h] = objs
	}
}
