package v1alpha1

// Defaults of the DNS-01 provider blocks, as the CRD declares them. The API
// server applies them to every object it serves (see DNS01 for how); the
// Effective* helpers apply the same defaults in Go, so that objects built in
// memory (tests, fakes) and objects the API server never defaulted read the
// same: `dns01: {provider: digitalocean}` means the documented Secret.
const (
	DefaultCloudflareSecretName   = "cloudflare-api-token-secret"
	DefaultCloudflareSecretKey    = "api-token"
	DefaultRoute53SecretKey       = "secret-access-key"
	DefaultDigitalOceanSecretName = "digitalocean-api-token-secret"
	DefaultDigitalOceanSecretKey  = "access-token"
	DefaultRFC2136TSIGAlgorithm   = "HMACSHA256"
	DefaultRFC2136SecretKey       = "tsig-secret-key"
)

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// EffectiveDNS01 returns the DNS-01 configuration with every default
// applied: provider cloudflare when unset, and the selected provider's block
// filled in.
func (s *TenantGatewaySpec) EffectiveDNS01() DNS01 {
	var d DNS01
	if s.DNS01 != nil {
		d = *s.DNS01.DeepCopy()
	}
	if d.Provider == "" {
		d.Provider = DNS01Cloudflare
	}
	switch d.Provider {
	case DNS01Cloudflare:
		c := Cloudflare{}
		if d.Cloudflare != nil {
			c = *d.Cloudflare
		}
		c.SecretName, c.SecretKey = or(c.SecretName, DefaultCloudflareSecretName), or(c.SecretKey, DefaultCloudflareSecretKey)
		d.Cloudflare = &c
	case DNS01Route53:
		r := Route53{}
		if d.Route53 != nil {
			r = *d.Route53
		}
		r.SecretKey = or(r.SecretKey, DefaultRoute53SecretKey)
		d.Route53 = &r
	case DNS01DigitalOcean:
		o := DigitalOcean{}
		if d.DigitalOcean != nil {
			o = *d.DigitalOcean
		}
		o.SecretName, o.SecretKey = or(o.SecretName, DefaultDigitalOceanSecretName), or(o.SecretKey, DefaultDigitalOceanSecretKey)
		d.DigitalOcean = &o
	case DNS01RFC2136:
		r := RFC2136{}
		if d.RFC2136 != nil {
			r = *d.RFC2136
		}
		r.TSIGAlgorithm, r.SecretKey = or(r.TSIGAlgorithm, DefaultRFC2136TSIGAlgorithm), or(r.SecretKey, DefaultRFC2136SecretKey)
		d.RFC2136 = &r
	}
	return d
}

// EffectiveCertMode is certMode with its default.
func (s *TenantGatewaySpec) EffectiveCertMode() CertMode {
	if s.CertMode == "" {
		return CertModeHTTP01
	}
	return s.CertMode
}

// Defaults of the remaining spec fields, as the CRD declares them.
const (
	DefaultGatewayClassName = "cilium"
	DefaultIssuerName       = IssuerLetsEncryptProd
)

// DefaultTLSPassthroughServices returns the services that get a passthrough
// listener when spec.tlsPassthroughServices is unset (a fresh slice each call).
func DefaultTLSPassthroughServices() []string {
	return []string{"api", "vm-exportproxy", "cdi-uploadproxy"}
}

// EffectiveIssuerName is issuerName with its default.
func (s *TenantGatewaySpec) EffectiveIssuerName() string {
	return or(s.IssuerName, DefaultIssuerName)
}

// EffectiveGatewayClassName is gatewayClassName with its default.
func (s *TenantGatewaySpec) EffectiveGatewayClassName() string {
	return or(s.GatewayClassName, DefaultGatewayClassName)
}

// EffectiveTLSPassthroughServices is tlsPassthroughServices with its default:
// unset (nil) means the default list, an empty list means none.
func (s *TenantGatewaySpec) EffectiveTLSPassthroughServices() []string {
	if s.TLSPassthroughServices == nil {
		return DefaultTLSPassthroughServices()
	}
	return append([]string(nil), s.TLSPassthroughServices...)
}
