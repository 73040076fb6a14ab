package ownwrite

import "sync"

// Sends follows a controller's writes of objects to their watch events, so
// that the event of a write's own version, its echo, costs no reconcile:
// the reconcile that wrote the object acted on the API server's answer,
// which is what the event shows. The echo may come before the answer: while
// a write is being sent, the object's events are held (Echo reports them as
// echoes); once it is answered, a held event that showed another version is
// handed back to be enqueued (Wrote). The zero value is ready to use; it is
// safe for concurrent use. One object's writes must not overlap.
type Sends[K comparable] struct {
	mu   sync.Mutex
	over map[K]send
}

type send struct {
	replaced, made string
	// sending: the write is not answered yet; held is the version the
	// latest event showed meanwhile ("" none).
	sending bool
	held    string
}

// Writing records that a write of key over version replaced (empty for a
// create) is being sent.
func (s *Sends[K]) Writing(key K, replaced string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over == nil {
		s.over = map[K]send{}
	}
	s.over[key] = send{replaced: replaced, sending: true}
}

// Wrote ends the write Writing began: made is the version the API server
// answered with, empty when nothing was written (the write failed, or was
// not needed). It reports whether an event held meanwhile must be enqueued
// now: one that showed a version other than made and not older than it (a
// version older than made is another writer's, which the write was applied
// over and its answer shows).
func (s *Sends[K]) Wrote(key K, made string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.over[key]
	if !ok || !last.sending {
		return false
	}
	held := last.held
	switch {
	case made == "":
		delete(s.over, key)
		return held != ""
	case held == made:
		delete(s.over, key) // the echo came first, and was held
		return false
	case held != "" && !older(held, made):
		delete(s.over, key)
		return true
	}
	s.over[key] = send{replaced: last.replaced, made: made}
	return false
}

// Echo is told of a watch event showing key at version, once the cache's
// store holds it, and reports whether it needs no reconcile: it came while
// a write was being sent (held: Wrote decides), or it shows the version the
// last write made. An event older than that write keeps it remembered; any
// other forgets it.
func (s *Sends[K]) Echo(key K, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.over[key]
	switch {
	case !ok:
		return false
	case last.sending:
		last.held = version
		s.over[key] = last
		return true
	case last.replaced == version || older(version, last.made):
		return false
	}
	delete(s.over, key)
	return version == last.made
}

// Forget drops what is remembered of key (the object is gone).
func (s *Sends[K]) Forget(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.over, key)
}

// Len is the number of writes being sent or awaiting their echo.
func (s *Sends[K]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.over)
}
