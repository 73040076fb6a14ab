package record

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LostMetric counts the events a process recorded and did not write, by
// why: "queue-full" (dropped, too many waiting to be written), "refused"
// (the API server refused it) or "unreachable" (every try failed in
// transit). An event refused because its namespace is being deleted is not
// counted: it has nowhere to go and nobody to read it. Documented in
// docs/metrics.md.
const LostMetric = "cozystack_events_lost_total"

// The reasons of LostMetric.
const (
	lostQueueFull   = "queue-full"
	lostRefused     = "refused"
	lostUnreachable = "unreachable"
)

var lost = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: LostMetric,
	Help: "Events recorded and not written, by reason (queue-full, refused, unreachable).",
}, []string{"reason"})

func init() {
	metrics.Registry.MustRegister(lost)
	// Every reason is exported from the start, at 0, so a rate over it
	// means something before the first loss.
	for _, reason := range []string{lostQueueFull, lostRefused, lostUnreachable} {
		lost.WithLabelValues(reason)
	}
}

// Sender writes the events of one process's controllers as events.k8s.io
// Events and folds repeats into series, as client-go's events broadcaster
// does: two events are isomorphic when their type, reason, action,
// reporting controller and instance, and regarding and related objects are
// the same; the first is created, the second patches a series of 2 onto
// it, and later ones count up the series, which is written when it ends (no
// repeat for six minutes) or every thirty minutes while it goes on.
//
// What it keeps of a recent event is only what a later write of its series
// needs: the written Event's namespace and name, the counts and times,
// under a 64-bit hash of what makes events isomorphic (some 150 bytes).
// client-go's broadcaster keeps a whole copy of every event of the last six
// minutes and a key of two full object references beside it (some 1,000
// bytes each: 6 MB of a controller's heap after a create of 10,000
// instances, one event each) and writes each event from a goroutine of its
// own. Here a few workers write, each series always through the same one,
// so a series is never patched before its Event is created; an event that
// finds its worker's queue full is dropped and counted, as the broadcaster
// drops when its queue is full.
//
// A Sender is a manager Runnable that runs on every replica (events are
// recorded by whoever reconciles); events recorded before it starts wait in
// the queues.
type Sender struct {
	sink  events.EventSink
	host  string
	clock clock.Clock
	log   logr.Logger
	// retryAfter is the pause before a write that failed in transit is
	// tried again (jittered); maxTries bounds the tries of one write.
	retryAfter time.Duration
	maxTries   int

	queues  []chan job
	dropped atomic.Int64

	mu        sync.Mutex
	series    map[uint64]*series
	lastStamp int64
}

const (
	// seriesEnd is how long a series goes without a repeat before it ends
	// (client-go's finishTime).
	seriesEnd = 6 * time.Minute
	// seriesRefresh is how often a series that goes on is written
	// (client-go's refreshTime).
	seriesRefresh = 30 * time.Minute
	// senderWorkers write events; each has a queue of queueLength.
	senderWorkers = 16
	queueLength   = 1024
	// noteLimit is the longest note the API server accepts (bytes).
	noteLimit = 1024
)

// series is what the Sender keeps of a recent event: where its Event is,
// how often it was seen and how often that was written.
type series struct {
	namespace, name string
	count, written  int32
	// first is the written Event's eventTime; last the latest repeat;
	// writtenAt when the count was last written (Unix nanoseconds).
	first, last, writtenAt int64
}

// job is one write: a new Event (patch nil), or a series onto the Event
// ev names, created with it when that Event is gone (ev whole) or given up
// (ev names it only).
type job struct {
	ev    *eventsv1.Event
	patch []byte
}

// NewSender is a Sender writing through the API server cfg names.
func NewSender(cfg *rest.Config, httpClient *http.Client, log logr.Logger) (*Sender, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the events client: %w", err)
	}
	return newSender(&events.EventSinkImpl{Interface: cs.EventsV1()}, clock.RealClock{}, log), nil
}

func newSender(sink events.EventSink, clk clock.Clock, log logr.Logger) *Sender {
	host, _ := os.Hostname()
	s := &Sender{sink: sink, host: host, clock: clk, log: log, retryAfter: 10 * time.Second, maxTries: 12,
		series: map[uint64]*series{}}
	for range senderWorkers {
		s.queues = append(s.queues, make(chan job, queueLength))
	}
	return s
}

