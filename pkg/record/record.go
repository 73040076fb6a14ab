// Package record is how every controller records its decisions as
// Kubernetes events (events.k8s.io). The reasons are declared in api/,
// beside the conditions of the kind an event is recorded on.
//
// Events are written by a Sender (sender.go). Like client-go's
// events.k8s.io recorder, it folds events on the same object with the same
// reason, action and related object into one series that keeps the first
// note, whatever later notes say. So an event about another object names it
// as related (the HelmRelease created, the ClusterRole published, the
// namespace labelled), and an event about a condition has the condition
// type as its action: distinct decisions stay distinct events.
//
// The recorder tells objects apart by their whole reference, and a
// reference made from an object carries its resourceVersion, which every
// write changes: an object whose status is written between two events would
// never have them folded. So Events names the objects by references without
// a resourceVersion (the uid still tells an object from an earlier one of
// the same name).
package record

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
)

// Events records on behalf of one controller. A nil Recorder records
// nothing (unit tests of the glue).
type Events struct {
	Recorder events.EventRecorder
	// Scheme gives the kind of a typed object that does not carry one
	// (the client's scheme). Without it, such an object is named with its
	// resourceVersion, so its events do not fold.
	Scheme *runtime.Scheme
}

// Schemed is what has a scheme: a controller-runtime client.
type Schemed interface{ Scheme() *runtime.Scheme }

// For is the Events recorded through rec, with the scheme of c (nil: none).
func For(rec events.EventRecorder, c Schemed) Events {
	e := Events{Recorder: rec}
	if rec != nil && c != nil {
		e.Scheme = c.Scheme()
	}
	return e
}

// Normal records a Normal event on obj; related, when not nil, is the other
// object the decision concerns.
func (e Events) Normal(obj, related runtime.Object, reason, action, note string) {
	e.record(obj, related, "Normal", reason, action, note)
}

// Warning records a Warning event on obj, as Normal does.
func (e Events) Warning(obj, related runtime.Object, reason, action, note string) {
	e.record(obj, related, "Warning", reason, action, note)
}

func (e Events) record(obj, related runtime.Object, eventType, reason, action, note string) {
	if e.Recorder == nil {
		return
	}
	if related != nil {
		related = e.unversioned(related)
	}
	e.Recorder.Eventf(e.unversioned(obj), related, eventType, reason, action, "%s", note)
}

// unversioned is the reference to obj without its resourceVersion, or obj
// itself when no reference can be made (the recorder then reports why).
func (e Events) unversioned(obj runtime.Object) runtime.Object {
	ref, err := reference.GetReference(e.Scheme, obj)
	if err != nil {
		return obj
	}
	unversioned := *ref
	unversioned.ResourceVersion = ""
	return &unversioned
}
