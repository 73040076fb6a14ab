package ownwrite

import "testing"

func TestWrites(t *testing.T) {
	var w Writes[string, string]
	if _, behind := w.Behind("a", "1"); behind {
		t.Fatal("nothing written: not behind")
	}
	w.Wrote("a", "1", "2", "status of 2")
	w.Wrote("b", "7", "", "other")

	// The cache still shows the version the write replaced.
	if v, behind := w.Behind("a", "1"); !behind || v != "status of 2" {
		t.Fatalf("Behind(a, 1) = %q, %v; want the write, true", v, behind)
	}
	// Asked again on the same version: still behind.
	if _, behind := w.Behind("a", "1"); !behind {
		t.Fatal("Behind(a, 1) again: want true")
	}
	// The cache moved on: the write is forgotten, also for that old version.
	if _, behind := w.Behind("a", "2"); behind {
		t.Fatal("Behind(a, 2): want false")
	}
	if _, behind := w.Behind("a", "1"); behind {
		t.Fatal("Behind(a, 1) after the cache moved on: want false")
	}
	if w.Len() != 1 {
		t.Fatalf("Len = %d, want 1 (b)", w.Len())
	}
	w.Forget("b")
	if w.Len() != 0 {
		t.Fatalf("Len after Forget = %d, want 0", w.Len())
	}
}

// TestWritesOverAnotherWrite: a version between the one the write replaced
// and the one it made is another writer's, which the write was applied over:
// the cache that shows it has not caught up with the write either.
func TestWritesOverAnotherWrite(t *testing.T) {
	var w Writes[string, string]
	w.Wrote("a", "10", "12", "ours")
	if v, behind := w.Behind("a", "11"); !behind || v != "ours" {
		t.Fatalf("Behind(a, 11) = %q, %v; want the write, true", v, behind)
	}
	if _, behind := w.Behind("a", "12"); behind {
		t.Fatal("Behind(a, 12), the version the write made: want false")
	}
	w.Wrote("b", "10", "12", "ours")
	if _, behind := w.Behind("b", "13"); behind {
		t.Fatal("Behind(b, 13), a later version: want false")
	}
	w.Wrote("c", "10", "12", "ours")
	if _, behind := w.Behind("c", "x1"); behind {
		t.Fatal("Behind(c, x1), a version that does not compare: want false")
	}
}
