package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary against 20
// TenantGateways in HTTP-01 mode whose Gateways someone else maintains
// (three per-hostname HTTPS listeners each), kills it (SIGKILL) while it
// writes their Issuers and Certificates, starts it again and checks that
// every TenantGateway ends up with exactly its Issuer and one Certificate per
// listener, reported in CertificatesReady; then that two resync periods of
// the settled system cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n, hosts = 20, 3
	ctx := context.Background()
	crds, err := testenv.GatewayAPICRDs("gateways")
	check(t, err)
	cm, err := testenv.CertManagerCRDs("issuers", "certificates")
	check(t, err)
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	check(t, err)
	h := testenv.NewHarness(t, append(append(crds, cm...), own), gatewayv1.Install, cmv1.AddToScheme, gatewayv1alpha1.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig
	for i := range n {
		ns := fmt.Sprintf("tenant-%02d", i)
		check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		tgw := &gatewayv1alpha1.TenantGateway{
			ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns},
			Spec:       gatewayv1alpha1.TenantGatewaySpec{Apex: ns + ".example.org", CertMode: gatewayv1alpha1.CertModeHTTP01},
		}
		check(t, c.Create(ctx, tgw))
		var hostnames []string
		for j := range hosts {
			hostnames = append(hostnames, fmt.Sprintf("app-%d.%s", j, tgw.Spec.Apex))
		}
		check(t, c.Create(ctx, http01Gateway(tgw, hostnames)))
	}
	count := func(list client.ObjectList) int {
		check(t, c.List(ctx, list))
		return meta.LenList(list)
	}

	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=5", "--kube-api-burst=5", "--workers=1"}, func() int { return count(&cmv1.CertificateList{}) }, 5, n*hosts, "Certificates written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	testenv.Eventually(t, 120*time.Second, func() (bool, string, error) {
		list := &gatewayv1alpha1.TenantGatewayList{}
		if err := c.List(ctx, list); err != nil {
			return false, "", err
		}
		reported := 0
		for _, tgw := range list.Items {
			cond := meta.FindStatusCondition(tgw.Status.Conditions, gatewayv1alpha1.ConditionCertificatesReady)
			if cond != nil && cond.ObservedGeneration == tgw.Generation {
				reported++
			}
		}
		certs := count(&cmv1.CertificateList{})
		return reported == n && certs == n*hosts,
			fmt.Sprintf("%d of %d TenantGateways report CertificatesReady; %d of %d Certificates written", reported, n, certs, n*hosts), nil
	})

	issuers := &cmv1.IssuerList{}
	check(t, c.List(ctx, issuers))
	if len(issuers.Items) != n {
		t.Fatalf("%d Issuers, want %d", len(issuers.Items), n)
	}
	for _, is := range issuers.Items {
		if ref := metav1.GetControllerOf(&is); ref == nil || ref.Kind != "TenantGateway" || is.Name != "cozystack-gateway" {
			t.Fatalf("Issuer %s/%s: controller %+v", is.Namespace, is.Name, ref)
		}
	}
	// Every listener's Secret is the one a Certificate of this TenantGateway
	// writes, and no Certificate is left over.
	gws := &gatewayv1.GatewayList{}
	check(t, c.List(ctx, gws))
	certs := &cmv1.CertificateList{}
	check(t, c.List(ctx, certs))
	secrets := map[string]bool{}
	for _, cert := range certs.Items {
		if ref := metav1.GetControllerOf(&cert); ref == nil || ref.Kind != "TenantGateway" || len(cert.Spec.DNSNames) != 1 {
			t.Fatalf("Certificate %s/%s: controller %+v, dnsNames %v", cert.Namespace, cert.Name, ref, cert.Spec.DNSNames)
		}
		secrets[cert.Namespace+"/"+cert.Spec.SecretName] = true
	}
	for _, gw := range gws.Items {
		for _, l := range gw.Spec.Listeners {
			if l.TLS == nil || l.TLS.Mode == nil || *l.TLS.Mode != gatewayv1.TLSModeTerminate {
				continue
			}
			for _, ref := range l.TLS.CertificateRefs {
				if !secrets[gw.Namespace+"/"+string(ref.Name)] {
					t.Fatalf("listener %s of %s/%s: no Certificate writes Secret %s", l.Name, gw.Namespace, gw.Name, ref.Name)
				}
				delete(secrets, gw.Namespace+"/"+string(ref.Name))
			}
		}
	}
	if len(secrets) != 0 {
		t.Fatalf("Certificates no listener needs: %v", secrets)
	}

	second.AssertIdle(t, 25*time.Second)
}

// http01Gateway is the Gateway of tgw (certMode http01) as gateway-listeners
// writes it for routes with hostnames attached, written out: the port-80
// listener and one HTTPS listener per hostname serving the Secret of its own
// Certificate, labelled as someone else's.
func http01Gateway(tgw *gatewayv1alpha1.TenantGateway, hostnames []string) *gatewayv1.Gateway {
	listeners := []gatewayv1.Listener{{Name: names.ListenerHTTP, Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	for _, h := range hostnames {
		listeners = append(listeners, gatewayv1.Listener{
			Name: gatewayv1.SectionName(names.PerHostListener(h)), Hostname: ptr.To(gatewayv1.Hostname(h)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{{
				Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Secret")), Name: gatewayv1.ObjectName(names.PerListenerCertificate(tgw.Name, h))}}},
		})
	}
	slices.SortFunc(listeners, func(a, b gatewayv1.Listener) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: names.Gateway(tgw.Name), Namespace: tgw.Namespace,
			Labels: tenantgateway.ObjectLabels(tgw.Name, "someone-else")},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "cilium", Listeners: listeners},
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
