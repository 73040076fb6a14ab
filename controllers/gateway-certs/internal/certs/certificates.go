package certs

import (
	"maps"
	"slices"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// CertificatesInput: the TenantGateway's name, namespace and certMode, and
// the listeners of its Gateway as read from the API server. The Gateway's
// HTTPS listeners and their certificateRefs are the whole contract between
// gateway-listeners and gateway-certs.
type CertificatesInput struct {
	TenantGateway string
	Namespace     string
	CertMode      gatewayv1alpha1.CertMode
	Listeners     []gatewayv1.Listener
	// ManagedBy is the value of the cozystack.io/managed-by label.
	ManagedBy string
}

// DesiredCertificates derives the Certificates the Gateway's HTTPS listeners
// need, sorted by name:
//
//   - a listener referencing the Secret <tgw>-<first-label>-<8hex>-tls of its
//     own hostname gets a Certificate of that name for exactly that hostname,
//     labelled cozystack.io/per-listener-cert=true (HTTP-01);
//   - the listeners referencing <tgw>-gateway-tls get one Certificate of that
//     name whose dnsNames are their hostnames plus, for each wildcard
//     *.<domain>, the domain itself: the apex, *.apex, and every child apex
//     and *.child apex (DNS-01).
//
// Both are derived whatever certMode says, so that while gateway-listeners
// moves the Gateway from one mode to the other the Certificates its current
// listeners serve stay in place. Any other certificateRef (another Secret,
// another namespace, another kind) is not ours and gets no Certificate. With
// certMode existingSecret there are none at all: the wildcard Secret is the
// user's, even if it happens to bear one of our names.
func DesiredCertificates(in CertificatesInput) []cmv1.Certificate {
	if in.CertMode == gatewayv1alpha1.CertModeExistingSecret {
		return nil
	}
	wildcard := names.WildcardCertificate(in.TenantGateway)
	dnsNames := map[string][]string{} // Secret name → hostnames
	for _, l := range in.Listeners {
		if !terminatesTLS(l) || l.Hostname == nil {
			continue
		}
		host := tenantgateway.NormalizeHostname(string(*l.Hostname))
		for _, ref := range l.TLS.CertificateRefs {
			if !localSecret(ref, in.Namespace) {
				continue
			}
			name := string(ref.Name)
			switch {
			case name == wildcard:
				dnsNames[name] = append(dnsNames[name], host)
				if domain, ok := strings.CutPrefix(host, "*."); ok {
					dnsNames[name] = append(dnsNames[name], domain)
				}
			case !strings.Contains(host, "*") && name == names.PerListenerCertificate(in.TenantGateway, host):
				dnsNames[name] = append(dnsNames[name], host)
			}
		}
	}

	certs := make([]cmv1.Certificate, 0, len(dnsNames))
	for _, name := range slices.Sorted(maps.Keys(dnsNames)) {
		labels := tenantgateway.ObjectLabels(in.TenantGateway, in.ManagedBy)
		if name != wildcard {
			labels[gatewayv1alpha1.LabelPerListenerCert] = "true"
		}
		certs = append(certs, cmv1.Certificate{
			TypeMeta:   metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Labels: labels},
			Spec: cmv1.CertificateSpec{
				SecretName: name,
				DNSNames:   sortDNSNames(dnsNames[name]),
				IssuerRef: cmmetav1.IssuerReference{
					Name:  names.Issuer(in.TenantGateway),
					Kind:  cmv1.IssuerKind,
					Group: cmv1.SchemeGroupVersion.Group,
				},
			},
		})
	}
	return certs
}

// terminatesTLS reports whether a listener serves HTTPS with certificates of
// its own (mode Terminate, the default).
func terminatesTLS(l gatewayv1.Listener) bool {
	return l.Protocol == gatewayv1.HTTPSProtocolType && l.TLS != nil &&
		(l.TLS.Mode == nil || *l.TLS.Mode == gatewayv1.TLSModeTerminate)
}

// localSecret reports whether ref names a core Secret in namespace.
func localSecret(ref gatewayv1.SecretObjectReference, namespace string) bool {
	return (ref.Group == nil || *ref.Group == "") &&
		(ref.Kind == nil || *ref.Kind == "Secret") &&
		(ref.Namespace == nil || string(*ref.Namespace) == namespace)
}

// sortDNSNames deduplicates DNS names and orders them down the DNS tree,
// comparing labels from the right, each domain directly before its wildcard:
// example.org, *.example.org, alice.example.org, *.alice.example.org, ...
func sortDNSNames(names []string) []string {
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int {
		da, wa := strings.CutPrefix(a, "*.")
		db, wb := strings.CutPrefix(b, "*.")
		if c := slices.Compare(reversedLabels(da), reversedLabels(db)); c != 0 {
			return c
		}
		switch {
		case wa == wb:
			return 0
		case wb:
			return -1
		default:
			return 1
		}
	})
	return slices.Compact(out)
}

func reversedLabels(domain string) []string {
	labels := strings.Split(domain, ".")
	slices.Reverse(labels)
	return labels
}
