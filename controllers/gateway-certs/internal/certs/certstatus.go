package certs

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// ReadyState is a cert-manager object's Ready condition as read (Status
// empty when cert-manager has not reported yet).
type ReadyState struct {
	Name    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// CertificatesState is everything CertificatesReady depends on, as gathered
// by gateway-certs after it applied what it could.
type CertificatesState struct {
	Mode gatewayv1alpha1.CertMode
	// Refused are the messages of derived objects left alone because the
	// TenantGateway does not own them.
	Refused []string
	// SecretName and Secret: the wildcard Secret of certMode
	// existingSecret and what the Gateway implementation reports of it
	// (SecretResolution).
	SecretName string
	Secret     SecretState
	// Gateway names the Gateway; GatewayFound says whether it exists.
	Gateway      string
	GatewayFound bool
	// Issuer and Certificates as cert-manager reports them.
	Issuer       ReadyState
	Certificates []ReadyState
}

// CertificatesReadyCondition reports whether the Gateway's HTTPS listeners
// have their certificates: False when something must be fixed (a foreign
// object, a missing Gateway, a Secret the Gateway implementation cannot
// resolve, cert-manager reporting a failure), Unknown while cert-manager or
// the Gateway implementation works, True when the Issuer and every
// Certificate are Ready (or, with existingSecret, every listener resolved the
// Secret).
func CertificatesReadyCondition(s CertificatesState) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: gatewayv1alpha1.ConditionCertificatesReady, Status: status, Reason: reason, Message: msg}
	}
	if len(s.Refused) > 0 {
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonReconcileError, strings.Join(s.Refused, "; "))
	}
	if !s.GatewayFound {
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotFound, fmt.Sprintf(
			"Gateway %s does not exist yet; its HTTPS listeners define the certificates (gateway-listeners creates it)", s.Gateway))
	}
	if s.Mode == gatewayv1alpha1.CertModeExistingSecret {
		return secretCondition(s, c)
	}
	switch s.Issuer.Status {
	case metav1.ConditionTrue:
	case metav1.ConditionFalse:
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonIssuerNotReady, fmt.Sprintf("Issuer %s: %s: %s", s.Issuer.Name, s.Issuer.Reason, s.Issuer.Message))
	default:
		return c(metav1.ConditionUnknown, gatewayv1alpha1.ReasonIssuerNotReady, fmt.Sprintf("waiting for cert-manager to register the ACME account of Issuer %s", s.Issuer.Name))
	}
	var failed, pending []string
	for _, cert := range s.Certificates {
		switch cert.Status {
		case metav1.ConditionTrue:
		case metav1.ConditionFalse:
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", cert.Name, cert.Reason, cert.Message))
		default:
			pending = append(pending, cert.Name)
		}
	}
	switch {
	case len(failed) > 0:
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonCertificatesNotReady, "certificates not ready: "+strings.Join(failed, ", ")+
			"; see kubectl describe certificate and the challenges")
	case len(pending) > 0:
		return c(metav1.ConditionUnknown, gatewayv1alpha1.ReasonCertificatesNotReady, "waiting for cert-manager to issue "+strings.Join(pending, ", "))
	case len(s.Certificates) == 0:
		return c(metav1.ConditionTrue, gatewayv1alpha1.ReasonReady, "no HTTPS listener needs a certificate yet")
	}
	return c(metav1.ConditionTrue, gatewayv1alpha1.ReasonReady, fmt.Sprintf("the Issuer and %d certificates are ready", len(s.Certificates)))
}

// SecretState is what the Gateway implementation reports about the listeners
// that serve the existingSecret wildcard Secret.
type SecretState struct {
	// Listeners is how many listeners of the Gateway reference the Secret.
	Listeners int
	// Unresolved are the listeners whose ResolvedRefs is False for the
	// current generation because of their certificate reference (reason
	// InvalidCertificateRef: the Secret is missing or not a TLS Secret),
	// with the implementation's reason and message.
	Unresolved []string
	// OtherRefs are the listeners whose ResolvedRefs is False for another
	// reason (InvalidRouteKinds...): they say nothing of the Secret.
	OtherRefs []string
	// Pending are the listeners not reported for the current generation.
	Pending []string
}

