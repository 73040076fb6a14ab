package controller

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	certrules "github.com/cozyplane/cozyplane/controllers/gateway-certs/internal/certs"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
	"github.com/cozyplane/cozyplane/pkg/testenv/onereconcile"
)

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// reconcileTwice runs one Reconcile of the TenantGateway ns/name, once the
// cache shows what the test wrote, and returns the writes it made; then,
// once the cache shows those, a second, which must write nothing.
func reconcileTwice(t *testing.T, ns, name string) []string {
	t.Helper()
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	caughtUp(t)
	writes.Take()
	if _, err := rec.Reconcile(ctx, req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	first := writes.Take()
	caughtUp(t)
	if _, err := rec.Reconcile(ctx, req); err != nil {
		t.Fatalf("second Reconcile: %v", err)
	}
	if again := writes.Take(); len(again) != 0 {
		t.Fatalf("a second Reconcile of a settled TenantGateway wrote %v", again)
	}
	return first
}

// fixture is one case's namespace, its TenantGateway and the Gateway its
// listeners come from (written by gateway-listeners in a real system).
func fixture(t *testing.T, ns string, spec gatewayv1alpha1.TenantGatewaySpec, hostnames ...string) *gatewayv1alpha1.TenantGateway {
	t.Helper()
	ctx := context.Background()
	check(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns}, Spec: spec}
	check(t, k8s.Create(ctx, tgw))
	check(t, k8s.Create(ctx, gatewayOf(tgw, hostnames...)))
	return tgw
}

