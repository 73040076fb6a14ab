package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// startSender runs a Sender writing to cs until the test ends.
func startSender(t *testing.T, cs *fake.Clientset, clk clock.Clock) *Sender {
	t.Helper()
	return startSenderTo(t, &events.EventSinkImpl{Interface: cs.EventsV1()}, clk)
}

func startSenderTo(t *testing.T, sink events.EventSink, clk clock.Clock) *Sender {
	t.Helper()
	s := newSender(sink, clk, testr.New(t))
	s.retryAfter = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func listEvents(t *testing.T, cs *fake.Clientset) []eventsv1.Event {
	t.Helper()
	l, err := cs.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// seriesCount is the count of ev's series, 1 without one.
func seriesCount(ev eventsv1.Event) int32 {
	if ev.Series == nil {
		return 1
	}
	return ev.Series.Count
}

// TestSenderSeries: isomorphic events fold into one Event whose series is
// written at the second and, from then on, when the series ends; the
// Sender then forgets it. Other events stay apart.
func TestSenderSeries(t *testing.T) {
	cs := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	s := startSender(t, cs, clk)
	rec := s.Recorder(scheme.Scheme, "test")
	ns := &corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "tenant-a", UID: "u1"}
	cm := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "tenant-a", Name: "c", UID: "u2"}
	rec.Eventf(cm, ns, corev1.EventTypeWarning, "NotOwned", "Apply", "first %d", 1)
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Created", "Create", "another decision")
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		return len(listEvents(t, cs)) == 2, "waiting for two events", nil
	})
	clk.Step(time.Second)
	rec.Eventf(cm, ns, corev1.EventTypeWarning, "NotOwned", "Apply", "second")
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		for _, ev := range listEvents(t, cs) {
			if ev.Reason == "NotOwned" && seriesCount(ev) == 2 {
				return true, "", nil
			}
		}
		return false, "waiting for a series of two", nil
	})
	// A third repeat is counted, not written, until the series ends.
	clk.Step(time.Second)
	rec.Eventf(cm, ns, corev1.EventTypeWarning, "NotOwned", "Apply", "third")
	last := clk.Now()
	s.sweep(context.Background())
	clk.Step(seriesEnd - time.Second)
	s.sweep(context.Background())
	// The other decision, last seen at the start, has ended; the repeated
	// one, last seen two seconds later, has not.
	if got := len(s.series); got != 1 {
		t.Fatalf("%d series kept, want the repeated one only", got)
	}
	clk.Step(time.Second)
	s.sweep(context.Background())
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		for _, ev := range listEvents(t, cs) {
			if ev.Reason == "NotOwned" && seriesCount(ev) == 3 {
				if !ev.Series.LastObservedTime.Time.Equal(last) {
					return false, "", fmt.Errorf("last observed %v, want %v", ev.Series.LastObservedTime, last)
				}
				return true, "", nil
			}
		}
		return false, "waiting for the series' last count", nil
	})
	evs := listEvents(t, cs)
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	for _, ev := range evs {
		if ev.Reason == "NotOwned" && (ev.Note != "first 1" || ev.Related == nil || ev.Related.Name != "tenant-a" || ev.Regarding.Name != "c" ||
			ev.Namespace != "tenant-a" || ev.ReportingController != "test" || !strings.HasPrefix(ev.ReportingInstance, "test-")) {
			t.Errorf("series event %+v: want the first note, both objects and the reporter", ev)
		}
	}
	if len(s.series) != 0 {
		t.Errorf("%d series kept after their end, want none", len(s.series))
	}
}

// flaky fails its first writes in transit, then passes them on.
type flaky struct {
	events.EventSink
	failures atomic.Int32
}

func (f *flaky) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if f.failures.Add(-1) >= 0 {
		return nil, errors.New("connection refused")
	}
	return f.EventSink.Create(ctx, ev)
}

