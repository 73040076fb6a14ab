// Command bench measures the Helm backend against the performance budget of
// the design, on a running control plane with the appdef and helm
// controllers (hack/bench.sh sets that up), and prints each figure:
//
//   - materialisation: N instances -> N HelmReleases, controller throughput
//     divided by the throughput of creating the same HelmReleases directly
//     with the same client limits (target >= 0.8);
//   - definition fan-out: a definition change -> N HelmReleases updated,
//     divided by the throughput of patching them directly (target >= 0.8);
//   - idle: API writes by the controller over two resync periods once
//     settled (target 0);
//   - memory: the controller's peak resident set (VmHWM) at N instances.
//
// Ratios are measured in the same run, so a busy machine slows both sides.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

var (
	kubeconfig = flag.String("kubeconfig", "", "kubeconfig of the control plane")
	n          = flag.Int("n", 2000, "instances")
	qps        = flag.Float64("qps", 50, "client QPS of the baseline (use the controller's --kube-api-qps)")
	burst      = flag.Int("burst", 100, "client burst of the baseline (use the controller's --kube-api-burst)")
	workers    = flag.Int("workers", 4, "concurrent requests of the baseline (use the controller's --workers)")
	metricsURL = flag.String("metrics", "", "the helm controller's metrics URL")
	pid        = flag.Int("pid", 0, "the helm controller's pid (for its peak RSS)")
	resync     = flag.Duration("resync", 30*time.Second, "the controller's --resync-period")
)

func main() {
	flag.Parse()
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	scheme := runtime.NewScheme()
	measure.Check(clientgoscheme.AddToScheme(scheme))
	measure.Check(cozyv1alpha1.AddToScheme(scheme))
	measure.Check(helmv2.AddToScheme(scheme))
	fast := *cfg
	fast.QPS, fast.Burst = 5000, 5000
	admin, err := client.New(&fast, client.Options{Scheme: scheme}) // sets up and observes, unthrottled
	measure.Check(err)
	limited := *cfg
	limited.QPS, limited.Burst = float32(*qps), *burst
	baseline, err := client.New(&limited, client.Options{Scheme: scheme}) // the raw API server side
	measure.Check(err)

	for _, ns := range []string{"bench-raw", "bench-ctrl"} {
		_ = admin.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}})
	}
	def := &cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: "Bench", Plural: "benches", Singular: "bench",
				OpenAPISchema: `{"type":"object","properties":{"replicas":{"type":"integer","default":1}}}`},
			Release: &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
				Prefix: "b-", ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "bench", Namespace: "cozy-system"}}},
		},
	}
	measure.Check(admin.Create(ctx, def))
	measure.WaitFor("definition Ready", 2*time.Minute, func() bool {
		d := &cozyv1alpha1.ApplicationDefinition{}
		return admin.Get(ctx, types.NamespacedName{Name: "bench"}, d) == nil && meta.IsStatusConditionTrue(d.Status.Conditions, "Ready")
	})
	fmt.Printf("instances: %d, baseline client: qps %.0f burst %d, %d workers; etcd on tmpfs\n", *n, *qps, *burst, *workers)

	// Baseline: create the HelmReleases directly.
	start := time.Now()
	measure.Parallel(*n, *workers, func(i int) {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b-app-%05d", i), Namespace: "bench-raw"},
			Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: 5 * time.Minute},
				ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "bench", Namespace: "cozy-system"}}}
		measure.Check(baseline.Create(ctx, hr))
	})
	raw := time.Since(start)

	// Controller: create instances quickly, time until every HelmRelease exists.
	start = time.Now()
	measure.Parallel(*n, 32, func(i int) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Bench",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": "bench-ctrl"}, "spec": map[string]any{}}}
		measure.Check(admin.Create(ctx, u))
	})
	measure.WaitFor("HelmReleases", 30*time.Minute, func() bool { return count(ctx, admin, "bench-ctrl") >= *n })
	ctrl := time.Since(start)
	report("materialisation", raw, ctrl, 0.8)

	// Fan-out: baseline patches every HelmRelease; the controller follows a
	// definition change.
	start = time.Now()
	measure.Parallel(*n, *workers, func(i int) {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b-app-%05d", i), Namespace: "bench-raw"}}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"chartRef":{"name":"bench-v2"}}}`))
		measure.Check(baseline.Patch(ctx, hr, patch))
	})
	raw = time.Since(start)
	start = time.Now()
	measure.Check(admin.Patch(ctx, def, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"release":{"chartRef":{"name":"bench-v2"}}}}`))))
	measure.WaitFor("updated HelmReleases", 30*time.Minute, func() bool { return updated(ctx, admin, "bench-ctrl", "bench-v2") >= *n })
	ctrl = time.Since(start)
	report("definition fan-out", raw, ctrl, 0.8)

	if *metricsURL != "" {
		before := measure.Settled(*metricsURL)
		time.Sleep(2**resync + 5*time.Second)
		after := measure.Writes(*metricsURL)
		fmt.Printf("idle: %d API writes over two resync periods (%s each), target 0\n", after-before, *resync)
	}
	if *pid > 0 {
		fmt.Printf("memory: peak RSS of the helm controller at %d instances: %s, target <= 150 MiB\n", *n, measure.PeakRSS(*pid))
	}
}

func report(what string, raw, ctrl time.Duration, target float64) {
	ratio := raw.Seconds() / ctrl.Seconds()
	verdict := "meets"
	if ratio < target {
		verdict = "misses"
	}
	fmt.Printf("%s: direct %.1fs (%.0f/s), controller %.1fs (%.0f/s), ratio %.2f (%s the target %.1f)\n",
		what, raw.Seconds(), float64(*n)/raw.Seconds(), ctrl.Seconds(), float64(*n)/ctrl.Seconds(), ratio, verdict, target)
}

func count(ctx context.Context, c client.Client, ns string) int {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(helmv2.GroupVersion.WithKind("HelmReleaseList"))
	measure.Check(c.List(ctx, list, client.InNamespace(ns)))
	return len(list.Items)
}

func updated(ctx context.Context, c client.Client, ns, chart string) int {
	list := &helmv2.HelmReleaseList{}
	measure.Check(c.List(ctx, list, client.InNamespace(ns)))
	k := 0
	for _, hr := range list.Items {
		if hr.Spec.ChartRef != nil && hr.Spec.ChartRef.Name == chart {
			k++
		}
	}
	return k
}
