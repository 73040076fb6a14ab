// Package ownwrite lets a controller read its own writes past a cache that
// has not caught up with them yet, and spares it the reconcile of their
// watch events.
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
//
// The event of the version a write made is that write's echo: the reconcile
// that wrote acted on the API server's answer, which is what the event
// shows, so the event needs no reconcile (Echo). The echo may come before
// the answer: while a write is being sent (Writing), the object's events
// are held, and once it is answered (Wrote, Unsent), a held event that
// showed another version is handed back to be enqueued.
package ownwrite

import (
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Writes remembers the last write of each object, by a key the caller
// chooses (a struct of strings costs no allocation per lookup), and a value
// describing it. The zero value is ready to use; it is safe for concurrent
// use. One object's writes must not overlap.
type Writes[K comparable, V any] struct {
	mu   sync.Mutex
	over map[K]write[V]
}

type write[V any] struct {
	replaced, made string
	// awaited: a caller found the cache behind this write and left the
	// object for the write's watch event to bring back (Await), so that
	// event is no echo.
	awaited bool
	// sending: the write is not answered yet; held is the version the
	// latest event showed meanwhile ("" none).
	sending bool
	held    string
	value   V
}

// Writing records that a write of key is being sent: until Wrote or
// Unsent, the object's events are held (Echo). What is known of the last
// write before it is kept meanwhile.
func (w *Writes[K, V]) Writing(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over == nil {
		w.over = map[K]write[V]{}
	}
	last := w.over[key]
	last.sending, last.held = true, ""
	w.over[key] = last
}

// Wrote records a write to the object key that replaced version replaced
// (the resourceVersion the write was made over) and made version made (the
// one the API server answered with; empty when not known), described by v.
// It reports whether an event held while the write was being sent
// (Writing) must be enqueued now: one that showed a version other than made
// and not older than it (an older one is another writer's, which the write
// was applied over and its answer shows). A write over one that is awaited
// stays awaited: the caller waiting is brought back by this write's event.
func (w *Writes[K, V]) Wrote(key K, replaced, made string, v V) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over == nil {
		w.over = map[K]write[V]{}
	}
	last := w.over[key]
	next := write[V]{replaced: replaced, made: made, value: v, awaited: last.awaited}
	if !last.sending || last.held == "" {
		w.over[key] = next
		return false
	}
	switch {
	case last.held == made && !last.awaited:
		delete(w.over, key) // the echo came first, and was held
		return false
	case made == "" || last.held == made || !older(last.held, made):
		delete(w.over, key)
		return true
	}
	w.over[key] = next
	return false
}

// Unsent ends a write Writing began that made nothing (it failed, or was
// not needed). It reports whether an event held meanwhile must be enqueued
// now. The write before it is forgotten.
func (w *Writes[K, V]) Unsent(key K) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.over[key]
	if !ok || !last.sending {
		return false
	}
	delete(w.over, key)
	return last.held != ""
}

// Behind reports whether cached, the resourceVersion the cache shows for
// key, is older than the last write: the version it replaced, or one before
// the version it made (resourceVersions compared as the API server orders
// them; one that does not compare is not older). It returns that write's
// value. Any other version forgets the write.
func (w *Writes[K, V]) Behind(key K, cached string) (V, bool) {
	return w.behind(key, cached, false)
}

// Await is Behind for a caller that, finding the cache behind, leaves the
// object for the write's own watch event to bring back: the write is marked
// awaited, so Echo does not call that event an echo.
func (w *Writes[K, V]) Await(key K, cached string) (V, bool) {
	return w.behind(key, cached, true)
}

func (w *Writes[K, V]) behind(key K, cached string, await bool) (V, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.over[key]
	if ok && (last.replaced == cached || older(cached, last.made)) {
		if await && !last.awaited {
			last.awaited = true
			w.over[key] = last
		}
		return last.value, true
	}
	if !last.sending {
		delete(w.over, key)
	}
	var zero V
	return zero, false
}

// Echo is told of a watch event showing key at version, once the cache's
// store holds it, and reports whether the event needs no reconcile: it came
// while a write was being sent (held: Wrote or Unsent decides), or it shows
// the version the last write made and no caller awaits that write. Like
// Behind, it forgets the write unless the event is older than it; unlike
// Behind, it decides and forgets at once, so a caller cannot come to await
// a write whose event was already taken for an echo.
func (w *Writes[K, V]) Echo(key K, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.over[key]
	switch {
	case !ok:
		return false
	case last.sending:
		last.held = version
		w.over[key] = last
		return true
	case last.replaced == version || older(version, last.made):
		return false
	}
	delete(w.over, key)
	return last.made != "" && last.made == version && !last.awaited
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
