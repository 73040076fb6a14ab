package certs

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	cmacmev1 "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

func TestACMEServer(t *testing.T) {
	tests := []struct {
		name    gatewayv1alpha1.IssuerName
		want    string
		wantErr bool
	}{
		{"letsencrypt-prod", "https://acme-v02.api.letsencrypt.org/directory", false},
		{"letsencrypt-stage", "https://acme-staging-v02.api.letsencrypt.org/directory", false},
		{"", "https://acme-v02.api.letsencrypt.org/directory", false},
		{"zerossl", "", true},
		{"LetsEncrypt-Prod", "", true},
	}
	for _, tt := range tests {
		got, err := ACMEServer(tt.name)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ACMEServer(%q) = %q, %v", tt.name, got, err)
		}
		var unknown *UnknownIssuerError
		if tt.wantErr && (!errors.As(err, &unknown) || unknown.Name != string(tt.name)) {
			t.Errorf("ACMEServer(%q): err %v is not an UnknownIssuerError naming it", tt.name, err)
		}
	}
}

func sel(name, key string) cmmetav1.SecretKeySelector {
	return cmmetav1.SecretKeySelector{LocalObjectReference: cmmetav1.LocalObjectReference{Name: name}, Key: key}
}

func TestDesiredIssuerHTTP01(t *testing.T) {
	got, err := DesiredIssuer(IssuerInput{
		TenantGateway: "cozystack", Namespace: "tenant-root", ManagedBy: "gateway-certs",
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org", IssuerName: gatewayv1alpha1.IssuerNameLetsEncryptStage},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &cmv1.Issuer{
		TypeMeta: metav1.TypeMeta{APIVersion: "cert-manager.io/v1", Kind: "Issuer"},
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack-gateway", Namespace: "tenant-root", Labels: map[string]string{
			"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack", "cozystack.io/managed-by": "gateway-certs",
		}},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: &cmacmev1.ACMEIssuer{
			Server:     "https://acme-staging-v02.api.letsencrypt.org/directory",
			PrivateKey: sel("cozystack-acme-account", ""),
			Solvers: []cmacmev1.ACMEChallengeSolver{{HTTP01: &cmacmev1.ACMEChallengeSolverHTTP01{
				GatewayHTTPRoute: &cmacmev1.ACMEChallengeSolverHTTP01GatewayHTTPRoute{ParentRefs: []gatewayv1.ParentReference{{
					Group:       ptr.To(gatewayv1.Group("gateway.networking.k8s.io")),
					Kind:        ptr.To(gatewayv1.Kind("Gateway")),
					Namespace:   ptr.To(gatewayv1.Namespace("tenant-root")),
					Name:        "cozystack",
					SectionName: ptr.To(gatewayv1.SectionName("http")),
				}}},
			}}},
		}}},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("got  %s\nwant %s", g, w)
	}
}

func ref(name, key string) corev1.SecretKeySelector {
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
}

