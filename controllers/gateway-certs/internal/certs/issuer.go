package certs

import (
	"cmp"
	"fmt"

	cmacmev1 "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// ACME directories of the supported issuer names.
const (
	LetsEncryptProdServer  = "https://acme-v02.api.letsencrypt.org/directory"
	LetsEncryptStageServer = "https://acme-staging-v02.api.letsencrypt.org/directory"
)

// ACMEServer maps spec.issuerName to its ACME directory URL. An empty name is
// the default, letsencrypt-prod; any other unknown name is a
// *UnknownIssuerError. To support another ACME provider, add a
// constant and a case here, and the name to the CRD enum.
func ACMEServer(issuerName gatewayv1alpha1.IssuerName) (string, error) {
	switch issuerName {
	case "", gatewayv1alpha1.IssuerNameLetsEncryptProd:
		return LetsEncryptProdServer, nil
	case gatewayv1alpha1.IssuerNameLetsEncryptStage:
		return LetsEncryptStageServer, nil
	}
	return "", &UnknownIssuerError{Name: string(issuerName)}
}

// IssuerInput: the TenantGateway's name, namespace and spec, and the
// managed-by label value.
type IssuerInput struct {
	TenantGateway string
	Namespace     string
	Spec          gatewayv1alpha1.TenantGatewaySpec
	ManagedBy     string
}

// DesiredIssuer is the per-tenant ACME Issuer <tgw>-gateway, its account key
// in the Secret <tgw>-acme-account, with one solver:
//
//   - http01: gatewayHTTPRoute, attaching cert-manager's challenge routes to
//     the http listener of the Gateway <tgw>;
//   - dns01: the selected provider (cloudflare when unset), with the Secret
//     names and keys the spec selects, exactly as written (upstream
//     Cozystack's controller does the same).
//
// With certMode existingSecret no Issuer is wanted: it returns nil and no
// error, and the caller removes the Issuer it owns, if any. An unknown
// issuer name is a *UnknownIssuerError; certMode dns01 without
// spec.dns01, without the selected provider's block or without a field
// cert-manager cannot work without is a *tenantgateway.SpecError. The caller
// adds the owner reference.
func DesiredIssuer(in IssuerInput) (*cmv1.Issuer, error) {
	mode := in.Spec.EffectiveCertMode()
	if mode == gatewayv1alpha1.CertModeExistingSecret {
		return nil, nil
	}
	server, err := ACMEServer(in.Spec.IssuerName)
	if err != nil {
		return nil, err
	}
	var solver cmacmev1.ACMEChallengeSolver
	switch mode {
	case gatewayv1alpha1.CertModeHTTP01:
		solver = http01Solver(in.TenantGateway, in.Namespace)
	case gatewayv1alpha1.CertModeDNS01:
		s, err := dns01Solver(in.Spec.DNS01)
		if err != nil {
			return nil, err
		}
		solver = s
	default:
		return nil, &tenantgateway.SpecError{Field: "certMode", Message: fmt.Sprintf("unknown certMode %q: use http01, dns01 or existingSecret", mode)}
	}
	return &cmv1.Issuer{
		TypeMeta: metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.Issuer(in.TenantGateway),
			Namespace: in.Namespace,
			Labels:    tenantgateway.ObjectLabels(in.TenantGateway, in.ManagedBy),
		},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: &cmacmev1.ACMEIssuer{
			Server:     server,
			PrivateKey: secretKey(names.ACMEAccountSecret(in.TenantGateway), ""),
			Solvers:    []cmacmev1.ACMEChallengeSolver{solver},
		}}},
	}, nil
}

// http01Solver puts challenge routes on the Gateway's http listener, the one
// port-80 listener that admits routes from the owner namespace (where
// cert-manager creates them for a namespaced Issuer).
func http01Solver(tgw, namespace string) cmacmev1.ACMEChallengeSolver {
	return cmacmev1.ACMEChallengeSolver{HTTP01: &cmacmev1.ACMEChallengeSolverHTTP01{
		GatewayHTTPRoute: &cmacmev1.ACMEChallengeSolverHTTP01GatewayHTTPRoute{
			ParentRefs: []gatewayv1.ParentReference{tenantgateway.HTTPListenerRef(tgw, namespace)},
		},
	}}
}

