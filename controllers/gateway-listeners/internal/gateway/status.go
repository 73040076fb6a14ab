package gateway

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// ListenersStatus derives status.listeners and the ListenersReady condition
// from the listeners the Gateway should have and the Gateway as the API
// server returns it (nil when it does not exist yet). A listener is ready when
// the Gateway implementation reports it Accepted and Programmed for the
// Gateway's current generation (as upstream Cozystack's controller decides).
// Conditions of an older generation count as not reported yet. The condition
// is True, reason Reconciled, when the Gateway is Accepted and Programmed and
// every listener ready. A Gateway that is not programmed (no address yet)
// does not hide its listeners: the message of GatewayNotProgrammed names
// those that are not ready either, with their reasons, as ListenersNotReady
// does.
func ListenersStatus(desired []gatewayv1.Listener, gw *gatewayv1.Gateway) ([]gatewayv1alpha1.TenantGatewayListenerStatus, metav1.Condition) {
	cond := func(s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: gatewayv1alpha1.ConditionListenersReady, Status: s, Reason: reason, Message: msg}
	}
	reported := map[string]gatewayv1.ListenerStatus{}
	current := false
	if gw != nil {
		for _, l := range gw.Status.Listeners {
			reported[string(l.Name)] = l
		}
		if c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)); c != nil {
			current = c.ObservedGeneration == gw.Generation
		}
	}
	out := make([]gatewayv1alpha1.TenantGatewayListenerStatus, 0, len(desired))
	var notReady []string
	for _, l := range desired {
		s := gatewayv1alpha1.TenantGatewayListenerStatus{Name: string(l.Name)}
		if l.Hostname != nil {
			s.Hostname = string(*l.Hostname)
		}
		if l.TLS != nil && len(l.TLS.CertificateRefs) > 0 {
			s.CertificateName = string(l.TLS.CertificateRefs[0].Name)
		}
		s.Ready, s.Reason, s.Message = listenerReady(reported, string(l.Name), current, gw)
		if !s.Ready {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", s.Name, s.Reason))
		}
		out = append(out, s)
	}
	if gw == nil {
		return out, cond(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, "the Gateway does not exist yet")
	}
	name := gw.Namespace + "/" + gw.Name
	accepted := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted))
	programmed := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	switch {
	case !current:
		return out, cond(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, fmt.Sprintf(
			"waiting for the implementation of GatewayClass %s to accept Gateway %s generation %d",
			gw.Spec.GatewayClassName, name, gw.Generation))
	case accepted.Status != metav1.ConditionTrue:
		return out, cond(metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotAccepted, fmt.Sprintf(
			"Gateway %s is not accepted (%s): %s; check that GatewayClass %s exists and its controller runs",
			name, accepted.Reason, accepted.Message, gw.Spec.GatewayClassName))
	case programmed == nil || programmed.ObservedGeneration != gw.Generation:
		return out, cond(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, fmt.Sprintf(
			"Gateway %s is accepted; waiting for it to be programmed", name))
	case programmed.Status != metav1.ConditionTrue:
		msg := fmt.Sprintf("Gateway %s is not programmed (%s): %s", name, programmed.Reason, programmed.Message)
		if len(notReady) > 0 {
			msg += fmt.Sprintf("; listeners not programmed either: %s (see status.listeners)", strings.Join(notReady, ", "))
		}
		return out, cond(metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotProgrammed, msg)
	case len(notReady) > 0:
		return out, cond(metav1.ConditionFalse, gatewayv1alpha1.ReasonListenersNotReady, fmt.Sprintf(
			"listeners not programmed: %s; status.listeners says why (often a certificate Secret that does not exist yet)",
			strings.Join(notReady, ", ")))
	}
	return out, cond(metav1.ConditionTrue, gatewayv1alpha1.ReasonReconciled, fmt.Sprintf(
		"Gateway %s is programmed with %d listeners", name, len(desired)))
}

func listenerReady(reported map[string]gatewayv1.ListenerStatus, name string, current bool, gw *gatewayv1.Gateway) (bool, string, string) {
	if gw == nil {
		return false, gatewayv1alpha1.ReasonProgressing, "the Gateway does not exist yet"
	}
	ls, ok := reported[name]
	if !ok || !current {
		return false, gatewayv1alpha1.ReasonProgressing, "not reported by the Gateway implementation yet"
	}
	// A listener that is not programmed says why in its first false
	// condition (ResolvedRefs: a missing certificate Secret, Conflicted...).
	for _, t := range []gatewayv1.ListenerConditionType{gatewayv1.ListenerConditionResolvedRefs,
		gatewayv1.ListenerConditionConflicted, gatewayv1.ListenerConditionAccepted, gatewayv1.ListenerConditionProgrammed} {
		c := meta.FindStatusCondition(ls.Conditions, string(t))
		bad := c != nil && ((t == gatewayv1.ListenerConditionConflicted) == (c.Status == metav1.ConditionTrue))
		if bad {
			return false, c.Reason, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message)
		}
	}
	for _, t := range []gatewayv1.ListenerConditionType{gatewayv1.ListenerConditionAccepted, gatewayv1.ListenerConditionProgrammed} {
		if c := meta.FindStatusCondition(ls.Conditions, string(t)); c == nil {
			return false, gatewayv1alpha1.ReasonProgressing, fmt.Sprintf("not reported %s yet", t)
		}
	}
	return true, string(gatewayv1.ListenerReasonProgrammed), ""
}

// HostnamesRejectedCondition reports the route hostnames and child apexes
// that got no listener or are not covered by the wildcard certificate.
func HostnamesRejectedCondition(rejected []RejectedHostname) metav1.Condition {
	if len(rejected) == 0 {
		return metav1.Condition{Type: gatewayv1alpha1.ConditionHostnamesRejected, Status: metav1.ConditionFalse,
			Reason: gatewayv1alpha1.ReasonAllHostnamesServed, Message: "every route hostname is served"}
	}
	parts := make([]string, len(rejected))
	for i, r := range rejected {
		parts[i] = fmt.Sprintf("%s (%s): %s", r.Hostname, r.Reason, r.Message)
	}
	return metav1.Condition{Type: gatewayv1alpha1.ConditionHostnamesRejected, Status: metav1.ConditionTrue,
		Reason: rejected[0].Reason, Message: strings.Join(parts, "; ")}
}
