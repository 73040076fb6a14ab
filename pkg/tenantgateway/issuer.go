package tenantgateway

import (
	"fmt"

	cmacmev1 "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

// ACME directories of the supported issuer names.
const (
	LetsEncryptProdServer  = "https://acme-v02.api.letsencrypt.org/directory"
	LetsEncryptStageServer = "https://acme-staging-v02.api.letsencrypt.org/directory"
)

// ACMEServer maps spec.issuerName to its ACME directory URL. An empty name is
// the default, letsencrypt-prod; any other unknown name is an
// *UnknownIssuerError. To support another ACME provider, add a constant and a
// case here, and the name to the CRD enum.
func ACMEServer(issuerName string) (string, error) {
	switch issuerName {
	case "", gatewayv1alpha1.IssuerLetsEncryptProd:
		return LetsEncryptProdServer, nil
	case gatewayv1alpha1.IssuerLetsEncryptStage:
		return LetsEncryptStageServer, nil
	}
	return "", &UnknownIssuerError{Name: issuerName}
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
//   - dns01: the selected provider, with the spec's Secret references
//     (defaults applied).
//
// With certMode existingSecret no Issuer is wanted: it returns nil and no
// error, and the caller removes the Issuer it owns, if any. An unknown
// issuer name is an *UnknownIssuerError, a provider block missing a required
// field a *SpecError. The caller adds the owner reference.
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
		s, err := dns01Solver(in.Spec.EffectiveDNS01())
		if err != nil {
			return nil, err
		}
		solver = s
	default:
		return nil, &SpecError{Field: "certMode", Message: fmt.Sprintf("unknown certMode %q: use http01, dns01 or existingSecret", mode)}
	}
	return &cmv1.Issuer{
		TypeMeta: metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.IssuerKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      IssuerName(in.TenantGateway),
			Namespace: in.Namespace,
			Labels:    ObjectLabels(in.TenantGateway, in.ManagedBy),
		},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{ACME: &cmacmev1.ACMEIssuer{
			Server:     server,
			PrivateKey: secretKey(ACMEAccountSecretName(in.TenantGateway), ""),
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
			ParentRefs: []gatewayv1.ParentReference{gatewayParentRef(tgw, namespace)},
		},
	}}
}

// dns01Solver maps the effective DNS-01 configuration to cert-manager's
// provider block.
func dns01Solver(d gatewayv1alpha1.DNS01) (cmacmev1.ACMEChallengeSolver, error) {
	var p cmacmev1.ACMEChallengeSolverDNS01
	switch d.Provider {
	case gatewayv1alpha1.DNS01Cloudflare:
		c := d.Cloudflare
		p.Cloudflare = &cmacmev1.ACMEIssuerDNS01ProviderCloudflare{APIToken: ptr.To(secretKey(c.SecretName, c.SecretKey))}
	case gatewayv1alpha1.DNS01Route53:
		r := d.Route53
		if r.Region == "" {
			return cmacmev1.ACMEChallengeSolver{}, &SpecError{Field: "dns01.route53.region", Message: "required with provider route53"}
		}
		if r.AccessKeyID != "" && r.SecretName == "" {
			return cmacmev1.ACMEChallengeSolver{}, &SpecError{Field: "dns01.route53.secretName", Message: "required with accessKeyID: the Secret holding the secret access key"}
		}
		p.Route53 = &cmacmev1.ACMEIssuerDNS01ProviderRoute53{Region: r.Region, HostedZoneID: r.HostedZoneID, AccessKeyID: r.AccessKeyID}
		if r.SecretName != "" {
			p.Route53.SecretAccessKey = secretKey(r.SecretName, r.SecretKey)
		}
	case gatewayv1alpha1.DNS01DigitalOcean:
		o := d.DigitalOcean
		p.DigitalOcean = &cmacmev1.ACMEIssuerDNS01ProviderDigitalOcean{Token: secretKey(o.SecretName, o.SecretKey)}
	case gatewayv1alpha1.DNS01RFC2136:
		r := d.RFC2136
		switch {
		case r.Nameserver == "":
			return cmacmev1.ACMEChallengeSolver{}, &SpecError{Field: "dns01.rfc2136.nameserver", Message: "required with provider rfc2136"}
		case r.TSIGKeyName == "" || r.SecretName == "":
			return cmacmev1.ACMEChallengeSolver{}, &SpecError{Field: "dns01.rfc2136", Message: "tsigKeyName and secretName are required with provider rfc2136"}
		}
		p.RFC2136 = &cmacmev1.ACMEIssuerDNS01ProviderRFC2136{
			Nameserver:    r.Nameserver,
			TSIGKeyName:   r.TSIGKeyName,
			TSIGAlgorithm: r.TSIGAlgorithm,
			TSIGSecret:    secretKey(r.SecretName, r.SecretKey),
		}
	default:
		return cmacmev1.ACMEChallengeSolver{}, &SpecError{Field: "dns01.provider", Message: fmt.Sprintf("unknown provider %q: use cloudflare, route53, digitalocean or rfc2136", d.Provider)}
	}
	return cmacmev1.ACMEChallengeSolver{DNS01: &p}, nil
}

func secretKey(name, key string) cmmetav1.SecretKeySelector {
	return cmmetav1.SecretKeySelector{LocalObjectReference: cmmetav1.LocalObjectReference{Name: name}, Key: key}
}
