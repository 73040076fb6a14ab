package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary against 20
// TenantGateways attaching three namespaces each, kills it (SIGKILL) while it
// labels them, starts it again and checks that every owner and attached
// namespace carries the gateway label with our annotation, that a namespace
// whose label the tenant chart wrote (no annotation) is left exactly as it
// was, and that every TenantGateway reports NamespacesAttached; then that two
// resync periods of the settled system cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n, attached = 20, 3
	ctx := context.Background()
	own, err := testenv.CRDFromFile("api/crds/gateway.cozystack.io_tenantgateways.yaml")
	check(t, err)
	h := testenv.NewHarness(t, []*apiextensionsv1.CustomResourceDefinition{own}, gatewayv1alpha1.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig

	// The tenant chart labelled this namespace for tenant-00; it is also
	// listed by tenant-01, whose entry must not take it over.
	chart := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "chart-labelled",
		Labels: map[string]string{gatewayv1alpha1.LabelNamespaceGateway: "tenant-00"}}}
	check(t, c.Create(ctx, chart))
	check(t, c.Get(ctx, client.ObjectKeyFromObject(chart), chart))

	want := map[string]string{} // namespace -> owner namespace
	for i := range n {
		owner := fmt.Sprintf("tenant-%02d", i)
		check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: owner}}))
		want[owner] = owner
		var list []string
		for j := range attached {
			ns := fmt.Sprintf("%s-app-%d", owner, j)
			check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
			want[ns] = owner
			list = append(list, ns)
		}
		if i == 1 {
			list = append(list, chart.Name)
		}
		check(t, c.Create(ctx, &gatewayv1alpha1.TenantGateway{
			ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: owner},
			Spec:       gatewayv1alpha1.TenantGatewaySpec{Apex: owner + ".example.org", AttachedNamespaces: list},
		}))
	}
	labelled := func() int {
		list := &corev1.NamespaceList{}
		check(t, c.List(ctx, list))
		k := 0
		for _, ns := range list.Items {
			if ns.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != "" {
				k++
			}
		}
		return k
	}

	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=5", "--kube-api-burst=5", "--workers=1"}, labelled, 5, len(want), "namespaces labelled")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	testenv.Eventually(t, 120*time.Second, func() (bool, string, error) {
		list := &gatewayv1alpha1.TenantGatewayList{}
		if err := c.List(ctx, list); err != nil {
			return false, "", err
		}
		reported := 0
		for _, tgw := range list.Items {
			cond := meta.FindStatusCondition(tgw.Status.Conditions, gatewayv1alpha1.ConditionNamespacesAttached)
			if cond != nil && cond.ObservedGeneration == tgw.Generation {
				reported++
			}
		}
		k := labelled()
		return reported == n && k == len(want),
			fmt.Sprintf("%d of %d TenantGateways report NamespacesAttached; %d of %d namespaces labelled", reported, n, k, len(want)), nil
	})
	list := &corev1.NamespaceList{}
	check(t, c.List(ctx, list))
	for _, ns := range list.Items {
		owner, ours := want[ns.Name]
		switch {
		case ns.Name == chart.Name:
			if ns.ResourceVersion != chart.ResourceVersion {
				t.Fatalf("the chart-labelled namespace was written: labels %v, annotations %v", ns.Labels, ns.Annotations)
			}
		case ours:
			if ns.Labels[gatewayv1alpha1.LabelNamespaceGateway] != owner || ns.Annotations[gatewayv1alpha1.AnnotationAttachedBy] != owner {
				t.Fatalf("namespace %s: labels %v, annotations %v; want both naming %s", ns.Name, ns.Labels, ns.Annotations, owner)
			}
		default:
			if _, ok := ns.Labels[gatewayv1alpha1.LabelNamespaceGateway]; ok {
				t.Fatalf("namespace %s is not attached but labelled %v", ns.Name, ns.Labels)
			}
		}
	}
	tgw := &gatewayv1alpha1.TenantGateway{}
	check(t, c.Get(ctx, client.ObjectKey{Namespace: "tenant-01", Name: "cozystack"}, tgw))
	if cond := meta.FindStatusCondition(tgw.Status.Conditions, gatewayv1alpha1.ConditionNamespacesAttached); cond.Status != metav1.ConditionFalse {
		t.Fatalf("tenant-01 lists a namespace another gateway's label claims, yet NamespacesAttached is %s: %s", cond.Status, cond.Message)
	}

	second.AssertIdle(t, 25*time.Second)
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