// Recorder is the recorder of the controller named controller: the
// reporting controller of its events, and with this host's name their
// reporting instance. scheme gives the kinds of typed objects.
func (s *Sender) Recorder(scheme *runtime.Scheme, controller string) events.EventRecorder {
	return &recorder{s: s, scheme: scheme, controller: controller, instance: controller + "-" + s.host}
}

// Dropped is the number of events dropped because a queue was full.
func (s *Sender) Dropped() int64 { return s.dropped.Load() }

// NeedLeaderElection: every replica writes the events it records.
func (s *Sender) NeedLeaderElection() bool { return false }

// Start writes events until ctx is done.
func (s *Sender) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, q := range s.queues {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-q:
					s.write(ctx, j)
				}
			}
		})
	}
	wg.Go(func() { wait.UntilWithContext(ctx, s.sweep, time.Minute) })
	wg.Wait()
	return nil
}

type recorder struct {
	s                    *Sender
	scheme               *runtime.Scheme
	controller, instance string
}

// Eventf implements events.EventRecorder.
func (r *recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	message := truncate(fmt.Sprintf(note, args...), noteLimit)
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.s.log.Error(err, "could not name the object of an event; it is not recorded", "reason", reason, "note", message)
		return
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		if relatedRef, err = reference.GetReference(r.scheme, related); err != nil {
			r.s.log.V(4).Info("could not name the related object of an event", "error", err.Error())
		}
	}
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		r.s.log.Error(nil, "unsupported event type; the event is not recorded", "type", eventtype, "reason", reason)
		return
	}
	r.s.log.V(1).Info(message, "type", eventtype, "object", ref, "reason", reason)
	ev := &eventsv1.Event{
		ReportingController: r.controller, ReportingInstance: r.instance,
		Type: eventtype, Reason: reason, Action: action, Note: message,
		Regarding: *ref, Related: relatedRef,
	}
	r.s.record(ev)
}

// record folds ev into its series and queues the write it calls for.
func (s *Sender) record(ev *eventsv1.Event) {
	now := s.clock.Now()
	key := isomorphicKey(ev)
	s.mu.Lock()
	se, seen := s.series[key]
	if !seen {
		ev.Namespace = ev.Regarding.Namespace
		if ev.Namespace == "" {
			ev.Namespace = metav1.NamespaceDefault
		}
		ev.Name = fmt.Sprintf("%v.%x", ev.Regarding.Name, s.nameStamp(now))
		ev.EventTime = metav1.NewMicroTime(now)
		s.series[key] = &series{namespace: ev.Namespace, name: ev.Name, count: 1, written: 1,
			first: now.UnixNano(), last: now.UnixNano(), writtenAt: now.UnixNano()}
		s.mu.Unlock()
		s.enqueue(key, job{ev: ev})
		return
	}
	se.count++
	se.last = now.UnixNano()
	if se.count != 2 {
		s.mu.Unlock() // written when the series ends, or at its refresh
		return
	}
	ev.Namespace, ev.Name = se.namespace, se.name
	ev.EventTime = metav1.NewMicroTime(time.Unix(0, se.first))
	ev.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(now)}
	se.written, se.writtenAt = 2, now.UnixNano()
	s.mu.Unlock()
	s.enqueue(key, job{ev: ev, patch: seriesPatch(ev.Series)})
}

// nameStamp is the time in an Event's name: now's nanoseconds, made to
// increase from one Event to the next, so two events on one object in the
// same tick of a coarse clock do not get the same name. Called under mu.
func (s *Sender) nameStamp(now time.Time) int64 {
	n := now.UnixNano()
	if n <= s.lastStamp {
		n = s.lastStamp + 1
	}
	s.lastStamp = n
	return n
}