// The solver passes on the Secret and key each selector names, as upstream's
// controller does; the specs below are those upstream's gateway chart
// renders (tests/chainsaw/gateway-upstream has the same as objects).
func TestDesiredIssuerDNS01(t *testing.T) {
	dns := func(d *gatewayv1alpha1.DNS01Config) gatewayv1alpha1.TenantGatewaySpec {
		return gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: gatewayv1alpha1.CertModeDNS01, DNS01: d}
	}
	tests := []struct {
		name string
		spec gatewayv1alpha1.TenantGatewaySpec
		want cmacmev1.ACMEChallengeSolverDNS01
	}{
		{
			name: "cloudflare, the chart's default Secret",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Cloudflare, Cloudflare: &gatewayv1alpha1.CloudflareDNS01{
				APITokenSecretRef: ref("cloudflare-api-token-secret", "api-token")}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{Cloudflare: &cmacmev1.ACMEIssuerDNS01ProviderCloudflare{
				APIToken: ptr.To(sel("cloudflare-api-token-secret", "api-token")),
			}},
		},
		{
			name: "cloudflare with its own Secret, provider left to its default",
			spec: dns(&gatewayv1alpha1.DNS01Config{Cloudflare: &gatewayv1alpha1.CloudflareDNS01{APITokenSecretRef: ref("cf", "token")}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{Cloudflare: &cmacmev1.ACMEIssuerDNS01ProviderCloudflare{APIToken: ptr.To(sel("cf", "token"))}},
		},
		{
			name: "digitalocean",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01DigitalOcean, DigitalOcean: &gatewayv1alpha1.DigitalOceanDNS01{
				TokenSecretRef: ref("do-token", "access-token")}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{DigitalOcean: &cmacmev1.ACMEIssuerDNS01ProviderDigitalOcean{
				Token: sel("do-token", "access-token"),
			}},
		},
		{
			name: "route53 with an access key",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Route53, Route53: &gatewayv1alpha1.Route53DNS01{
				Region: "eu-west-1", AccessKeyID: "AKIA", SecretAccessKeySecretRef: ptr.To(ref("aws", "secret-access-key")),
			}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{Route53: &cmacmev1.ACMEIssuerDNS01ProviderRoute53{
				Region: "eu-west-1", AccessKeyID: "AKIA", SecretAccessKey: sel("aws", "secret-access-key"),
			}},
		},
		{
			name: "route53 with ambient credentials as the chart renders it: empty Secret name kept",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Route53, Route53: &gatewayv1alpha1.Route53DNS01{
				Region: "us-east-1", SecretAccessKeySecretRef: ptr.To(ref("", "secret-access-key"))}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{Route53: &cmacmev1.ACMEIssuerDNS01ProviderRoute53{
				Region: "us-east-1", SecretAccessKey: sel("", "secret-access-key")}},
		},
		{
			name: "route53 with ambient credentials, no selector",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Route53, Route53: &gatewayv1alpha1.Route53DNS01{Region: "us-east-1"}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{Route53: &cmacmev1.ACMEIssuerDNS01ProviderRoute53{Region: "us-east-1"}},
		},
		{
			name: "rfc2136, algorithm left to its default",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01RFC2136, RFC2136: &gatewayv1alpha1.RFC2136DNS01{
				Nameserver: "10.0.0.53:53", TSIGKeyName: "acme", TSIGSecretSecretRef: ref("tsig", "tsig-secret-key"),
			}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{RFC2136: &cmacmev1.ACMEIssuerDNS01ProviderRFC2136{
				Nameserver: "10.0.0.53:53", TSIGKeyName: "acme", TSIGAlgorithm: "HMACSHA256", TSIGSecret: sel("tsig", "tsig-secret-key"),
			}},
		},
		{
			name: "rfc2136 with its own algorithm and key",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01RFC2136, RFC2136: &gatewayv1alpha1.RFC2136DNS01{
				Nameserver: "ns:53", TSIGKeyName: "k", TSIGAlgorithm: "HMACSHA512", TSIGSecretSecretRef: ref("s", "secret"),
			}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{RFC2136: &cmacmev1.ACMEIssuerDNS01ProviderRFC2136{
				Nameserver: "ns:53", TSIGKeyName: "k", TSIGAlgorithm: "HMACSHA512", TSIGSecret: sel("s", "secret"),
			}},
		},
		{
			name: "only the selected provider's block is read",
			spec: dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01DigitalOcean,
				Cloudflare:   &gatewayv1alpha1.CloudflareDNS01{APITokenSecretRef: ref("cf", "t")},
				DigitalOcean: &gatewayv1alpha1.DigitalOceanDNS01{TokenSecretRef: ref("do", "t")}}),
			want: cmacmev1.ACMEChallengeSolverDNS01{DigitalOcean: &cmacmev1.ACMEIssuerDNS01ProviderDigitalOcean{Token: sel("do", "t")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issuer, err := DesiredIssuer(IssuerInput{TenantGateway: "cozystack", Namespace: "tenant-root", Spec: tt.spec})
			if err != nil {
				t.Fatal(err)
			}
			acme := issuer.Spec.ACME
			if acme.Server != LetsEncryptProdServer || acme.PrivateKey.Name != "cozystack-acme-account" || len(acme.Solvers) != 1 {
				t.Fatalf("issuer: %+v", acme)
			}
			if s := acme.Solvers[0]; s.HTTP01 != nil || s.DNS01 == nil || !reflect.DeepEqual(*s.DNS01, tt.want) {
				g, _ := json.Marshal(s)
				w, _ := json.Marshal(tt.want)
				t.Fatalf("solver %s\nwant dns01 %s", g, w)
			}
		})
	}
}

