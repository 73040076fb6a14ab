package ownwrite

import "testing"

// TestSends walks writes through the orders their answer and their watch
// events can come in.
func TestSends(t *testing.T) {
	type step struct {
		op      string // writing, wrote, event, forget
		version string
		want    bool // wrote: enqueue the held event; event: an echo (or held)
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
			{"writing", "10", false}, {"event", "11", true}, {"wrote", "", true}}, 0},
		{"a write that failed, no event", []step{
			{"writing", "10", false}, {"wrote", "", false}, {"event", "11", false}}, 0},
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
		{"deleted while sending", []step{
			{"writing", "10", false}, {"forget", "", false}, {"wrote", "12", false}, {"event", "12", false}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s Sends[string]
			for i, st := range c.steps {
				var got bool
				switch st.op {
				case "writing":
					s.Writing("a", st.version)
					continue
				case "wrote":
					got = s.Wrote("a", st.version)
				case "event":
					got = s.Echo("a", st.version)
				case "forget":
					s.Forget("a")
					continue
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
