// Package certs holds gateway-certs' decisions, as pure functions: the
// Issuer a TenantGateway's certMode asks for (DesiredIssuer), the
// Certificates the HTTPS listeners of its Gateway reference
// (DesiredCertificates: those listeners and their certificateRefs, as read
// back from the Gateway, are the whole contract with gateway-listeners), and
// CertificatesReady from what the reconcile gathered
// (CertificatesReadyCondition; SecretResolution for certMode
// existingSecret). The desired objects carry type meta and labels; the
// controller sets the owner references.
package certs
