package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// PollInterval is how often Eventually looks again.
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

// Check fails the test on a non-nil error.
func Check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
