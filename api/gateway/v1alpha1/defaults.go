package v1alpha1

// Defaults the CRD declares, applied again in Go so that objects built in
// memory (tests, fakes) and objects the API server never defaulted read the
// same. Like upstream Cozystack's controller, an empty value means the
// default.
const (
	DefaultGatewayClassName     = "cilium"
	DefaultIssuerName           = IssuerNameLetsEncryptProd
	DefaultDNS01Provider        = DNS01Cloudflare
	DefaultRFC2136TSIGAlgorithm = "HMACSHA256"
)

func or[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// EffectiveCertMode is certMode with its default.
func (s *TenantGatewaySpec) EffectiveCertMode() CertMode {
	return or(s.CertMode, CertModeHTTP01)
}

// EffectiveIssuerName is issuerName with its default.
func (s *TenantGatewaySpec) EffectiveIssuerName() IssuerName {
	return or(s.IssuerName, DefaultIssuerName)
}

// EffectiveGatewayClassName is gatewayClassName with its default.
func (s *TenantGatewaySpec) EffectiveGatewayClassName() string {
	return or(s.GatewayClassName, DefaultGatewayClassName)
}

// EffectiveDNS01Provider is dns01.provider with its default; empty when
// spec.dns01 is unset.
func (s *TenantGatewaySpec) EffectiveDNS01Provider() DNS01Provider {
	if s.DNS01 == nil {
		return ""
	}
	return or(s.DNS01.Provider, DefaultDNS01Provider)
}
