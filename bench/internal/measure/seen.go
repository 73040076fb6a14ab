package measure

import (
	"sync"
	"time"
)

// Seen counts the distinct names marked (objects seen in a state through a
// watch) and wakes a waiter at the mark that reaches its number, so a round's
// time is counted to that event, not to a poll after it. The zero value is
// ready to use.
type Seen struct {
	mu      sync.Mutex
	names   map[string]bool
	want    int
	reached chan struct{}
}

// Mark counts name once, however often it is marked.
func (s *Seen) Mark(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[name] {
		return
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
	if s.reached != nil && len(s.names) >= s.want {
		close(s.reached)
		s.reached = nil
	}
}

// Len is the number of distinct names marked.
func (s *Seen) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.names)
}

// Wait returns true once n names are marked, false after timeout.
func (s *Seen) Wait(n int, timeout time.Duration) bool {
	s.mu.Lock()
	if len(s.names) >= n {
		s.mu.Unlock()
		return true
	}
	reached := make(chan struct{})
	s.want, s.reached = n, reached
	s.mu.Unlock()
	select {
	case <-reached:
		return true
	case <-time.After(timeout):
		return false
	}
}
