package tenantgateway

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// summarised are the conditions Ready summarises, in the order their
// problems are reported, with the controller that writes each.
var summarised = []struct{ Type, Controller string }{
	{gatewayv1alpha1.ConditionListenersReady, "gateway-listeners"},
	{gatewayv1alpha1.ConditionCertificatesReady, "gateway-certs"},
	{gatewayv1alpha1.ConditionNamespacesAttached, "ns-labels"},
}

// Ready summarises the conditions of the gateway controllers for generation
// into the one Ready condition: True when ListenersReady, CertificatesReady
// and NamespacesAttached are all True for that generation; otherwise the
// status, reason and message of the first that is not (False wins over
// Unknown: a condition not yet written, or written for an older generation,
// is Unknown with reason Progressing and says which controller it waits for).
// HostnamesRejected is not summarised.
func Ready(conds []metav1.Condition, generation int64) metav1.Condition {
	var firstUnknown *metav1.Condition
	for _, s := range summarised {
		c := meta.FindStatusCondition(conds, s.Type)
		switch {
		case c == nil:
			if firstUnknown == nil {
				firstUnknown = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: gatewayv1alpha1.ReasonProgressing,
					Message: fmt.Sprintf("waiting for %s to report %s", s.Controller, s.Type)}
			}
		case c.ObservedGeneration != generation:
			if firstUnknown == nil {
				firstUnknown = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: gatewayv1alpha1.ReasonProgressing,
					Message: fmt.Sprintf("waiting for %s to report %s for generation %d", s.Controller, s.Type, generation)}
			}
		case c.Status == metav1.ConditionFalse:
			return metav1.Condition{Type: gatewayv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: c.Reason, Message: s.Type + ": " + c.Message}
		case c.Status != metav1.ConditionTrue:
			if firstUnknown == nil {
				firstUnknown = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: c.Reason, Message: s.Type + ": " + c.Message}
			}
		}
	}
	if firstUnknown != nil {
		firstUnknown.Type = gatewayv1alpha1.ConditionReady
		return *firstUnknown
	}
	return metav1.Condition{Type: gatewayv1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: gatewayv1alpha1.ReasonReady, Message: "the Gateway is programmed, its certificates are issued and its namespaces attached"}
}
