package gatewayctl

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// Events records the gateway controllers' decisions as Kubernetes events.
// A nil Recorder records nothing (unit tests of the glue).
//
// The events.k8s.io recorder folds events on the same object with the same
// reason, action and related object into one series that keeps the first
// note, whatever the later notes say. So an event about another object
// names it as related (the Gateway applied, the namespace labelled), and a
// condition's event has the condition type as its action: distinct
// decisions stay distinct events.
type Events struct {
	Recorder events.EventRecorder
}

// Normal records a Normal event on obj; related, when not nil, is the
// other object the decision concerns.
func (e Events) Normal(obj, related runtime.Object, reason, action, note string) {
	if e.Recorder != nil {
		e.Recorder.Eventf(obj, related, "Normal", reason, action, "%s", note)
	}
}

// Warning records a Warning event on obj, as Normal does.
func (e Events) Warning(obj, related runtime.Object, reason, action, note string) {
	if e.Recorder != nil {
		e.Recorder.Eventf(obj, related, "Warning", reason, action, "%s", note)
	}
}

// negative are the TenantGateway condition types for which True reports a
// problem.
var negative = []string{gatewayv1alpha1.ConditionHostnamesRejected, gatewayv1alpha1.ConditionReconciling, gatewayv1alpha1.ConditionStalled}

// ChangedConditions returns the conditions of want whose status or reason
// differs from the one of the same type in have (or that have lacks), with
// the event type each deserves: Warning when it reports a problem (a
// positive type not True, a negative type True), Normal otherwise.
// Reconciling going True is Normal: it is progress, not a problem. Pure.
func ChangedConditions(have, want []metav1.Condition) (changed []metav1.Condition, types []string) {
	for _, c := range want {
		if old := meta.FindStatusCondition(have, c.Type); old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		typ := "Normal"
		switch {
		case c.Type == gatewayv1alpha1.ConditionReconciling:
		case slices.Contains(negative, c.Type):
			if c.Status == metav1.ConditionTrue {
				typ = "Warning"
			}
		case c.Status == metav1.ConditionFalse:
			typ = "Warning"
		}
		changed = append(changed, c)
		types = append(types, typ)
	}
	return changed, types
}

// ConditionsChanged records one event per condition that ChangedConditions
// reports: reason the condition's reason, action its type, note
// "<Type>=<Status>: message".
func (e Events) ConditionsChanged(obj runtime.Object, have, want []metav1.Condition) {
	changed, types := ChangedConditions(have, want)
	for i, c := range changed {
		note := c.Type + "=" + string(c.Status) + ": " + c.Message
		if types[i] == "Warning" {
			e.Warning(obj, nil, c.Reason, c.Type, note)
		} else {
			e.Normal(obj, nil, c.Reason, c.Type, note)
		}
	}
}
