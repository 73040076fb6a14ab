package v1alpha1

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func TestEffectiveScalars(t *testing.T) {
	var zero TenantGatewaySpec
	if got := zero.EffectiveCertMode(); got != CertModeHTTP01 {
		t.Errorf("EffectiveCertMode() = %q, want http01", got)
	}
	if got := zero.EffectiveIssuerName(); got != IssuerNameLetsEncryptProd {
		t.Errorf("EffectiveIssuerName() = %q, want letsencrypt-prod", got)
	}
	if got := zero.EffectiveGatewayClassName(); got != "cilium" {
		t.Errorf("EffectiveGatewayClassName() = %q, want cilium (an empty class is cilium, as upstream)", got)
	}
	if got := zero.EffectiveDNS01Provider(); got != "" {
		t.Errorf("EffectiveDNS01Provider() without dns01 = %q, want empty", got)
	}
	if got := (&TenantGatewaySpec{DNS01: &DNS01Config{}}).EffectiveDNS01Provider(); got != DNS01Cloudflare {
		t.Errorf("EffectiveDNS01Provider() of an empty dns01 = %q, want cloudflare", got)
	}
	set := TenantGatewaySpec{CertMode: CertModeDNS01, IssuerName: IssuerNameLetsEncryptStage, GatewayClassName: "envoy",
		DNS01: &DNS01Config{Provider: DNS01RFC2136}}
	if set.EffectiveCertMode() != CertModeDNS01 || set.EffectiveIssuerName() != "letsencrypt-stage" ||
		set.EffectiveGatewayClassName() != "envoy" || set.EffectiveDNS01Provider() != DNS01RFC2136 {
		t.Errorf("set values were not kept: %+v", set)
	}
}

// The CRD declares exactly upstream's defaults and required fields (it is
// generated from the markers in tenantgateway_types.go; hack/generate.sh
// regenerates it): in particular no default for tlsPassthroughServices and
// none for the Secret references of the DNS-01 providers.
func TestDefaultsAndRequiredMatchCRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "crds", "gateway.cozystack.io_tenantgateways.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		t.Fatal(err)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	at := func(path string) apiextensionsv1.JSONSchemaProps {
		s := spec
		for _, p := range strings.Split(path, ".") {
			if p == "" {
				continue
			}
			s = s.Properties[p]
		}
		return s
	}
	defaults := map[string]string{
		"certMode":                    string(CertModeHTTP01),
		"issuerName":                  string(DefaultIssuerName),
		"gatewayClassName":            DefaultGatewayClassName,
		"dns01.provider":              string(DefaultDNS01Provider),
		"dns01.rfc2136.tsigAlgorithm": DefaultRFC2136TSIGAlgorithm,
		// The names of the core/v1 references default to "", as in
		// upstream's CRD.
		"wildcardSecretRef.name":                      "",
		"dns01.cloudflare.apiTokenSecretRef.name":     "",
		"dns01.route53.secretAccessKeySecretRef.name": "",
		"dns01.digitalocean.tokenSecretRef.name":      "",
		"dns01.rfc2136.tsigSecretSecretRef.name":      "",
	}
	var walk func(prefix string, s apiextensionsv1.JSONSchemaProps)
	walk = func(prefix string, s apiextensionsv1.JSONSchemaProps) {
		for name, p := range s.Properties {
			path := strings.TrimPrefix(prefix+"."+name, ".")
			w, want := defaults[path]
			switch {
			case p.Default == nil && want:
				t.Errorf("%s: the CRD has no default, upstream's is %s", path, w)
			case p.Default != nil && !want:
				t.Errorf("%s: the CRD defaults to %s, upstream has no default", path, p.Default.Raw)
			case p.Default != nil:
				got := string(p.Default.Raw)
				if unquoted, err := strconv.Unquote(got); err == nil {
					got = unquoted
				}
				if got != w {
					t.Errorf("%s: the CRD defaults to %s, upstream to %s", path, got, w)
				}
			}
			walk(path, p)
		}
	}
	walk("", spec)

	required := map[string][]string{
		"":                                       {"apex"},
		"dns01.cloudflare":                       {"apiTokenSecretRef"},
		"dns01.cloudflare.apiTokenSecretRef":     {"key"},
		"dns01.route53":                          {"region"},
		"dns01.route53.secretAccessKeySecretRef": {"key"},
		"dns01.digitalocean":                     {"tokenSecretRef"},
		"dns01.digitalocean.tokenSecretRef":      {"key"},
		"dns01.rfc2136":                          {"nameserver", "tsigKeyName", "tsigSecretSecretRef"},
		"dns01.rfc2136.tsigSecretSecretRef":      {"key"},
	}
	for path, want := range required {
		got := slices.Clone(at(path).Required)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: required %v, upstream requires %v", path, got, want)
		}
	}
	if slices.Contains(root.Required, "spec") {
		t.Error("spec is required; upstream's is optional")
	}
	enums := map[string][]string{
		"certMode":       {"http01", "dns01", "existingSecret"},
		"issuerName":     {"letsencrypt-prod", "letsencrypt-stage"},
		"dns01.provider": {"cloudflare", "route53", "digitalocean", "rfc2136"},
	}
	for path, want := range enums {
		var got []string
		for _, e := range at(path).Enum {
			got = append(got, strings.Trim(string(e.Raw), `"`))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: enum %v, upstream %v", path, got, want)
		}
	}
}
