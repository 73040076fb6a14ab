package testenv

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatal instead of stopping the
// calling test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	panic(r)
}

// fails runs check with a recorder and returns the message it failed
// with, "" if it passed.
func fails(check func(testing.TB)) (failed string) {
	r := &recorder{TB: &testing.T{}}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	check(r)
	return ""
}

func run(cond func() (bool, string, error), timeout time.Duration) string {
	return fails(func(tb testing.TB) { Eventually(tb, timeout, cond) })
}

func TestEventually(t *testing.T) {
	calls := 0
	if msg := run(func() (bool, string, error) { calls++; return calls == 3, "", nil }, 5*time.Second); msg != "" || calls != 3 {
		t.Fatalf("done on the third look: failed %q after %d calls", msg, calls)
	}
	msg := run(func() (bool, string, error) { return false, "1 of 2 ready", nil }, 500*time.Millisecond)
	if !strings.Contains(msg, "1 of 2 ready") {
		t.Fatalf("a timeout reports the last progress, got %q", msg)
	}
	msg = run(func() (bool, string, error) { return false, "", errors.New("boom") }, 5*time.Second)
	if msg != "boom" {
		t.Fatalf("an error fails at once, got %q", msg)
	}
}

func TestConsistently(t *testing.T) {
	calls := 0
	start := time.Now()
	msg := fails(func(tb testing.TB) {
		Consistently(tb, 500*time.Millisecond, func() (bool, string, error) { calls++; return true, "", nil })
	})
	if msg != "" || time.Since(start) < 500*time.Millisecond || calls < 3 {
		t.Fatalf("holding throughout passes after the window, looking more than once: failed %q after %s and %d calls", msg, time.Since(start), calls)
	}
	calls = 0
	start = time.Now()
	msg = fails(func(tb testing.TB) {
		Consistently(tb, 5*time.Second, func() (bool, string, error) { calls++; return calls < 2, "the CRD went", nil })
	})
	if !strings.Contains(msg, "the CRD went") || time.Since(start) > 2*time.Second {
		t.Fatalf("a broken condition fails at once with its description, got %q after %s", msg, time.Since(start))
	}
	msg = fails(func(tb testing.TB) {
		Consistently(tb, 5*time.Second, func() (bool, string, error) { return true, "", errors.New("boom") })
	})
	if msg != "boom" {
		t.Fatalf("an error fails at once, got %q", msg)
	}
	// The last look is at the end of the window: a change just before it
	// is caught.
	end := time.Now().Add(300 * time.Millisecond)
	msg = fails(func(tb testing.TB) {
		Consistently(tb, 300*time.Millisecond, func() (bool, string, error) { return time.Now().Before(end), "changed late", nil })
	})
	if !strings.Contains(msg, "changed late") {
		t.Fatalf("a change at the end of the window was missed, got %q", msg)
	}
}

func TestSettled(t *testing.T) {
	// A count that moves for a while, then stops.
	start := time.Now()
	count := func() int { return int(min(time.Since(start), 600*time.Millisecond) / (100 * time.Millisecond)) }
	var got int
	msg := fails(func(tb testing.TB) { got = Settled(tb, 5*time.Second, 400*time.Millisecond, count) })
	if msg != "" || got != 6 || time.Since(start) < time.Second {
		t.Fatalf("settled at %d after %s (failed %q), want 6 after the count stopped and stayed for the quiet window", got, time.Since(start), msg)
	}
	// A count that never stops moving.
	n := 0
	msg = fails(func(tb testing.TB) {
		Settled(tb, 600*time.Millisecond, 400*time.Millisecond, func() int { n++; return n })
	})
	if !strings.Contains(msg, "waiting for 400ms without a change") {
		t.Fatalf("a count that keeps moving fails when the time is up, got %q", msg)
	}
}
