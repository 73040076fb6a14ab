// Package record is how every controller records its decisions as
// Kubernetes events (events.k8s.io). The reasons are declared in api/,
// beside the conditions of the kind an event is recorded on.
//
// The events.k8s.io recorder folds events on the same object with the same
// reason, action and related object into one series that keeps the first
// note, whatever later notes say. So an event about another object names it
// as related (the HelmRelease created, the ClusterRole published, the
// namespace labelled), and an event about a condition has the condition
// type as its action: distinct decisions stay distinct events.
package record

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Events records on behalf of one controller. A nil Recorder records
// nothing (unit tests of the glue).
type Events struct {
	Recorder events.EventRecorder
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
	e.Recorder.Eventf(obj, related, eventType, reason, action, "%s", note)
}
