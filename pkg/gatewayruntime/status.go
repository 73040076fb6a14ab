package gatewayruntime

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/record"
	"github.com/cozyplane/cozyplane/pkg/statusapply"
)

// Status is the part of a TenantGateway's status one controller owns.
type Status struct {
	// Conditions are every condition type the controller owns, every time:
	// server-side apply removes a type the manager applied before and leaves
	// out now.
	Conditions []metav1.Condition
	// Absent are the condition types the controller owns that Conditions
	// leaves out when they do not hold (statusapply.Part.Absent).
	Absent []string
	// Listeners replaces status.listeners when OwnsListeners is set
	// (gateway-listeners only).
	Listeners     []gatewayv1alpha1.TenantGatewayListenerStatus
	OwnsListeners bool
	// ObservedGeneration sets status.observedGeneration to the object's
	// generation (gateway-listeners only: the summary is its to write).
	ObservedGeneration bool
}

// StatusWriter writes a controller's part of TenantGateway status with
// statusapply.Writer: server-side apply as its own field manager, so the
// four controllers never overwrite each other's conditions, and nothing
// when its part is already as desired.
type StatusWriter struct {
	Client       client.Client
	FieldManager string
	// Events, when its Recorder is set, records every condition whose
	// status or reason a write changes (ChangedConditions): the
	// controller's decisions, refusals included, as events.
	Events record.Events
}

// Write brings tgw's status to st for the fields this controller owns.
// Conditions are stamped with tgw's generation; a condition keeps its
// lastTransitionTime while its status does not change. It reports whether it
// wrote.
func (w StatusWriter) Write(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway, st Status) (bool, error) {
	part, err := statusPart(tgw, st)
	if err != nil {
		return false, err
	}
	sw := statusapply.Writer{Client: w.Client, FieldManager: w.FieldManager,
		Changed: func(obj client.Object, have, written []metav1.Condition) {
			ConditionsChanged(w.Events, obj, have, written)
		}}
	return sw.Write(ctx, tgw, statusapply.Of(tgw), part)
}

// statusPart is st as the part of tgw's status it owns, its conditions
// stamped.
func statusPart(tgw *gatewayv1alpha1.TenantGateway, st Status) (statusapply.Part, error) {
	part := statusapply.Part{Conditions: statusapply.Stamp(tgw.Status.Conditions, st.Conditions, tgw.Generation), Fields: map[string]any{},
		Absent: st.Absent}
	if st.OwnsListeners {
		ls := make([]any, 0, len(st.Listeners))
		for i := range st.Listeners {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st.Listeners[i])
			if err != nil {
				return part, err
			}
			ls = append(ls, m)
		}
		part.Fields["listeners"] = ls
	}
	if st.ObservedGeneration {
		part.Fields["observedGeneration"] = tgw.Generation
	}
	return part, nil
}

// Condition is a shorthand for a condition of type t.
func Condition(t string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message}
}