// gatewayOf is the Gateway gateway-listeners writes for tgw with routes for
// hostnames attached, written out: the port-80 listener, and the HTTPS
// listeners of its certMode with the Secrets they serve (http01: one per
// hostname, its own; dns01 and existingSecret: *.<apex> and <apex>, the
// wildcard one). allowedRoutes are left to the API server's defaults: no
// Certificate depends on them.
func gatewayOf(tgw *gatewayv1alpha1.TenantGateway, hostnames ...string) *gatewayv1.Gateway {
	https := func(name, hostname, secret string) gatewayv1.Listener {
		return gatewayv1.Listener{
			Name: gatewayv1.SectionName(name), Hostname: ptr.To(gatewayv1.Hostname(hostname)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{{
				Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Secret")), Name: gatewayv1.ObjectName(secret)}}},
		}
	}
	listeners := []gatewayv1.Listener{{Name: names.ListenerHTTP, Port: 80, Protocol: gatewayv1.HTTPProtocolType}}
	switch apex := tgw.Spec.Apex; tgw.Spec.EffectiveCertMode() {
	case gatewayv1alpha1.CertModeHTTP01:
		for _, h := range hostnames {
			listeners = append(listeners, https(names.PerHostListener(h), h, names.PerListenerCertificate(tgw.Name, h)))
		}
	default:
		secret := names.WildcardCertificate(tgw.Name)
		if tgw.Spec.WildcardSecretRef != nil {
			secret = tgw.Spec.WildcardSecretRef.Name
		}
		listeners = append(listeners, https(names.ListenerHTTPS, "*."+apex, secret), https(names.ListenerHTTPSApex, apex, secret))
	}
	slices.SortFunc(listeners, func(a, b gatewayv1.Listener) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: names.Gateway(tgw.Name), Namespace: tgw.Namespace,
			Labels: tenantgateway.ObjectLabels(tgw.Name, "cozystack-gateway-listeners")},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "test", Listeners: listeners},
	}
}

// condition is the TenantGateway's CertificatesReady as stored.
func condition(t *testing.T, tgw *gatewayv1alpha1.TenantGateway) *metav1.Condition {
	t.Helper()
	return onereconcile.StoredCondition(t, k8s, tgw, conditionsOf, gatewayv1alpha1.ConditionCertificatesReady)
}

func conditionsOf(g *gatewayv1alpha1.TenantGateway) []metav1.Condition { return g.Status.Conditions }

// objects lists the Issuers and Certificates of ns, by name.
func objects(t *testing.T, ns string) (map[string]cmv1.Issuer, map[string]cmv1.Certificate) {
	t.Helper()
	ctx := context.Background()
	var is cmv1.IssuerList
	check(t, k8s.List(ctx, &is, client.InNamespace(ns)))
	var cs cmv1.CertificateList
	check(t, k8s.List(ctx, &cs, client.InNamespace(ns)))
	issuers, certs := map[string]cmv1.Issuer{}, map[string]cmv1.Certificate{}
	for _, i := range is.Items {
		issuers[i.Name] = i
	}
	for _, c := range cs.Items {
		certs[c.Name] = c
	}
	return issuers, certs
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// controlledBy checks that obj is controlled by tgw and labelled as ours.
func controlledBy(t *testing.T, obj client.Object, tgw *gatewayv1alpha1.TenantGateway) {
	t.Helper()
	live := &gatewayv1alpha1.TenantGateway{}
	check(t, k8s.Get(context.Background(), client.ObjectKeyFromObject(tgw), live))
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "TenantGateway" || ref.Name != live.Name || ref.UID != live.UID {
		t.Errorf("%T %s: controller %+v, want TenantGateway %s (%s)", obj, obj.GetName(), ref, live.Name, live.UID)
	}
	if got := obj.GetLabels()[gatewayv1alpha1.LabelManagedBy]; got != fieldManager {
		t.Errorf("%T %s: label %s=%q, want %q", obj, obj.GetName(), gatewayv1alpha1.LabelManagedBy, got, fieldManager)
	}
}

func TestReconcileHTTP01(t *testing.T) {
	const ns = "certs-http01"
	hosts := []string{"app.http01.example.org", "shop.http01.example.org"}
	tgw := fixture(t, ns, gatewayv1alpha1.TenantGatewaySpec{Apex: "http01.example.org", CertMode: gatewayv1alpha1.CertModeHTTP01}, hosts...)

	wrote := reconcileTwice(t, ns, tgw.Name)

	issuers, certs := objects(t, ns)
	issuer, ok := issuers[names.Issuer(tgw.Name)]
	if !ok || len(issuers) != 1 {
		t.Fatalf("Issuers %v, want only %s", keys(issuers), names.Issuer(tgw.Name))
	}
	controlledBy(t, &issuer, tgw)
	if acme := issuer.Spec.ACME; acme == nil || len(acme.Solvers) != 1 || acme.Solvers[0].HTTP01 == nil || acme.Solvers[0].DNS01 != nil {
		t.Errorf("Issuer %s: ACME %+v, want one HTTP-01 solver", issuer.Name, acme)
	}
	var want []string
	for _, h := range hosts {
		want = append(want, names.PerListenerCertificate(tgw.Name, h))
	}
	slices.Sort(want)
	if got := keys(certs); !slices.Equal(got, want) {
		t.Fatalf("Certificates %v, want one per listener %v", got, want)
	}
	for _, h := range hosts {
		cert := certs[names.PerListenerCertificate(tgw.Name, h)]
		controlledBy(t, &cert, tgw)
		if !slices.Equal(cert.Spec.DNSNames, []string{h}) || cert.Spec.SecretName != cert.Name ||
			cert.Spec.IssuerRef.Name != issuer.Name || cert.Labels[gatewayv1alpha1.LabelPerListenerCert] != "true" {
			t.Errorf("Certificate %s: dnsNames %v, secret %s, issuer %+v, labels %v", cert.Name, cert.Spec.DNSNames, cert.Spec.SecretName, cert.Spec.IssuerRef, cert.Labels)
		}
	}
	// The Issuer, two Certificates and the status: nothing else.
	if len(wrote) != 4 {
		t.Errorf("writes %v, want the Issuer, two Certificates and the status", wrote)
	}
	if c := condition(t, tgw); c.Status != metav1.ConditionUnknown || c.Reason != gatewayv1alpha1.ReasonIssuerNotReady {
		t.Errorf("CertificatesReady %s %s: %s, want Unknown %s (cert-manager has not reported)", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonIssuerNotReady)
	}

	t.Run("a change after a plain create: patched, the create's entry kept while the fields are the same", func(t *testing.T) {
		ctx := context.Background()
		created := false
		for _, e := range issuer.ManagedFields {
			created = created || e.Manager == ssa.CreateManager(fieldManager)
		}
		if !created {
			t.Fatalf("the Issuer was not made with a plain create: managed fields %+v", issuer.ManagedFields)
		}
		live := &gatewayv1alpha1.TenantGateway{}
		check(t, k8s.Get(ctx, client.ObjectKeyFromObject(tgw), live))
		live.Spec.IssuerName = gatewayv1alpha1.IssuerNameLetsEncryptStage
		check(t, k8s.Update(ctx, live))
		wrote := reconcileTwice(t, ns, tgw.Name)
		if !slices.Contains(wrote, "patch Issuer "+issuer.Name) {
			t.Errorf("writes %v, want the Issuer patched", wrote)
		}
		var got cmv1.Issuer
		check(t, k8s.Get(ctx, client.ObjectKeyFromObject(&issuer), &got))
		server, err := certrules.ACMEServer(gatewayv1alpha1.IssuerNameLetsEncryptStage)
		check(t, err)
		if got.Spec.ACME == nil || got.Spec.ACME.Server != server {
			t.Errorf("Issuer %s: ACME %+v, want server %s", got.Name, got.Spec.ACME, server)
		}
		// Only the server's value changed: the write set the fields the
		// create set, so it needed no hand-over and was a merge patch
		// under the create's entry (pkg/ssa Applier.Creates).
		kept := false
		for _, e := range got.ManagedFields {
			kept = kept || e.Manager == ssa.CreateManager(fieldManager)
		}
		shape := (ssa.Applier{FieldManager: fieldManager}).ShapeAnnotation()
		if !kept || got.Annotations[shape] == "" {
			t.Errorf("after a write of the create's shape: the create's entry kept %v, the mark %q; want both", kept, got.Annotations[shape])
		}
		// Back to production, for the cases after this one.
		check(t, k8s.Get(ctx, client.ObjectKeyFromObject(tgw), live))
		live.Spec.IssuerName = gatewayv1alpha1.IssuerNameLetsEncryptProd
		check(t, k8s.Update(ctx, live))
		reconcileTwice(t, ns, tgw.Name)
		check(t, k8s.Get(ctx, client.ObjectKeyFromObject(&issuer), &issuer))
	})

	t.Run("cert-manager reports: Ready", func(t *testing.T) {
		ctx := context.Background()
		issuer.Status.Conditions = []cmv1.IssuerCondition{{Type: cmv1.IssuerConditionReady, Status: cmmetav1.ConditionTrue, Reason: "ACMEAccountRegistered"}}
		check(t, k8s.Status().Update(ctx, &issuer))
		for _, cert := range certs {
			cert.Status.Conditions = []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmetav1.ConditionTrue,
				Reason: "Ready", ObservedGeneration: cert.Generation}}
			check(t, k8s.Status().Update(ctx, &cert))
		}
		wrote := reconcileTwice(t, ns, tgw.Name)
		if !slices.Equal(wrote, []string{"status apply TenantGateway " + tgw.Name}) {
			t.Errorf("writes %v, want the status only", wrote)
		}
		if c := condition(t, tgw); c.Status != metav1.ConditionTrue || c.Reason != gatewayv1alpha1.ReasonReady {
			t.Errorf("CertificatesReady %s %s: %s, want True %s", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonReady)
		}
	})
}

