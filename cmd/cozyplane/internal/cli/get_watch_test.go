package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
)

// apiScript is what the fake API server answers, in order, to get's lists
// and watches of postgreses: each watch replays its events, then closes
// (the API server's timeout) unless open, or fails with err.
type apiScript struct {
	lists   []*unstructured.UnstructuredList
	watches []scriptedWatch

	mu         sync.Mutex
	listed     int
	watched    int
	watchedRVs []string
}

type scriptedWatch struct {
	events []watch.Event
	open   bool
	err    error
}

func (s *apiScript) install(t *testing.T, client *clienttesting.Fake) {
	client.PrependReactor("list", "postgreses", func(clienttesting.Action) (bool, runtime.Object, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.listed == len(s.lists) {
			return true, nil, fmt.Errorf("list %d: not in the script", s.listed+1)
		}
		s.listed++
		return true, s.lists[s.listed-1].DeepCopy(), nil
	})
	client.PrependWatchReactor("postgreses", func(a clienttesting.Action) (bool, watch.Interface, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.watchedRVs = append(s.watchedRVs, a.(clienttesting.WatchAction).GetWatchRestrictions().ResourceVersion)
		if s.watched == len(s.watches) {
			// Past the script: a watch with nothing to say.
			return true, watch.NewFake(), nil
		}
		sw := s.watches[s.watched]
		s.watched++
		if sw.err != nil {
			return true, nil, sw.err
		}
		w := watch.NewFakeWithChanSize(len(sw.events), false)
		for _, ev := range sw.events {
			w.Action(ev.Type, ev.Object.DeepCopyObject())
		}
		if !sw.open {
			w.Stop()
		}
		return true, w, nil
	})
}

func (s *apiScript) rvs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watchedRVs)
}

// pg is a Postgres in tenant-a at resourceVersion rv, Ready as ready says.
func pg(name, rv, ready string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps.cozystack.io/v1alpha1")
	u.SetKind("Postgres")
	u.SetNamespace("tenant-a")
	u.SetName(name)
	u.SetResourceVersion(rv)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": ready, "reason": "R" + rv}}, "status", "conditions")
	return u
}

func pgList(rv string, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "PostgresList"})
	l.SetResourceVersion(rv)
	for _, u := range items {
		l.Items = append(l.Items, *u)
	}
	return l
}

func expiredEvent() watch.Event {
	status := apierrors.NewResourceExpired("too old resource version: 11 (15)").ErrStatus
	return watch.Event{Type: watch.Error, Object: &status}
}

