package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary against a real
// API server, kills it (SIGKILL) while it is materialising 200 instances,
// starts it again and checks that every instance ends up with exactly one
// HelmRelease it controls. It then lets the system settle and checks that
// two resync periods cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n = 200
	ctx := context.Background()

	env := startEnv(t)
	defer func() { _ = env.Stop() }()

	bin := testenv.BuildController(t, ".")
	kubeconfig := env.WriteKubeconfig(t)

	c := newClient(t, env)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-r"}}); err != nil {
		t.Fatal(err)
	}
	def := &cozyv1alpha1.ApplicationDefinition{}
	if err := yaml.Unmarshal([]byte(`
metadata: {name: restart}
spec:
  application: {kind: Restart, plural: restarts, singular: restart, openAPISchema: '{"type":"object"}'}
  release:
    prefix: r-
    chartRef: {kind: HelmChart, name: restart, namespace: cozy-system}
`), def); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	def.Status.CRDName = "restarts.apps.cozystack.io"
	if err := c.Status().Update(ctx, def); err != nil {
		t.Fatal(err)
	}
	gvk := appsv1alpha1.GroupVersion.WithKind("Restart")
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"i": int64(i)}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("tenant-r")
		u.SetName(fmt.Sprintf("app-%03d", i))
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	count := func() int {
		list := &helmv2.HelmReleaseList{}
		if err := c.List(ctx, list, client.InNamespace("tenant-r")); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}

	// First run, throttled so the kill lands mid-way.
	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=20", "--kube-api-burst=20", "--workers=2"}, count, 20, n, "HelmReleases written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")
	testenv.Eventually(t, 90*time.Second, func() (bool, string, error) {
		k := count()
		return k >= n, fmt.Sprintf("%d of %d HelmReleases after the restart", k, n), nil
	})

	list := &helmv2.HelmReleaseList{}
	if err := c.List(ctx, list, client.InNamespace("tenant-r")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("%d HelmReleases after restart, want %d", len(list.Items), n)
	}
	seen := map[string]bool{}
	for _, hr := range list.Items {
		ref := metav1.GetControllerOf(&hr)
		name := strings.TrimPrefix(hr.Name, "r-")
		if ref == nil || ref.Kind != "Restart" || ref.Name != name || seen[name] {
			t.Fatalf("HelmRelease %s: controller %+v (duplicate: %v)", hr.Name, ref, seen[name])
		}
		seen[name] = true
	}

	// Settled: once the last statuses are written, no write over two resync
	// periods.
	second.AssertIdle(t, 25*time.Second)
}

func startEnv(t *testing.T) *testenv.Env {
	t.Helper()
	return startEnvKinds(t, apiextensionsv1.CustomResourceDefinitionNames{Kind: "Restart", Plural: "restarts", ListKind: "RestartList", Singular: "restart"})
}

// startEnvKinds starts an API server serving definitions, HelmReleases and
// the user-facing kinds named (schemaless).
func startEnvKinds(t *testing.T, kinds ...apiextensionsv1.CustomResourceDefinitionNames) *testenv.Env {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{"api/crds/cozystack.io_applicationdefinitions.yaml", ".cache/crds/helm.toolkit.fluxcd.io_helmreleases.yaml"} {
		crd, err := testenv.CRDFromFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	for _, names := range kinds {
		crds = append(crds, testenv.NamespacedCRD("apps.cozystack.io", "v1alpha1", names, nil, true))
	}
	env, err := testenv.Start(crds...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// newClient returns a client of env's API server that knows the built-in
// kinds, ApplicationDefinitions and HelmReleases.
func newClient(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = cozyv1alpha1.AddToScheme(scheme)
	_ = helmv2.AddToScheme(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
