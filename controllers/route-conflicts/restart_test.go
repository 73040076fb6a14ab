package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary, kills it
// (SIGKILL) while it writes the verdicts of 200 routes from 20 namespaces,
// starts it again and checks that every route carries exactly one entry of
// ours next to the Gateway implementation's, with the right verdict; then
// that two resync periods of the settled system cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const spaces, perSpace = 20, 10
	ctx := context.Background()
	crds, err := testenv.GatewayAPICRDs("httproutes", "tlsroutes")
	if err != nil {
		t.Fatal(err)
	}
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := testenv.NewHarness(t, append(crds, own), gatewayv1.Install, gatewayv1alpha1.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig
	const owner = "tenant-root"
	check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: owner}}))
	check(t, c.Create(ctx, &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: owner},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: "example.org"}}))
	gwNS := gatewayv1.Namespace(owner)
	for i := range spaces {
		ns := fmt.Sprintf("tenant-%02d", i)
		check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{gatewayv1alpha1.LabelNamespaceGateway: owner}}}))
		for j := range perSpace {
			// Route j of every namespace claims app-j: tenant-00 wins each.
			r := &gatewayv1.HTTPRoute{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", j), Namespace: ns},
				Spec: gatewayv1.HTTPRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "cozystack", Namespace: &gwNS}}},
					Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("app-%d.example.org", j))},
				},
			}
			check(t, c.Create(ctx, r))
			// The Gateway implementation's entry, which must survive.
			r.Status.Parents = []gatewayv1.RouteParentStatus{{
				ParentRef: r.Spec.ParentRefs[0], ControllerName: "io.cilium/gateway-controller",
				Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "ok", LastTransitionTime: metav1.Now()}},
			}}
			check(t, c.Status().Update(ctx, r))
		}
	}
	// verdicts counts routes with exactly one entry of ours and the
	// implementation's entry kept, and the losers among them.
	verdicts := func() (total, lost int) {
		list := &gatewayv1.HTTPRouteList{}
		check(t, c.List(ctx, list))
		for _, r := range list.Items {
			var mine, theirs int
			for _, p := range r.Status.Parents {
				switch p.ControllerName {
				case gatewayv1alpha1.RouteConflictControllerName:
					mine++
					if p.Conditions[0].Status == metav1.ConditionFalse {
						lost++
					}
				case "io.cilium/gateway-controller":
					theirs++
				}
			}
			if mine > 1 || theirs != 1 {
				t.Fatalf("route %s/%s has %d entries of ours and %d of the implementation", r.Namespace, r.Name, mine, theirs)
			}
			total += mine
		}
		return total, lost
	}

	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=5", "--kube-api-burst=5", "--workers=1"}, func() int { n, _ := verdicts(); return n }, 10, spaces*perSpace, "verdicts written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	var total, lost int
	testenv.Eventually(t, 120*time.Second, func() (bool, string, error) {
		total, lost = verdicts()
		return total == spaces*perSpace, fmt.Sprintf("%d of %d verdicts after the restart", total, spaces*perSpace), nil
	})
	if lost != (spaces-1)*perSpace {
		t.Fatalf("after the restart: %d verdicts (want %d), %d lost (want %d)", total, spaces*perSpace, lost, (spaces-1)*perSpace)
	}

	second.AssertIdle(t, 25*time.Second)
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
