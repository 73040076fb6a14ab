package v1alpha1

// Defaults of the DNS-01 provider blocks. The API server applies them to a
// block that is present; these helpers apply them when a block is omitted,
// so `dns01: {provider: digitalocean}` means the documented Secret.
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
