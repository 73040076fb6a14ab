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

// TestWritesEcho: the event of the version a write made is its echo, once;
// an earlier event is not and keeps the write; an awaited write has no echo.
func TestWritesEcho(t *testing.T) {
	var w Writes[string, string]
	w.Wrote("a", "10", "12", "ours")
	for _, c := range []struct {
		version string
		echo    bool
		left    int
	}{
		{"10", false, 1}, // the version the write replaced: still behind
		{"11", false, 1}, // another writer's, before the write
		{"12", true, 0},  // the write's own
		{"12", false, 0}, // told again: forgotten already
	} {
		if got := w.Echo("a", c.version); got != c.echo || w.Len() != c.left {
			t.Errorf("Echo(a, %s) = %v with %d remembered, want %v with %d", c.version, got, w.Len(), c.echo, c.left)
		}
	}

	w.Wrote("b", "10", "12", "ours")
	if w.Echo("b", "13") || w.Len() != 0 {
		t.Error("a later version, someone else's: taken for an echo, or the write kept")
	}

	w.Wrote("c", "10", "12", "ours")
	if _, behind := w.Await("c", "10"); !behind {
		t.Fatal("Await(c, 10): want behind")
	}
	if w.Echo("c", "12") {
		t.Error("an awaited write's event: taken for an echo")
	}

	// A write over an awaited one stays awaited.
	w.Wrote("d", "10", "12", "ours")
	w.Await("d", "10")
	w.Wrote("d", "12", "14", "again")
	if w.Echo("d", "14") {
		t.Error("a write over an awaited one: its event taken for an echo")
	}

	// A write whose answer gave no version has no echo.
	w.Wrote("e", "10", "", "ours")
	if w.Echo("e", "11") {
		t.Error("no version made: an event taken for its echo")
	}
}

// TestWritesSending walks writes through the orders their answer and their watch
// events can come in.
func TestWritesSending(t *testing.T) {
	type step struct {
		op      string // writing, wrote, unsent, event, await, forget
		version string
		want    bool // wrote, unsent: enqueue the held event; event: an echo (or held)
	}
	for _, c := range []struct {
		name  string
		steps []step
		left  int
	}{
		{"the answer, then the echo", []step{
			{"writing", "10", false}, {"wrote", "12", false}, {"event", "12", true}}, 0},
		{"the echo before the answer", []step{
			{"writing", "10", false}, {"event", "12", true}, {"wrote", "12", false}}, 0},
		{"another writer's event, then the echo, both before the answer", []step{
			{"writing", "10", false}, {"event", "11", true}, {"event", "12", true}, {"wrote", "12", false}}, 0},
		{"another writer's event, older than the write, before the answer", []step{
			{"writing", "10", false}, {"event", "11", true}, {"wrote", "12", false}, {"event", "12", true}}, 0},
		{"another writer's event after the write, before the answer", []step{
			{"writing", "10", false}, {"event", "12", true}, {"event", "13", true}, {"wrote", "12", true}}, 0},
		{"an event while a write failed", []step{
			{"writing", "10", false}, {"event", "11", true}, {"unsent", "", true}}, 0},
		{"a write that failed, no event", []step{
			{"writing", "10", false}, {"unsent", "", false}, {"event", "11", false}}, 0},
		{"an event older than the write keeps it", []step{
			{"writing", "10", false}, {"wrote", "12", false}, {"event", "11", false}, {"event", "12", true}}, 0},
		{"a later version, someone else's", []step{
			{"writing", "10", false}, {"wrote", "12", false}, {"event", "13", false}, {"event", "12", false}}, 0},
		{"the echo told twice", []step{
			{"writing", "10", false}, {"wrote", "12", false}, {"event", "12", true}, {"event", "12", false}}, 0},
		{"waiting for the echo", []step{
			{"writing", "", false}, {"wrote", "5", false}}, 1},
		{"deleted while waiting for the echo", []step{
			{"writing", "", false}, {"wrote", "5", false}, {"forget", "", false}}, 0},
		{"deleted while sending: the answer is remembered as any write", []step{
			{"writing", "10", false}, {"forget", "", false}, {"wrote", "12", false}, {"event", "12", true}}, 0},
		{"an awaited write's echo held", []step{
			{"writing", "10", false}, {"wrote", "12", false}, {"await", "10", true}, {"writing", "12", false},
			{"event", "12", true}, {"event", "14", true}, {"wrote", "14", true}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s Writes[string, string]
			var replaced string
			for i, st := range c.steps {
				var got bool
				switch st.op {
				case "writing":
					s.Writing("a")
					replaced = st.version
					continue
				case "unsent":
					got = s.Unsent("a")
				case "wrote":
					got = s.Wrote("a", replaced, st.version, "v")
				case "event":
					got = s.Echo("a", st.version)
				case "forget":
					s.Forget("a")
					continue
				case "await":
					_, got = s.Await("a", st.version)
				}
				if got != st.want {
					t.Errorf("step %d, %s %s: %v, want %v", i, st.op, st.version, got, st.want)
				}
			}
			if s.Len() != c.left {
				t.Errorf("%d remembered, want %d", s.Len(), c.left)
			}
		})
	}
}