// runWatch runs get --watch args over the script until stdout holds
// lines lines (or the command ends), then interrupts it.
func runWatch(t *testing.T, s *apiScript, lines int, args ...string) (string, error) {
	t.Helper()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	cmd, client := fakeRoot(t, out, errOut)
	s.install(t, &client.Fake)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		cmd.SetArgs(append([]string{"get", "postgres", "-n", "tenant-a", "--watch"}, args...))
		done <- cmd.ExecuteContext(ctx)
	}()
	deadline := time.After(20 * time.Second)
	for strings.Count(out.String(), "\n") < lines {
		select {
		case err := <-done:
			return out.String(), err
		case <-deadline:
			cancel()
			<-done
			t.Fatalf("%d lines of %d after 20s:\n%s%s", strings.Count(out.String(), "\n"), lines, out, errOut)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	err := <-done
	if errOut.String() != "" {
		t.Errorf("stderr: %s", errOut)
	}
	return out.String(), err
}

// The API server closes a watch (it is opened again from the last
// resourceVersion seen), then answers 410 Expired in the watch and then to
// the watch request itself: each time get lists again and prints only what
// changed meanwhile (a deletion, an addition, a modification; nothing for
// an instance unchanged), then watches from the new list's resourceVersion.
func TestGetWatchResumes(t *testing.T) {
	script := func() *apiScript {
		return &apiScript{
			lists: []*unstructured.UnstructuredList{
				pgList("10", pg("orders", "5", "True"), pg("billing", "6", "False")),
				pgList("20", pg("zeta", "12", "True"), pg("orders", "15", "False"), pg("alpha", "18", "True")),
				pgList("21", pg("zeta", "12", "True"), pg("orders", "15", "False"), pg("alpha", "18", "True")),
			},
			watches: []scriptedWatch{
				{events: []watch.Event{{Type: watch.Modified, Object: pg("orders", "11", "True")}}},
				{events: []watch.Event{{Type: watch.Added, Object: pg("zeta", "12", "True")}, expiredEvent()}},
				{err: apierrors.NewGone("too old resource version: 20 (30)")},
				{events: []watch.Event{{Type: watch.Modified, Object: pg("alpha", "22", "False")}}, open: true},
			},
		}
	}
	wantRVs := []string{"10", "11", "20", "21"}

	t.Run("json", func(t *testing.T) {
		s := script()
		out, err := runWatch(t, s, 8, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var ev struct {
				Type   string
				Object unstructured.Unstructured
			}
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			got = append(got, ev.Type+" "+ev.Object.GetName()+"@"+ev.Object.GetResourceVersion())
		}
		want := []string{
			"ADDED billing@6", "ADDED orders@5", // the list
			"MODIFIED orders@11",                                        // the first watch, closed by the API server
			"ADDED zeta@12",                                             // the second, from 11, ended by 410 Expired
			"DELETED billing@6", "ADDED alpha@18", "MODIFIED orders@15", // the list from 20: zeta unchanged
			// the watch from 20 answered 410 Gone; the list from 21 changed nothing
			"MODIFIED alpha@22", // the watch from 21
		}
		if !slices.Equal(got, want) {
			t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rvs := s.rvs(); !slices.Equal(rvs[:min(len(rvs), 4)], wantRVs) {
			t.Errorf("watched from %v, want %v", rvs, wantRVs)
		}
	})

	// The table, with --status ready: a line per change of a ready
	// instance, a deleted one shown Deleted.
	t.Run("table", func(t *testing.T) {
		s := script()
		s.lists[0] = pgList("10", pg("orders", "5", "True"), pg("billing", "6", "True"))
		out, err := runWatch(t, s, 7, "--status", "ready")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			got = append(got, f[1]+" "+f[2]+" "+f[3])
		}
		want := []string{
			"NAME READY REASON", "billing True R6", "orders True R5",
			"orders True R11",
			"zeta True R12",
			"billing Deleted -", "alpha True R18", // orders@15 is not ready; alpha@22 neither
		}
		if !slices.Equal(got, want) {
			t.Errorf("table:\n%s", out)
		}
	})
}

// Errors a new attempt does not mend end the command with their exit
// status; one it may mend (500) is retried from the same resourceVersion.
func TestGetWatchErrors(t *testing.T) {
	internal := apierrors.NewInternalError(fmt.Errorf("etcd leader changed")).ErrStatus
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps.cozystack.io", Resource: "postgreses"}, "", fmt.Errorf("no")).ErrStatus
	for _, tc := range []struct {
		name    string
		watches []scriptedWatch
		code    int
		rvs     []string
	}{
		{"forbidden in the watch after a 500", []scriptedWatch{
			{events: []watch.Event{{Type: watch.Error, Object: &internal}}},
			{events: []watch.Event{{Type: watch.Error, Object: &forbidden}}},
		}, ExitFailure, []string{"10", "10"}},
		{"the kind gone", []scriptedWatch{
			{err: apierrors.NewNotFound(schema.GroupResource{Group: "apps.cozystack.io", Resource: "postgreses"}, "")},
		}, ExitNotFound, []string{"10"}},
		{"forbidden watch request", []scriptedWatch{
			{err: apierrors.NewForbidden(schema.GroupResource{Group: "apps.cozystack.io", Resource: "postgreses"}, "", fmt.Errorf("no"))},
		}, ExitFailure, []string{"10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &apiScript{lists: []*unstructured.UnstructuredList{pgList("10", pg("orders", "5", "True"))}, watches: tc.watches}
			out, err := runWatch(t, s, 1000, "-o", "json")
			if code := ExitCode(err); code != tc.code {
				t.Errorf("exit %d (%v), want %d", code, err, tc.code)
			}
			if !strings.Contains(fmt.Sprint(err), "watching postgreses: ") {
				t.Errorf("error %q", err)
			}
			if strings.Count(out, "\n") != 1 {
				t.Errorf("output:\n%s", out)
			}
			if rvs := s.rvs(); !slices.Equal(rvs, tc.rvs) {
				t.Errorf("watched from %v, want %v", rvs, tc.rvs)
			}
		})
	}
}