func TestReconcileDNS01(t *testing.T) {
	const ns = "certs-dns01"
	spec := gatewayv1alpha1.TenantGatewaySpec{Apex: "dns01.example.org", CertMode: gatewayv1alpha1.CertModeDNS01,
		DNS01: &gatewayv1alpha1.DNS01Config{Provider: gatewayv1alpha1.DNS01Cloudflare, Cloudflare: &gatewayv1alpha1.CloudflareDNS01{
			APITokenSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cf"}, Key: "token"}}}}
	tgw := fixture(t, ns, spec, "app.dns01.example.org")

	wrote := reconcileTwice(t, ns, tgw.Name)

	issuers, certs := objects(t, ns)
	issuer, ok := issuers[names.Issuer(tgw.Name)]
	if !ok || len(issuers) != 1 {
		t.Fatalf("Issuers %v, want only %s", keys(issuers), names.Issuer(tgw.Name))
	}
	controlledBy(t, &issuer, tgw)
	if acme := issuer.Spec.ACME; acme == nil || len(acme.Solvers) != 1 || acme.Solvers[0].DNS01 == nil || acme.Solvers[0].DNS01.Cloudflare == nil {
		t.Errorf("Issuer %s: ACME %+v, want one Cloudflare DNS-01 solver", issuer.Name, acme)
	}
	wildcard := names.WildcardCertificate(tgw.Name)
	if got := keys(certs); !slices.Equal(got, []string{wildcard}) {
		t.Fatalf("Certificates %v, want only the wildcard %s", got, wildcard)
	}
	cert := certs[wildcard]
	controlledBy(t, &cert, tgw)
	if !slices.Contains(cert.Spec.DNSNames, "dns01.example.org") || !slices.Contains(cert.Spec.DNSNames, "*.dns01.example.org") ||
		cert.Labels[gatewayv1alpha1.LabelPerListenerCert] != "" {
		t.Errorf("Certificate %s: dnsNames %v, labels %v; want the apex and *.apex", wildcard, cert.Spec.DNSNames, cert.Labels)
	}
	if len(wrote) != 3 {
		t.Errorf("writes %v, want the Issuer, the Certificate and the status", wrote)
	}
	if c := condition(t, tgw); c.Status != metav1.ConditionUnknown || c.Reason != gatewayv1alpha1.ReasonIssuerNotReady {
		t.Errorf("CertificatesReady %s %s: %s, want Unknown %s", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonIssuerNotReady)
	}
}

func TestReconcileExistingSecret(t *testing.T) {
	const ns = "certs-existing"
	tgw := fixture(t, ns, gatewayv1alpha1.TenantGatewaySpec{Apex: "existing.example.org", CertMode: gatewayv1alpha1.CertModeExistingSecret,
		WildcardSecretRef: &corev1.LocalObjectReference{Name: "wildcard"}}, "app.existing.example.org")

	wrote := reconcileTwice(t, ns, tgw.Name)

	issuers, certs := objects(t, ns)
	if len(issuers) != 0 || len(certs) != 0 {
		t.Fatalf("Issuers %v, Certificates %v: the wildcard Secret is the user's, none is wanted", keys(issuers), keys(certs))
	}
	if !slices.Equal(wrote, []string{"status apply TenantGateway " + tgw.Name}) {
		t.Errorf("writes %v, want the status only", wrote)
	}
	// The Gateway implementation has not reported on the listeners yet.
	if c := condition(t, tgw); c.Status != metav1.ConditionUnknown || c.Reason != gatewayv1alpha1.ReasonProgressing || !strings.Contains(c.Message, "wildcard") {
		t.Errorf("CertificatesReady %s %s: %s, want Unknown %s naming Secret wildcard", c.Status, c.Reason, c.Message, gatewayv1alpha1.ReasonProgressing)
	}
}

func TestReconcileRefusesForeignObjects(t *testing.T) {
	const ns = "certs-foreign"
	ctx := context.Background()
	host := "app.foreign.example.org"
	tgw := fixture(t, ns, gatewayv1alpha1.TenantGatewaySpec{Apex: "foreign.example.org", CertMode: gatewayv1alpha1.CertModeHTTP01},
		host, "shop.foreign.example.org")
	// Someone else's Issuer and Certificate at the names the TenantGateway
	// derives.
	foreignIssuer := &cmv1.Issuer{ObjectMeta: metav1.ObjectMeta{Name: names.Issuer(tgw.Name), Namespace: ns, Labels: map[string]string{"owner": "someone"}},
		Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}}}
	check(t, k8s.Create(ctx, foreignIssuer))
	foreignCert := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: names.PerListenerCertificate(tgw.Name, host), Namespace: ns},
		Spec: cmv1.CertificateSpec{SecretName: "theirs", DNSNames: []string{"theirs.example.com"},
			IssuerRef: cmmetav1.IssuerReference{Name: "theirs", Kind: cmv1.IssuerKind}}}
	check(t, k8s.Create(ctx, foreignCert))

	wrote := reconcileTwice(t, ns, tgw.Name)

	issuers, certs := objects(t, ns)
	if got := issuers[foreignIssuer.Name]; got.ResourceVersion != foreignIssuer.ResourceVersion || metav1.GetControllerOf(&got) != nil {
		t.Errorf("the foreign Issuer was touched: resourceVersion %s (was %s), controller %+v", got.ResourceVersion, foreignIssuer.ResourceVersion, metav1.GetControllerOf(&got))
	}
	if got := certs[foreignCert.Name]; got.ResourceVersion != foreignCert.ResourceVersion || metav1.GetControllerOf(&got) != nil {
		t.Errorf("the foreign Certificate was touched: resourceVersion %s (was %s)", got.ResourceVersion, foreignCert.ResourceVersion)
	}
	// The other listener's Certificate is still ours to write.
	other := names.PerListenerCertificate(tgw.Name, "shop.foreign.example.org")
	if cert, ok := certs[other]; !ok {
		t.Errorf("Certificate %s of the other listener not written: %v", other, keys(certs))
	} else {
		controlledBy(t, &cert, tgw)
	}
	// A plain create: it did not exist.
	want := []string{"create Certificate " + other, "status apply TenantGateway " + tgw.Name}
	if !slices.Equal(wrote, want) {
		t.Errorf("writes %v, want %v", wrote, want)
	}
	c := condition(t, tgw)
	if c.Status != metav1.ConditionFalse || c.Reason != gatewayv1alpha1.ReasonReconcileError {
		t.Errorf("CertificatesReady %s %s, want False %s", c.Status, c.Reason, gatewayv1alpha1.ReasonReconcileError)
	}
	for _, name := range []string{foreignIssuer.Name, foreignCert.Name} {
		if !strings.Contains(c.Message, name) || !strings.Contains(c.Message, "left untouched") {
			t.Errorf("CertificatesReady's message does not say %s was left untouched: %s", name, c.Message)
		}
	}
	if !strings.Contains(c.Message, "delete or rename it") {
		t.Errorf("CertificatesReady's message does not say what to do: %s", c.Message)
	}
}

func TestReconcileTenantGatewayGone(t *testing.T) {
	const ns = "certs-gone"
	ctx := context.Background()
	tgw := fixture(t, ns, gatewayv1alpha1.TenantGatewaySpec{Apex: "gone.example.org", CertMode: gatewayv1alpha1.CertModeHTTP01}, "app.gone.example.org")
	check(t, k8s.Delete(ctx, tgw))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tgw), &gatewayv1alpha1.TenantGateway{}); !apierrors.IsNotFound(err) {
		t.Fatalf("TenantGateway still there: %v", err)
	}

	if wrote := reconcileTwice(t, ns, tgw.Name); len(wrote) != 0 {
		t.Errorf("writes %v for a TenantGateway that is gone", wrote)
	}
	if issuers, certs := objects(t, ns); len(issuers) != 0 || len(certs) != 0 {
		t.Errorf("Issuers %v, Certificates %v written for a TenantGateway that is gone", keys(issuers), keys(certs))
	}
}
