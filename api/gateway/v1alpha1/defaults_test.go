package v1alpha1

import "testing"

func TestEffectiveDNS01(t *testing.T) {
	tests := []struct {
		name string
		in   *DNS01
		want func(DNS01) bool
	}{
		{"nothing means cloudflare with the documented secret", nil, func(d DNS01) bool {
			return d.Provider == DNS01Cloudflare && d.Cloudflare.SecretName == "cloudflare-api-token-secret" && d.Cloudflare.SecretKey == "api-token"
		}},
		{"digitalocean without a block", &DNS01{Provider: DNS01DigitalOcean}, func(d DNS01) bool {
			return d.DigitalOcean.SecretName == "digitalocean-api-token-secret" && d.DigitalOcean.SecretKey == "access-token"
		}},
		{"route53 keeps region, defaults the key", &DNS01{Provider: DNS01Route53, Route53: &Route53{Region: "eu-west-1", SecretName: "aws"}}, func(d DNS01) bool {
			return d.Route53.Region == "eu-west-1" && d.Route53.SecretName == "aws" && d.Route53.SecretKey == "secret-access-key"
		}},
		{"rfc2136 keeps what is set", &DNS01{Provider: DNS01RFC2136, RFC2136: &RFC2136{Nameserver: "ns:53", SecretKey: "k"}}, func(d DNS01) bool {
			return d.RFC2136.Nameserver == "ns:53" && d.RFC2136.SecretKey == "k" && d.RFC2136.TSIGAlgorithm == "HMACSHA256"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &TenantGatewaySpec{DNS01: tt.in}
			before := s.DNS01.DeepCopy()
			got := s.EffectiveDNS01()
			if !tt.want(got) {
				t.Fatalf("EffectiveDNS01() = %+v", got)
			}
			if tt.in != nil && (s.DNS01.Provider != before.Provider || (before.Route53 == nil) != (s.DNS01.Route53 == nil)) {
				t.Fatal("EffectiveDNS01 modified the spec")
			}
		})
	}
}