// TestSenderRetries: a write that did not reach the API server is tried
// again; a series whose Event is gone is created whole.
func TestSenderRetries(t *testing.T) {
	cs := fake.NewClientset()
	sink := &flaky{EventSink: &events.EventSinkImpl{Interface: cs.EventsV1()}}
	sink.failures.Store(2)
	s := startSenderTo(t, sink, clock.RealClock{})
	rec := s.Recorder(scheme.Scheme, "test")
	ns := &corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "tenant-a", UID: "u1"}
	rec.Eventf(ns, nil, corev1.EventTypeNormal, "Labelled", "Label", "once")
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		return len(listEvents(t, cs)) == 1, "waiting for the event after two failed tries", nil
	})
	ev := listEvents(t, cs)[0]
	if ev.Namespace != metav1.NamespaceDefault {
		t.Errorf("event of a cluster-scoped object in %q, want %q", ev.Namespace, metav1.NamespaceDefault)
	}
	if err := cs.EventsV1().Events(ev.Namespace).Delete(context.Background(), ev.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.Eventf(ns, nil, corev1.EventTypeNormal, "Labelled", "Label", "twice")
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		l := listEvents(t, cs)
		return len(l) == 1 && seriesCount(l[0]) == 2 && l[0].Name == ev.Name, "waiting for the series created anew", nil
	})
}

// TestSenderDropsWhenFull: recording never blocks; what does not fit in
// the queues is dropped and counted.
func TestSenderDropsWhenFull(t *testing.T) {
	s := newSender(&events.EventSinkImpl{Interface: fake.NewClientset().EventsV1()}, clock.RealClock{}, testr.New(t))
	rec := s.Recorder(scheme.Scheme, "test")
	n := senderWorkers*queueLength + 100
	for i := range n {
		cm := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: fmt.Sprintf("c%d", i)}
		rec.Eventf(cm, nil, corev1.EventTypeNormal, "Created", "Create", "x")
	}
	queued := 0
	for _, q := range s.queues {
		queued += len(q)
	}
	if d := s.Dropped(); d == 0 || int(d)+queued != n {
		t.Errorf("dropped %d and queued %d of %d, want some dropped and the rest queued", d, queued, n)
	}
}

// TestSenderRefuses: an event of an unsupported type is not recorded; a
// long note is cut to what the API server accepts.
func TestSenderRefuses(t *testing.T) {
	s := newSender(&events.EventSinkImpl{Interface: fake.NewClientset().EventsV1()}, clock.RealClock{}, testr.New(t))
	rec := s.Recorder(scheme.Scheme, "test")
	cm := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "c"}
	rec.Eventf(cm, nil, "Odd", "Created", "Create", "x")
	if len(s.series) != 0 {
		t.Fatalf("an event of type Odd was recorded")
	}
	rec.Eventf(cm, nil, corev1.EventTypeNormal, "Created", "Create", "%s", strings.Repeat("é", noteLimit))
	j := <-s.queues[isomorphicKey(&eventsv1.Event{ReportingController: "test", ReportingInstance: "test-" + s.host,
		Type: corev1.EventTypeNormal, Reason: "Created", Action: "Create", Regarding: *cm})%senderWorkers]
	if len(j.ev.Note) != noteLimit || !strings.HasSuffix(j.ev.Note, "é") {
		t.Errorf("note of %d bytes ending %q, want %d ending with a whole rune", len(j.ev.Note), j.ev.Note[len(j.ev.Note)-2:], noteLimit)
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},
		{"éé", 3, "é"},
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// refusing fails every create with err.
type refusing struct {
	events.EventSink
	err error
}

func (r refusing) Create(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	return nil, r.err
}

// TestSenderNamespaceTerminating: an event the API server refuses because
// its namespace is being deleted is not counted as lost (the object goes
// with its namespace); any other refusal is.
func TestSenderNamespaceTerminating(t *testing.T) {
	gr := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	terminating := apierrors.NewForbidden(gr, "app-1.1", errors.New("unable to create new content in namespace tenant-a because it is being terminated"))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace tenant-a is being terminated", Field: "metadata.namespace"})
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "app-1.1"}, Reason: "BackingObjectDeleted"}
	for _, c := range []struct {
		name string
		err  error
		lost float64
	}{
		{"namespace terminating", terminating, 0},
		{"forbidden", apierrors.NewForbidden(gr, "app-1.1", errors.New("no")), 1},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, "app-1.1", nil), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSender(refusing{err: c.err}, clock.RealClock{}, testr.New(t))
			before := testutil.ToFloat64(lost.WithLabelValues(lostRefused))
			s.write(context.Background(), job{ev: ev})
			if got := testutil.ToFloat64(lost.WithLabelValues(lostRefused)) - before; got != c.lost {
				t.Errorf("refused events counted: %v, want %v", got, c.lost)
			}
		})
	}
}
