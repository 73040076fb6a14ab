package main

import (
	"context"
	"fmt"
	goruntime "runtime"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// The peer: kro serves KroBench from the ResourceGraphDefinition kroRGD, and
// its instances live in kroNS.
var kroGVK = schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "KroBench"}

const (
	kroNS  = "bench-kro"
	kroRGD = "krobench"
)

// kroDefinition is the ResourceGraphDefinition of KroBench: the bench
// definition's schema (replicas, an integer with the default 1) and, for each
// instance, the HelmRelease the helm controller makes of a bench instance
// (release: name, chart, strategies, release records, annotations, labels of
// the same size), with the instance's spec as its values. kro reports on the
// instance in its status (state ACTIVE once the HelmRelease is applied).
func kroDefinition() *unstructured.Unstructured {
	const name = "${schema.metadata.name}"
	hr := release(name, "", map[string]string{"bench.cozystack.io/application.kind": kroGVK.Kind,
		"bench.cozystack.io/application.group": kroGVK.Group, "bench.cozystack.io/application.name": name})
	hr.SetGroupVersionKind(helmv2.GroupVersion.WithKind("HelmRelease"))
	hr.Spec.StorageNamespace = storageNamespace(kroNS)
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hr)
	measure.Check(err)
	delete(t, "status")
	delete(t["metadata"].(map[string]any), "creationTimestamp")
	t["spec"].(map[string]any)["values"] = map[string]any{"replicas": "${schema.spec.replicas}"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "ResourceGraphDefinition",
		"metadata": map[string]any{"name": kroRGD},
		"spec": map[string]any{
			"schema": map[string]any{"apiVersion": kroGVK.Version, "kind": kroGVK.Kind,
				"spec": map[string]any{"replicas": "integer | default=1"}},
			"resources": []any{map[string]any{"id": "release", "template": t}},
		},
	}}
}

// kroInstance is the i-th KroBench a tenant creates.
func kroInstance(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kroGVK.GroupVersion().String(), "kind": kroGVK.Kind,
		"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": kroNS}, "spec": map[string]any{}}}
}

// kroActive reports whether kro has reported an instance ACTIVE: its
// HelmRelease applied, and its status written.
func kroActive(o client.Object) bool {
	state, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "status", "state")
	return state == "ACTIVE"
}

// peerKro measures kro, running on the control plane, on the pipeline's
// measure: T_raw of N HelmReleases created directly (one pass, once the
// machine is quiet) and T, from the first of N KroBench instances created by
// the bench's workers until every one is ACTIVE, both with the work each left
// behind; then 3*T_raw/T, the API requests per instance, the CPU time of every
// process, and kro's peak RSS. The figures are reported, not judged: the
// targets are this project's. kro's efficiency is far from the pipeline's, so
// one raw pass (not rounds in turns) measures it well enough.
func peerKro(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	rawNamespace(ctx, c)
	namespaces(ctx, c, kroNS)
	measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, kroDefinition())))
	measure.WaitFor("ResourceGraphDefinition "+kroRGD+" Active", 2*time.Minute, func() bool {
		d := &unstructured.Unstructured{}
		d.SetAPIVersion("kro.run/v1alpha1")
		d.SetKind("ResourceGraphDefinition")
		if c.Get(ctx, types.NamespacedName{Name: kroRGD}, d) != nil {
			return false
		}
		state, _, _ := unstructured.NestedString(d.Object, "status", "state")
		return state == "Active"
	})
	warmUp(ctx, c, map[string]client.Object{kroGVK.Kind: kroInstance(0), "HelmRelease": rawRelease(0)})
	fmt.Printf("== %s: %d HelmReleases created directly, then %d KroBench instances -> HelmReleases and ACTIVE; %d unthrottled client workers\n",
		label, *n, *n, *workers)

	cores := goruntime.NumCPU()
	var rawCPU, kroCPU measure.Tally
	rawT := timed("raw creates", "HelmReleases", *n, &rawCPU, func(i int) { measure.Check(c.Create(ctx, rawRelease(i))) })

	watched := &unstructured.Unstructured{}
	watched.SetGroupVersionKind(kroGVK)
	w := newWatcher(ctx, scheme, watched, kroNS, kroActive)
	measure.Quiet("kro")
	apiBefore := apiserverMetrics(ctx)
	t := w.createAndWait("kro", "ACTIVE", 0, *n, &kroCPU, func(i int) { measure.Check(c.Create(ctx, kroInstance(i))) })
	api := measure.AddDelta(nil, apiBefore, apiserverMetrics(ctx))

	if releases := countObjects(ctx, c, releaseGVK, kroNS); releases != *n {
		measure.Check(fmt.Errorf("every KroBench is ACTIVE but %s holds %d HelmReleases, not %d", kroNS, releases, *n))
	}
	fmt.Printf("  kro: %d HelmReleases created directly in %.1fs; %d instances -> HelmReleases and ACTIVE in %.1fs (%.1f/s)\n",
		*n, rawT.Seconds(), *n, t.Seconds(), float64(*n)/t.Seconds())
	rows := [][]string{
		measure.Report(label, "raw creates T_raw", fmt.Sprintf("%.1fs", rawT.Seconds())),
		measure.Report(label, "kro T", fmt.Sprintf("%.1fs", t.Seconds())),
		measure.Report(label, "write efficiency 3*T_raw/T", fmt.Sprintf("%.3f", measure.Efficiency(3, rawT, t))),
		measure.Report(label, "API requests per instance, watches aside", measure.RequestMix(nil, api, *n)),
		measure.Report(label, "CPU seconds during the raw creates", rawCPU.Format(cores)),
		measure.Report(label, "CPU seconds during kro's work", kroCPU.Format(cores)),
	}
	rows = append(rows, rss(label, false)...)
	measure.AppendRows(*results, rows...)
}
