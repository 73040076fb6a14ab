package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary, kills it
// (SIGKILL) while it is serving 30 new definitions, starts it again and
// checks that every definition ends up Ready with exactly one CRD it
// controls; then that two resync periods of the settled system cause no
// API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n = 30
	ctx := context.Background()
	crd, err := testenv.CRDFromFile("api/crds/cozystack.io_applicationdefinitions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := testenv.NewHarness(t, []*apiextensionsv1.CustomResourceDefinition{crd}, cozyv1alpha1.AddToScheme, apiextensionsv1.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig
	for i := range n {
		def := &cozyv1alpha1.ApplicationDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("restart-%02d", i)},
			Spec: cozyv1alpha1.ApplicationDefinitionSpec{
				Application: cozyv1alpha1.ApplicationDefinitionApplication{
					Kind: fmt.Sprintf("Restart%02d", i), Plural: fmt.Sprintf("restart%02ds", i), Singular: fmt.Sprintf("restart%02d", i),
					OpenAPISchema: `{"type":"object","properties":{"size":{"type":"integer","default":1}}}`,
				},
				Release: &cozyv1alpha1.ApplicationDefinitionRelease{},
			},
		}
		def.Spec.Release.ChartRef = chartRef()
		if err := c.Create(ctx, def); err != nil {
			t.Fatal(err)
		}
	}
	ours := func() []apiextensionsv1.CustomResourceDefinition {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := c.List(ctx, list, client.HasLabels{schema.LabelDefinition}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}

	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=5", "--kube-api-burst=5", "--workers=1"}, func() int { return len(ours()) }, 3, n, "CRDs written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	testenv.Eventually(t, 120*time.Second, func() (bool, string, error) {
		list := &cozyv1alpha1.ApplicationDefinitionList{}
		if err := c.List(ctx, list); err != nil {
			return false, "", err
		}
		ready := 0
		for i := range list.Items {
			if meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, cozyv1alpha1.ConditionReady) {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d of %d definitions Ready after the restart", ready, n), nil
	})
	crds := ours()
	if len(crds) != n {
		t.Fatalf("%d CRDs, want %d", len(crds), n)
	}
	for _, crd := range crds {
		ref := metav1.GetControllerOf(&crd)
		if ref == nil || ref.Kind != "ApplicationDefinition" || ref.Name != crd.Labels[schema.LabelDefinition] {
			t.Fatalf("CRD %s: controller %+v", crd.Name, ref)
		}
	}

	second.AssertIdle(t, 25*time.Second)
}

func chartRef() *helmv2.CrossNamespaceSourceReference {
	return &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "restart", Namespace: "cozy-system"}
}
