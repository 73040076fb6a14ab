package tenantgateway

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// SecretName and SecretFound: the wildcard Secret of certMode
	// existingSecret.
	SecretName  string
	SecretFound bool
	// Gateway names the Gateway; GatewayFound says whether it exists.
	Gateway      string
	GatewayFound bool
	// Issuer and Certificates as cert-manager reports them.
	Issuer       ReadyState
	Certificates []ReadyState
}

// CertificatesReadyCondition reports whether the Gateway's HTTPS listeners
// have their certificates: False when something must be fixed (a foreign
// object, a missing Secret or Gateway, cert-manager reporting a failure),
// Unknown while cert-manager works, True when the Issuer and every
// Certificate are Ready (or, with existingSecret, the Secret exists).
func CertificatesReadyCondition(s CertificatesState) metav1.Condition {
	c := func(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: gatewayv1alpha1.ConditionCertificatesReady, Status: status, Reason: reason, Message: msg}
	}
	if len(s.Refused) > 0 {
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonReconcileError, strings.Join(s.Refused, "; "))
	}
	if s.Mode == gatewayv1alpha1.CertModeExistingSecret {
		if !s.SecretFound {
			return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonSecretNotFound, fmt.Sprintf(
				"Secret %s (spec.wildcardSecretRef) does not exist in this namespace; create it with the certificate for the apex, *.apex and every inheriting child apex", s.SecretName))
		}
		return c(metav1.ConditionTrue, gatewayv1alpha1.ReasonReady, fmt.Sprintf("the listeners serve the Secret %s", s.SecretName))
	}
	if !s.GatewayFound {
		return c(metav1.ConditionFalse, gatewayv1alpha1.ReasonGatewayNotFound, fmt.Sprintf(
			"Gateway %s does not exist yet; its HTTPS listeners define the certificates (gateway-listeners creates it)", s.Gateway))
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
