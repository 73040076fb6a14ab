package record

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

func TestEvents(t *testing.T) {
	rec := events.NewFakeRecorder(4)
	e := Events{Recorder: rec}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}}
	e.Normal(ns, nil, "Labelled", "Label", "a note with 100% kept verbatim")
	e.Warning(ns, nil, "NotOwned", "Apply", "someone else's")
	for _, want := range []string{"Normal Labelled a note with 100% kept verbatim", "Warning NotOwned someone else's"} {
		if got := <-rec.Events; got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
	// A nil recorder records nothing and does not panic.
	Events{}.Warning(ns, nil, "NotOwned", "Apply", "dropped")
}

// capture is a recorder that keeps what it was given.
type capture struct{ regarding, related runtime.Object }

func (c *capture) Eventf(regarding, related runtime.Object, _, _, _, _ string, _ ...any) {
	c.regarding, c.related = regarding, related
}

// TestUnversioned: the objects are named without their resourceVersion, the
// kind of a typed object coming from the scheme.
func TestUnversioned(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", UID: "u1", ResourceVersion: "7"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "c", UID: "u2", ResourceVersion: "8"}}
	rec := &capture{}
	Events{Recorder: rec, Scheme: scheme.Scheme}.Normal(ns, cm, "Labelled", "Label", "note")
	for _, tc := range []struct {
		got  runtime.Object
		want corev1.ObjectReference
	}{
		{rec.regarding, corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "tenant-a", UID: "u1"}},
		{rec.related, corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "tenant-a", Name: "c", UID: "u2"}},
	} {
		ref, ok := tc.got.(*corev1.ObjectReference)
		if !ok || *ref != tc.want {
			t.Errorf("recorded %#v, want %#v", tc.got, tc.want)
		}
	}
	// No related object stays none.
	Events{Recorder: rec, Scheme: scheme.Scheme}.Normal(ns, nil, "Labelled", "Label", "note")
	if rec.related != nil {
		t.Errorf("related = %#v, want nil", rec.related)
	}
	// Without a scheme a typed object without its kind is passed as it is.
	Events{Recorder: rec}.Normal(ns, nil, "Labelled", "Label", "note")
	if rec.regarding != ns {
		t.Errorf("recorded %#v, want the object itself", rec.regarding)
	}
}

// TestEventsFold: with the real events.k8s.io recorder, two events of one
// decision on an object written in between are one Event, a series of two.
func TestEventsFold(t *testing.T) {
	cs := fake.NewClientset()
	s := startSender(t, cs, clock.RealClock{})
	e := For(s.Recorder(scheme.Scheme, "test"), fakeClient{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", UID: "u1", ResourceVersion: "7"}}
	e.Warning(ns, nil, "NotOwned", "Label", "first")
	// The first event is written before the second is recorded, so the
	// second finds it to fold into.
	list := func() []eventsv1.Event {
		l, err := cs.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		return len(list()) == 1, "waiting for the first event", nil
	})
	ns.ResourceVersion = "8"
	e.Warning(ns, nil, "NotOwned", "Label", "second")
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		l := list()
		return len(l) == 1 && l[0].Series != nil && l[0].Series.Count == 2, fmt.Sprintf("%d events, want a series of two", len(l)), nil
	})
	if l := list(); len(l) != 1 || l[0].Note != "first" {
		t.Fatalf("events %+v, want one whose note is the first", l)
	}
}

type fakeClient struct{}

func (fakeClient) Scheme() *runtime.Scheme { return scheme.Scheme }
