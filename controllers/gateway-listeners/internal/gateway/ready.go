package gateway

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
)

// informing are the conditions of the other controllers, in the order their
// blocking problems are reported. They gate Ready only with a reason in
// gatewayv1alpha1.BlockingReasons.
var informing = []string{gatewayv1alpha1.ConditionCertificatesReady, gatewayv1alpha1.ConditionNamespacesAttached}

// Ready computes the one Ready condition for generation with upstream
// Cozystack's meaning: it follows the Gateway implementation, as
// ListenersReady reports it (Gateway Accepted and Programmed, every listener
// Accepted and Programmed).
//
//   - ListenersReady not written for this generation: Unknown, Progressing.
//   - ListenersReady False: False with its reason and message.
//   - CertificatesReady or NamespacesAttached with a blocking reason (the
//     controller could not do its part at all: an object it refuses to take
//     over, an API error, a spec it cannot serve), whatever its generation
//     until its controller reports again: False with that reason.
//   - Otherwise ListenersReady's status: True is reason Reconciled.
//
// Waiting for cert-manager (an ACME account not registered yet, certificates
// not issued yet), namespaces not created yet and rejected hostnames never
// make Ready False: status.listeners and the informing conditions say so.
func Ready(conds []metav1.Condition, generation int64) metav1.Condition {
	ready := func(s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: gatewayv1alpha1.ConditionReady, Status: s, Reason: reason, Message: msg}
	}
	l := meta.FindStatusCondition(conds, gatewayv1alpha1.ConditionListenersReady)
	switch {
	case l == nil:
		return ready(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "waiting for gateway-listeners to report ListenersReady")
	case l.ObservedGeneration != generation:
		return ready(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing,
			fmt.Sprintf("waiting for gateway-listeners to report ListenersReady for generation %d", generation))
	case l.Status == metav1.ConditionFalse:
		return ready(metav1.ConditionFalse, l.Reason, l.Type+": "+l.Message)
	}
	for _, t := range informing {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionFalse &&
			slices.Contains(gatewayv1alpha1.BlockingReasons, c.Reason) {
			return ready(metav1.ConditionFalse, c.Reason, c.Type+": "+c.Message)
		}
	}
	if l.Status == metav1.ConditionTrue {
		return ready(metav1.ConditionTrue, gatewayv1alpha1.ReasonReconciled, l.Message)
	}
	return ready(metav1.ConditionUnknown, l.Reason, l.Type+": "+l.Message)
}

// Summarize computes the conditions gateway-listeners writes for kstatus
// from the TenantGateway's conditions: Ready (see Ready), with Reconciling
// and Stalled by the convention of every kind (pkg/conditions): Stalled
// True when Ready is False for a reason in gatewayv1alpha1.StalledReasons,
// Reconciling True when Ready is Unknown or False for any other reason,
// each with Ready's reason and message; a type that is not True is left
// out (the server-side apply of this controller's conditions removes it).
// With status.observedGeneration written in the same apply, kstatus reads a
// Ready TenantGateway as Current, a stalled one as Failed and the rest as
// InProgress. This is the one place the summary is decided.
func Summarize(conds []metav1.Condition, generation int64) []metav1.Condition {
	ready := Ready(conds, generation)
	var out []metav1.Condition
	h := conditions.Holder{Generation: generation, Conditions: &out}
	switch {
	case ready.Status == metav1.ConditionTrue:
		conditions.MarkReady(h, ready.Reason, ready.Message)
	case ready.Status == metav1.ConditionUnknown:
		conditions.MarkReconciling(h, ready.Reason, ready.Message)
	case slices.Contains(gatewayv1alpha1.StalledReasons, ready.Reason):
		conditions.MarkStalled(h, ready.Reason, ready.Message)
	default:
		conditions.MarkNotReadyReconciling(h, ready.Reason, ready.Message)
	}
	return out
}
