// Package ownwrite lets a controller read its own writes past a cache that
// has not caught up with them yet.
//
// A controller writes an object and, before the write's watch event reaches
// the cache, is asked to reconcile it again (an event of another object it
// watches came first). Deciding on the cached copy would undo or repeat the
// write: the status of the old version would be written again, an event
// told twice. So a controller remembers, per object, the resourceVersion
// its write replaced; while the cache still shows that version, the write
// is known to be in place and what it wrote, not the cached copy, is the
// truth. So is it while the cache shows a version older than the one the
// write made: another writer's, between this controller's read and its
// write, which the write was applied over. Any other version ends the wait:
// the cache has caught up, or someone else wrote since.
package ownwrite

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Writes remembers the last write of each object, by a key the caller
// chooses (a struct of strings costs no allocation per lookup), and a value
// describing it. The zero value is ready to use; it is safe for concurrent
// use.
type Writes[K comparable, V any] struct {
	mu   sync.Mutex
	over map[K]write[V]
}

type write[V any] struct {
	replaced, made string
	value          V
}

// Wrote records a write to the object key that replaced version replaced
// (the resourceVersion the write was made over) and made version made (the
// one the API server answered with; empty when not known), described by v.
func (w *Writes[K, V]) Wrote(key K, replaced, made string, v V) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over == nil {
		w.over = map[K]write[V]{}
	}
	w.over[key] = write[V]{replaced: replaced, made: made, value: v}
}

// Behind reports whether cached, the resourceVersion the cache shows for
// key, is older than the last write: the version it replaced, or one before
// the version it made (resourceVersions compared as the API server orders
// them; one that does not compare is not older). It returns that write's
// value. Any other version forgets the write.
func (w *Writes[K, V]) Behind(key K, cached string) (V, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.over[key]
	if ok && (last.replaced == cached || older(cached, last.made)) {
		return last.value, true
	}
	delete(w.over, key)
	var zero V
	return zero, false
}

// Forget drops what is remembered of key (the object is gone).
func (w *Writes[K, V]) Forget(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.over, key)
}

// Len is the number of writes remembered.
func (w *Writes[K, V]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.over)
}

// older reports whether resourceVersion a comes before b.
func older(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c < 0
}
