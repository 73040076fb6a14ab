package certs

import (
	"fmt"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// UnknownIssuerError: spec.issuerName names no ACME directory this package
// knows.
type UnknownIssuerError struct {
	Name string
}

func (e *UnknownIssuerError) Error() string {
	return fmt.Sprintf("unknown issuerName %q: use %s or %s", e.Name, gatewayv1alpha1.IssuerNameLetsEncryptProd, gatewayv1alpha1.IssuerNameLetsEncryptStage)
}

// StalledReason is the condition reason to report (reconcileerr.Reasoned).
func (e *UnknownIssuerError) StalledReason() string { return gatewayv1alpha1.ReasonUnknownIssuer }