func TestDesiredIssuerErrors(t *testing.T) {
	dns := func(d *gatewayv1alpha1.DNS01Config) gatewayv1alpha1.TenantGatewaySpec {
		return gatewayv1alpha1.TenantGatewaySpec{CertMode: gatewayv1alpha1.CertModeDNS01, DNS01: d}
	}
	tests := []struct {
		name       string
		spec       gatewayv1alpha1.TenantGatewaySpec
		wantReason string
		wantField  string
	}{
		{"unknown issuer", gatewayv1alpha1.TenantGatewaySpec{IssuerName: "zerossl"}, gatewayv1alpha1.ReasonUnknownIssuer, ""},
		{"unknown mode", gatewayv1alpha1.TenantGatewaySpec{CertMode: "tls-alpn01"}, gatewayv1alpha1.ReasonInvalidSpec, "certMode"},
		{"dns01 without its block", dns(nil), gatewayv1alpha1.ReasonInvalidSpec, "dns01"},
		{"cloudflare without its block", dns(&gatewayv1alpha1.DNS01Config{}), gatewayv1alpha1.ReasonInvalidSpec, "dns01.cloudflare"},
		{"digitalocean without its block", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01DigitalOcean}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.digitalocean"},
		{"route53 without region", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Route53}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.route53.region"},
		{"route53 access key without its Secret", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Route53,
			Route53: &gatewayv1alpha1.Route53DNS01{Region: "r", AccessKeyID: "AKIA", SecretAccessKeySecretRef: ptr.To(ref("", "secret-access-key"))}}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.route53.secretAccessKeySecretRef"},
		{"rfc2136 without nameserver", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01RFC2136}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.rfc2136.nameserver"},
		{"rfc2136 without TSIG key name", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01RFC2136,
			RFC2136: &gatewayv1alpha1.RFC2136DNS01{Nameserver: "ns:53", TSIGSecretSecretRef: ref("tsig", "k")}}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.rfc2136"},
		{"rfc2136 without TSIG Secret name", dns(&gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01RFC2136,
			RFC2136: &gatewayv1alpha1.RFC2136DNS01{Nameserver: "ns:53", TSIGKeyName: "acme", TSIGSecretSecretRef: ref("", "tsig-secret-key")}}),
			gatewayv1alpha1.ReasonInvalidSpec, "dns01.rfc2136"},
		{"unknown provider", dns(&gatewayv1alpha1.DNS01Config{Provider: "gandi"}), gatewayv1alpha1.ReasonInvalidSpec, "dns01.provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issuer, err := DesiredIssuer(IssuerInput{TenantGateway: "cozystack", Namespace: "tenant-root", Spec: tt.spec})
			if err == nil || issuer != nil {
				t.Fatalf("got %v, %v; want an error and no Issuer", issuer, err)
			}
			if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != tt.wantReason {
				t.Fatalf("stalled %v, want reason %q (%v)", s, tt.wantReason, err)
			}
			var specErr *tenantgateway.SpecError
			if tt.wantField != "" && (!errors.As(err, &specErr) || specErr.Field != tt.wantField) {
				t.Fatalf("err %v, want a SpecError on %s", err, tt.wantField)
			}
		})
	}
}

func TestDesiredIssuerExistingSecret(t *testing.T) {
	// No Issuer, and no error even with a bogus issuer name: it is not used.
	issuer, err := DesiredIssuer(IssuerInput{TenantGateway: "cozystack", Namespace: "tenant-root",
		Spec: gatewayv1alpha1.TenantGatewaySpec{CertMode: gatewayv1alpha1.CertModeExistingSecret, IssuerName: "zerossl"}})
	if issuer != nil || err != nil {
		t.Fatalf("got %v, %v; want nothing", issuer, err)
	}
}
