package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary, kills it
// (SIGKILL) while it builds the Gateways of 20 TenantGateways, starts it
// again and checks that every TenantGateway ends up with exactly its
// Gateway (three route listeners, http and three passthrough) and its
// redirect route, reported in its status; then that two resync periods of
// the settled system cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n, routes = 20, 3
	ctx := context.Background()
	crds, err := testenv.GatewayAPICRDs("gateways", "httproutes", "tlsroutes", "gatewayclasses")
	if err != nil {
		t.Fatal(err)
	}
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := testenv.NewHarness(t, append(crds, own), gatewayv1.Install, gatewayv1alpha1.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig
	for i := range n {
		ns := fmt.Sprintf("tenant-%02d", i)
		check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		check(t, c.Create(ctx, &gatewayv1alpha1.TenantGateway{
			ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns},
			Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: ns + ".example.org", CertMode: gatewayv1alpha1.CertModeHTTP01,
				TLSPassthroughServices: []string{"api", "vm-exportproxy", "cdi-uploadproxy"}},
		}))
		for j := range routes {
			check(t, c.Create(ctx, &gatewayv1.HTTPRoute{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", j), Namespace: ns},
				Spec: gatewayv1.HTTPRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "cozystack"}}},
					Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("app-%d.%s.example.org", j, ns))},
				},
			}))
		}
	}
	gateways := func() []gatewayv1.Gateway {
		list := &gatewayv1.GatewayList{}
		check(t, c.List(ctx, list))
		return list.Items
	}

	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=5", "--kube-api-burst=5", "--workers=1"}, func() int { return len(gateways()) }, 3, n, "Gateways written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	want := routes + 4
	testenv.Eventually(t, 120*time.Second, func() (bool, string, error) {
		list := &gatewayv1alpha1.TenantGatewayList{}
		if err := c.List(ctx, list); err != nil {
			return false, "", err
		}
		done := 0
		for _, tgw := range list.Items {
			if len(tgw.Status.Listeners) == want && tgw.Status.ObservedGeneration == tgw.Generation {
				done++
			}
		}
		return done == n, fmt.Sprintf("%d of %d TenantGateways report their %d listeners after the restart", done, n, want), nil
	})
	gws := gateways()
	if len(gws) != n {
		t.Fatalf("%d Gateways, want %d", len(gws), n)
	}
	for _, gw := range gws {
		ref := metav1.GetControllerOf(&gw)
		if ref == nil || ref.Kind != "TenantGateway" || len(gw.Spec.Listeners) != want {
			t.Fatalf("Gateway %s/%s: controller %+v, %d listeners", gw.Namespace, gw.Name, ref, len(gw.Spec.Listeners))
		}
	}
	redirects := &gatewayv1.HTTPRouteList{}
	check(t, c.List(ctx, redirects, client.MatchingLabels{gatewayv1alpha1.LabelGateway: "cozystack"}))
	if len(redirects.Items) != n {
		t.Fatalf("%d redirect routes, want %d", len(redirects.Items), n)
	}

	second.AssertIdle(t, 25*time.Second)
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