// SecretResolution reads, from the Gateway, whether the listeners that
// reference Secret secret could resolve it: the Gateway implementation (which
// may read Secrets; gateway-certs may not) reports a missing or invalid
// certificate Secret as ResolvedRefs=False, reason InvalidCertificateRef, on
// each listener. ResolvedRefs=False with any other reason (a route kind the
// listener's protocol cannot carry, ...) is about another reference: the
// Secret is not known to be missing. Conditions of an older Gateway
// generation count as not reported.
func SecretResolution(gw *gatewayv1.Gateway, secret string) SecretState {
	var s SecretState
	if gw == nil {
		return s
	}
	reported := map[gatewayv1.SectionName]gatewayv1.ListenerStatus{}
	for _, l := range gw.Status.Listeners {
		reported[l.Name] = l
	}
	current := false
	if c := meta.FindStatusCondition(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)); c != nil {
		current = c.ObservedGeneration == gw.Generation
	}
	for _, l := range gw.Spec.Listeners {
		if !referencesSecret(l, secret) {
			continue
		}
		s.Listeners++
		ls, ok := reported[l.Name]
		rc := meta.FindStatusCondition(ls.Conditions, string(gatewayv1.ListenerConditionResolvedRefs))
		switch {
		case !ok || !current || rc == nil:
			s.Pending = append(s.Pending, string(l.Name))
		case rc.Status == metav1.ConditionFalse && rc.Reason == string(gatewayv1.ListenerReasonInvalidCertificateRef):
			s.Unresolved = append(s.Unresolved, fmt.Sprintf("%s (%s: %s)", l.Name, rc.Reason, rc.Message))
		case rc.Status == metav1.ConditionFalse:
			s.OtherRefs = append(s.OtherRefs, fmt.Sprintf("%s (%s: %s)", l.Name, rc.Reason, rc.Message))
		case rc.Status != metav1.ConditionTrue:
			s.Pending = append(s.Pending, string(l.Name))
		}
	}
	return s
}

// referencesSecret: the listener terminates TLS with the Secret of that name
// in the Gateway's own namespace.
func referencesSecret(l gatewayv1.Listener, secret string) bool {
	if l.TLS == nil {
		return false
	}
	for _, ref := range l.TLS.CertificateRefs {
		if string(ref.Name) == secret && ref.Namespace == nil &&
			(ref.Kind == nil || *ref.Kind == "Secret") && (ref.Group == nil || *ref.Group == "") {
			return true
		}
	}
	return false
}

// secretCondition: existingSecret is False when the Gateway implementation
// cannot resolve the Secret on a listener, Unknown until it reports (or
// until gateway-listeners points the listeners at it) and, with reason
// ListenersNotReady, while it reports listeners unresolved for another
// reference than the certificate; True when every listener referencing it
// resolved it.
func secretCondition(s CertificatesState, c func(metav1.ConditionStatus, string, string) metav1.Condition) metav1.Condition {
	switch {
	case len(s.Secret.Unresolved) > 0:
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonSecretNotFound, fmt.Sprintf(
			"the Gateway implementation cannot use Secret %s (spec.wildcardSecretRef) on listeners %s; create it in this namespace "+
				"(type kubernetes.io/tls) with the certificate for the apex, *.apex and every inheriting child apex",
			s.SecretName, strings.Join(s.Secret.Unresolved, ", ")))
	case len(s.Secret.OtherRefs) > 0:
		return c(metav1.ConditionUnknown, gatewayv1alpha1.ReasonListenersNotReady, fmt.Sprintf(
			"the Gateway implementation reports listeners %s unresolved for another reason than their certificate; "+
				"whether it can use Secret %s is not known until they resolve (see ListenersReady)",
			strings.Join(s.Secret.OtherRefs, ", "), s.SecretName))
	case s.Secret.Listeners == 0:
		return c(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, fmt.Sprintf(
			"no listener of Gateway %s references Secret %s yet (gateway-listeners points the HTTPS listeners at it)", s.Gateway, s.SecretName))
	case len(s.Secret.Pending) > 0:
		return c(metav1.ConditionUnknown, gatewayv1alpha1.ReasonProgressing, fmt.Sprintf(
			"waiting for the Gateway implementation to resolve Secret %s on listeners %s", s.SecretName, strings.Join(s.Secret.Pending, ", ")))
	}
	return c(metav1.ConditionTrue, gatewayv1alpha1.ReasonReady, fmt.Sprintf(
		"the Gateway implementation resolved Secret %s on %d listeners", s.SecretName, s.Secret.Listeners))
}