// dns01Solver maps spec.dns01 to cert-manager's provider block: the Secret
// and key of every selector are passed on as the spec names them.
func dns01Solver(d *gatewayv1alpha1.DNS01Config) (cmacmev1.ACMEChallengeSolver, error) {
	if d == nil {
		return cmacmev1.ACMEChallengeSolver{}, &tenantgateway.SpecError{Field: "dns01", Message: "required with certMode dns01: the provider and its block"}
	}
	provider := d.Provider
	if provider == "" {
		provider = gatewayv1alpha1.DefaultDNS01Provider
	}
	missing := func(block, what string) error {
		return &tenantgateway.SpecError{Field: "dns01." + block, Message: fmt.Sprintf("required with provider %s: %s", provider, what)}
	}
	var p cmacmev1.ACMEChallengeSolverDNS01
	switch provider {
	case gatewayv1alpha1.DNS01Cloudflare:
		c := d.Cloudflare
		if c == nil {
			return cmacmev1.ACMEChallengeSolver{}, missing("cloudflare", "apiTokenSecretRef, the Secret name and key of the API token")
		}
		p.Cloudflare = &cmacmev1.ACMEIssuerDNS01ProviderCloudflare{APIToken: ptr.To(selector(c.APITokenSecretRef))}
	case gatewayv1alpha1.DNS01Route53:
		r := d.Route53
		switch {
		case r == nil || r.Region == "":
			return cmacmev1.ACMEChallengeSolver{}, missing("route53.region", "the AWS region of the hosted zone")
		case r.AccessKeyID != "" && (r.SecretAccessKeySecretRef == nil || r.SecretAccessKeySecretRef.Name == ""):
			return cmacmev1.ACMEChallengeSolver{}, &tenantgateway.SpecError{Field: "dns01.route53.secretAccessKeySecretRef",
				Message: "required with accessKeyID: the Secret name and key of the secret access key (or leave accessKeyID empty to use ambient credentials)"}
		}
		p.Route53 = &cmacmev1.ACMEIssuerDNS01ProviderRoute53{Region: r.Region, AccessKeyID: r.AccessKeyID}
		if r.SecretAccessKeySecretRef != nil {
			p.Route53.SecretAccessKey = selector(*r.SecretAccessKeySecretRef)
		}
	case gatewayv1alpha1.DNS01DigitalOcean:
		o := d.DigitalOcean
		if o == nil {
			return cmacmev1.ACMEChallengeSolver{}, missing("digitalocean", "tokenSecretRef, the Secret name and key of the API token")
		}
		p.DigitalOcean = &cmacmev1.ACMEIssuerDNS01ProviderDigitalOcean{Token: selector(o.TokenSecretRef)}
	case gatewayv1alpha1.DNS01RFC2136:
		r := d.RFC2136
		switch {
		case r == nil || r.Nameserver == "":
			return cmacmev1.ACMEChallengeSolver{}, missing("rfc2136.nameserver", "host:port of the authoritative DNS server")
		case r.TSIGKeyName == "" || r.TSIGSecretSecretRef.Name == "":
			return cmacmev1.ACMEChallengeSolver{}, missing("rfc2136", "tsigKeyName and tsigSecretSecretRef.name, the TSIG key and the Secret holding it")
		}
		p.RFC2136 = &cmacmev1.ACMEIssuerDNS01ProviderRFC2136{
			Nameserver:    r.Nameserver,
			TSIGKeyName:   r.TSIGKeyName,
			TSIGAlgorithm: cmp.Or(r.TSIGAlgorithm, gatewayv1alpha1.DefaultRFC2136TSIGAlgorithm),
			TSIGSecret:    selector(r.TSIGSecretSecretRef),
		}
	default:
		return cmacmev1.ACMEChallengeSolver{}, &tenantgateway.SpecError{Field: "dns01.provider", Message: fmt.Sprintf("unknown provider %q: use cloudflare, route53, digitalocean or rfc2136", provider)}
	}
	return cmacmev1.ACMEChallengeSolver{DNS01: &p}, nil
}

// selector turns a Secret key selector of the spec into cert-manager's.
func selector(s corev1.SecretKeySelector) cmmetav1.SecretKeySelector {
	return secretKey(s.Name, s.Key)
}

func secretKey(name, key string) cmmetav1.SecretKeySelector {
	return cmmetav1.SecretKeySelector{LocalObjectReference: cmmetav1.LocalObjectReference{Name: name}, Key: key}
}