// sweep ends the series with no repeat for seriesEnd and writes the count
// of those ended or going on for seriesRefresh since it was last written.
func (s *Sender) sweep(context.Context) {
	now := s.clock.Now()
	type write struct {
		key uint64
		j   job
	}
	var writes []write
	s.mu.Lock()
	for key, se := range s.series {
		ended := now.Sub(time.Unix(0, se.last)) >= seriesEnd
		if se.count > se.written && (ended || now.Sub(time.Unix(0, se.writtenAt)) >= seriesRefresh) {
			sr := &eventsv1.EventSeries{Count: se.count, LastObservedTime: metav1.NewMicroTime(time.Unix(0, se.last))}
			ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: se.namespace, Name: se.name}}
			writes = append(writes, write{key, job{ev: ev, patch: seriesPatch(sr)}})
			se.written, se.writtenAt = se.count, now.UnixNano()
		}
		if ended {
			delete(s.series, key)
		}
	}
	s.mu.Unlock()
	for _, w := range writes {
		s.enqueue(w.key, w.j)
	}
}

// enqueue hands j to the worker of its series, or drops it when that
// worker's queue is full.
func (s *Sender) enqueue(key uint64, j job) {
	select {
	case s.queues[key%uint64(len(s.queues))] <- j:
	default:
		s.dropped.Add(1)
		lost.WithLabelValues(lostQueueFull).Inc()
		s.log.V(1).Info("event dropped: too many events waiting to be written", "namespace", j.ev.Namespace, "name", j.ev.Name)
	}
}

// write sends j, trying again a while when the request did not reach the
// API server or a series was created a moment ago by another writer.
func (s *Sender) write(ctx context.Context, j job) {
	for try := 1; ; try++ {
		retry, err := s.send(ctx, j)
		if !retry {
			switch {
			case err == nil:
			case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
				// The object's namespace is being deleted, the object with
				// it: nothing can be written there, and nobody is left to
				// read it. Not a loss to alert on (client-go's recorder
				// keeps quiet about it too).
				s.log.V(1).Info("event not written: its namespace is being deleted", "namespace", j.ev.Namespace, "name", j.ev.Name, "reason", j.ev.Reason)
			default:
				lost.WithLabelValues(lostRefused).Inc()
				s.log.Error(err, "event not written", "namespace", j.ev.Namespace, "name", j.ev.Name, "reason", j.ev.Reason)
			}
			return
		}
		if try >= s.maxTries {
			lost.WithLabelValues(lostUnreachable).Inc()
			s.log.Error(err, "event not written: too many tries", "namespace", j.ev.Namespace, "name", j.ev.Name, "reason", j.ev.Reason)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(wait.Jitter(s.retryAfter, 0.25)):
		}
	}
}

// send makes one attempt at j and says whether to try again.
func (s *Sender) send(ctx context.Context, j job) (retry bool, err error) {
	if j.patch != nil {
		_, err = s.sink.Patch(ctx, j.ev, j.patch)
		switch {
		case apierrors.IsNotFound(err) && j.ev.Reason == "":
			return false, nil // the Event expired; a series' last count is not worth one of its own
		case !apierrors.IsNotFound(err):
			return retryable(err, false), err
		}
	}
	ev := j.ev.DeepCopy()
	ev.ResourceVersion = ""
	_, err = s.sink.Create(ctx, ev)
	return retryable(err, j.patch != nil), err
}

// retryable says whether a write that failed with err may succeed later: not
// when the API server refused it, but for a series whose Event another
// writer created a moment ago.
func retryable(err error, series bool) bool {
	if err == nil {
		return false
	}
	if _, ok := err.(*rest.RequestConstructionError); ok {
		return false
	}
	if apierrors.IsAlreadyExists(err) {
		return series
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		return false
	}
	return true // in transit
}

// isomorphicKey hashes what makes two events one series. Pure.
func isomorphicKey(ev *eventsv1.Event) uint64 {
	h := fnv.New64a()
	w := func(s string) {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	ref := func(r *corev1.ObjectReference) {
		if r == nil {
			w("")
			return
		}
		for _, f := range []string{r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion, r.ResourceVersion, r.FieldPath} {
			w(f)
		}
	}
	for _, f := range []string{ev.Type, ev.Action, ev.Reason, ev.ReportingController, ev.ReportingInstance} {
		w(f)
	}
	ref(&ev.Regarding)
	ref(ev.Related)
	return h.Sum64()
}

// seriesPatch is the strategic merge patch that sets sr on an Event.
func seriesPatch(sr *eventsv1.EventSeries) []byte {
	b, _ := json.Marshal(map[string]any{"series": sr}) // cannot fail: a count and a time
	return b
}

// truncate cuts s to at most n bytes, at a rune boundary. Pure.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
