package gatewayruntime

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/record"
)

// negative are the TenantGateway condition types for which True reports a
// problem.
var negative = []string{gatewayv1alpha1.ConditionHostnamesRejected, gatewayv1alpha1.ConditionReconciling, gatewayv1alpha1.ConditionStalled}

// ChangedConditions returns the conditions of want whose status or reason
// differs from the one of the same type in have, or that have lacks and
// that report a problem, with the event type each deserves: Warning when it
// reports a problem (a positive type not True, a negative type True),
// Normal otherwise. Reconciling going True is Normal: it is progress, not a
// problem. A condition's first value is the object's first status, read
// where it is: an event only when it is a problem, as each of a
// TenantGateway's first conditions would otherwise cost the API server an
// event's write. Pure.
func ChangedConditions(have, want []metav1.Condition) (changed []metav1.Condition, types []string) {
	for _, c := range want {
		old := meta.FindStatusCondition(have, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
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
		if old == nil && typ == "Normal" {
			continue
		}
		changed = append(changed, c)
		types = append(types, typ)
	}
	return changed, types
}

// ConditionsChanged records one event per condition that ChangedConditions
// reports: reason the condition's reason, action its type, note
// "<Type>=<Status>: message".
func ConditionsChanged(e record.Events, obj runtime.Object, have, want []metav1.Condition) {
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
