package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// PollInterval is how often Eventually, Consistently and Settled look again.
const PollInterval = 200 * time.Millisecond

// Eventually waits up to timeout for cond to report done, looking every
// PollInterval (and once right away). cond also returns a description of
// where things stand ("12 of 20 TenantGateways report their listeners"); when
// the time is up, the test fails with the last one. An error from cond fails
// the test at once.
func Eventually(t testing.TB, timeout time.Duration, cond func() (done bool, progress string, err error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), PollInterval, timeout, true, func(context.Context) (bool, error) {
		done, progress, err := cond()
		last = progress
		return done, err
	})
	if err != nil {
		if wait.Interrupted(err) {
			t.Fatalf("still not there after %s: %s", timeout, last)
		}
		t.Fatal(err)
	}
}

// Consistently checks for the whole of window that cond holds, looking every
// PollInterval, once right away and once more when the window is over. The
// test fails as soon as cond reports not ok, with its description of what
// went wrong ("the CRD was deleted while an instance exists"); an error from
// cond fails it at once too. It is for asserting that something does not
// happen: the window is the time the system under test is given to do it.
func Consistently(t testing.TB, window time.Duration, cond func() (ok bool, problem string, err error)) {
	t.Helper()
	start := time.Now()
	end := start.Add(window)
	for {
		ok, problem, err := cond()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("%s (%s into a %s window)", problem, time.Since(start).Round(time.Millisecond), window)
		}
		if !time.Now().Before(end) {
			return
		}
		time.Sleep(min(PollInterval, time.Until(end)))
	}
}

// Settled waits up to timeout until counter (a count that only grows, such
// as the writes a controller has made) has not moved for quiet, and returns
// its value then: in-flight work has run out. The test fails if the count
// is still moving when the time is up.
func Settled(t testing.TB, timeout, quiet time.Duration, counter func() int) int {
	t.Helper()
	n, since := counter(), time.Now()
	Eventually(t, timeout, func() (bool, string, error) {
		if c := counter(); c != n {
			n, since = c, time.Now()
		}
		still := time.Since(since)
		return still >= quiet, fmt.Sprintf("the count is at %d, unchanged for %s; waiting for %s without a change",
			n, still.Round(time.Millisecond), quiet), nil
	})
	return n
}

// Check fails the test on a non-nil error.
func Check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
