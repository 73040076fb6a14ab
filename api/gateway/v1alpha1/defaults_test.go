package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

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

func TestEffectiveScalars(t *testing.T) {
	var zero TenantGatewaySpec
	if got := zero.EffectiveCertMode(); got != CertModeHTTP01 {
		t.Errorf("EffectiveCertMode() = %q, want http01", got)
	}
	if got := zero.EffectiveIssuerName(); got != "letsencrypt-prod" {
		t.Errorf("EffectiveIssuerName() = %q, want letsencrypt-prod", got)
	}
	if got := zero.EffectiveGatewayClassName(); got != "cilium" {
		t.Errorf("EffectiveGatewayClassName() = %q, want cilium", got)
	}
	set := TenantGatewaySpec{CertMode: CertModeDNS01, IssuerName: IssuerLetsEncryptStage, GatewayClassName: "envoy"}
	if set.EffectiveCertMode() != CertModeDNS01 || set.EffectiveIssuerName() != "letsencrypt-stage" || set.EffectiveGatewayClassName() != "envoy" {
		t.Errorf("set values were not kept: %+v", set)
	}
}

func TestEffectiveTLSPassthroughServices(t *testing.T) {
	unset := TenantGatewaySpec{}
	got := unset.EffectiveTLSPassthroughServices()
	if len(got) != 3 || got[0] != "api" || got[1] != "vm-exportproxy" || got[2] != "cdi-uploadproxy" {
		t.Fatalf("unset = %v, want the seed's three services", got)
	}
	got[0] = "changed"
	if again := unset.EffectiveTLSPassthroughServices(); again[0] != "api" {
		t.Fatal("the default list is shared between callers")
	}
	empty := TenantGatewaySpec{TLSPassthroughServices: []string{}}
	if got := empty.EffectiveTLSPassthroughServices(); len(got) != 0 {
		t.Fatalf("an empty list must mean none, got %v", got)
	}
	own := TenantGatewaySpec{TLSPassthroughServices: []string{"db"}}
	if got := own.EffectiveTLSPassthroughServices(); len(got) != 1 || got[0] != "db" {
		t.Fatalf("own list = %v", got)
	}
}

// The Go defaults and the CRD's agree (the CRD is generated from the markers
// in tenantgateway_types.go; hack/generate.sh regenerates it).
func TestDefaultsMatchCRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "crds", "gateway.cozystack.io_tenantgateways.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	dns01 := spec.Properties["dns01"]
	want := map[string]string{
		"certMode":         string(CertModeHTTP01),
		"issuerName":       DefaultIssuerName,
		"gatewayClassName": DefaultGatewayClassName,
		"tlsPassthroughServices": func() string {
			j, _ := json.Marshal(DefaultTLSPassthroughServices())
			return string(j)
		}(),
		"dns01.provider":                string(DNS01Cloudflare),
		"dns01.cloudflare.secretName":   DefaultCloudflareSecretName,
		"dns01.cloudflare.secretKey":    DefaultCloudflareSecretKey,
		"dns01.route53.secretKey":       DefaultRoute53SecretKey,
		"dns01.digitalocean.secretName": DefaultDigitalOceanSecretName,
		"dns01.digitalocean.secretKey":  DefaultDigitalOceanSecretKey,
		"dns01.rfc2136.tsigAlgorithm":   DefaultRFC2136TSIGAlgorithm,
		"dns01.rfc2136.secretKey":       DefaultRFC2136SecretKey,
	}
	for path, w := range want {
		s := spec
		for _, p := range strings.Split(path, ".") {
			s = s.Properties[p]
		}
		if s.Default == nil {
			t.Errorf("%s: the CRD has no default, Go has %s", path, w)
			continue
		}
		got := string(s.Default.Raw)
		if unquoted, err := strconv.Unquote(got); err == nil {
			got = unquoted
		}
		if got != w {
			t.Errorf("%s: the CRD defaults to %s, Go to %s", path, got, w)
		}
	}
	// The blocks that need nothing from the user default to {}, so that
	// their keys are defaulted when only the provider is given.
	for _, block := range []string{"cloudflare", "digitalocean"} {
		if d := dns01.Properties[block].Default; d == nil || string(d.Raw) != "{}" {
			t.Errorf("dns01.%s: default %v, want {}", block, d)
		}
	}
}
