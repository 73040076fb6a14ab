package measure

import (
	"testing"
	"time"
)

func TestSeen(t *testing.T) {
	var s Seen
	s.Mark("a")
	s.Mark("a")
	if s.Len() != 1 {
		t.Fatalf("Len = %d after marking one name twice, want 1", s.Len())
	}
	if !s.Wait(1, time.Millisecond) {
		t.Fatal("Wait for a number already reached: timed out")
	}
	done := make(chan bool)
	go func() { done <- s.Wait(3, time.Minute) }()
	s.Mark("b")
	s.Mark("c")
	if !<-done {
		t.Fatal("Wait: not woken by the mark that reached its number")
	}
	if s.Wait(4, 10*time.Millisecond) {
		t.Fatal("Wait for a number never reached: returned true")
	}
}
