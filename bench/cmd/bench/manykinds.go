package main

// Phase manykinds: K definitions served at once (appdef's time to serve them
// all), then N instances spread evenly over the K kinds, measure.Runs times,
// each run from the first instance created until every one has a status,
// against as many HelmReleases created raw in the same run: efficiency
// 3*T_raw/T, as the create pipeline's, goal >= 0.8 (one kind's goal).

import (
	"context"
	"fmt"
	goruntime "runtime"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// kindGVK is the k-th kind of the manykinds shape.
func kindGVK(k int) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: benchGVK.Group, Version: benchGVK.Version, Kind: fmt.Sprintf("BenchK%02d", k)}
}

// kindDefinition serves kindGVK(k) with the bench's chart.
func kindDefinition(k int) *cozyv1alpha1.ApplicationDefinition {
	return &cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-k%02d", k)},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: kindGVK(k).Kind,
				Plural: fmt.Sprintf("benchk%02ds", k), Singular: fmt.Sprintf("benchk%02d", k),
				OpenAPISchema: `{"type":"object","properties":{"replicas":{"type":"integer","default":1}}}`},
			Release: &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
				Prefix: fmt.Sprintf("k%02d-", k), ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "bench", Namespace: "cozy-system"}}},
		},
	}
}

// kindInstance is instance i of kind k in ns.
func kindInstance(k, i int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(kindGVK(k))
	u.SetNamespace(ns)
	u.SetName(fmt.Sprintf("app-%05d", i))
	return u
}

func manyKinds(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	k := *kinds
	if k < 1 || *n < k {
		measure.Check(fmt.Errorf("manykinds needs 1 <= --kinds (%d) <= --n (%d)", k, *n))
	}
	per := *n / k
	total := per * k
	rawNamespace(ctx, c)
	namespaces(ctx, c, ns)
	fmt.Printf("== %s: %d definitions x %d instances, %d runs against as many raw HelmReleases; %d unthrottled client workers\n",
		label, k, per, measure.Runs, *workers)
	measure.Quiet("serving the definitions")
	start := time.Now()
	measure.Parallel(k, *workers, func(j int) { measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, kindDefinition(j)))) })
	measure.WaitFor(fmt.Sprintf("%d definitions Ready", k), 10*time.Minute, func() bool {
		l := &cozyv1alpha1.ApplicationDefinitionList{}
		if c.List(ctx, l) != nil {
			return false
		}
		ready := 0
		for i := range l.Items {
			if meta.IsStatusConditionTrue(l.Items[i].Status.Conditions, "Ready") {
				ready++
			}
		}
		return ready >= k
	})
	served := time.Since(start)
	fmt.Printf("  %d definitions Ready in %.1fs\n", k, served.Seconds())
	// The first create of a kind just served waits; no run should count it.
	measure.Parallel(k, *workers, func(j int) {
		measure.WaitFor("a dry-run create of "+kindGVK(j).Kind, 2*time.Minute, func() bool {
			return c.Create(ctx, kindInstance(j, 0), client.DryRunAll) == nil
		})
	})
	warmUp(ctx, c, map[string]client.Object{"HelmRelease": rawRelease(0)})
	var cpuRaw, cpuPipe measure.Tally
	raws, pipes := measure.InTurns("many kinds", nil, func(r int) time.Duration {
		d := timed(fmt.Sprintf("raw creates, run %d", r+1), "HelmReleases", total, &cpuRaw, func(i int) {
			measure.Check(c.Create(ctx, rawRelease(r*total+i)))
		})
		return d
	}, func(r int) time.Duration {
		what := fmt.Sprintf("pipeline, run %d", r+1)
		ws := make([]*watcher, k)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for j := range k {
			inst := &metav1.PartialObjectMetadata{}
			inst.SetGroupVersionKind(kindGVK(j))
			ws[j] = newWatcher(wctx, scheme, inst, ns, statusWritten)
		}
		measure.Quiet(what)
		cpu0 := cpuTimes()
		t0 := time.Now()
		// Instance i of the run is of kind i mod k: every kind is busy at once.
		measure.Parallel(total, *workers, func(i int) { measure.Check(c.Create(ctx, kindInstance(i%k, r*per+i/k))) })
		for j := range k {
			ws[j].wait(int64(per*(r+1)), 60*time.Minute)
		}
		d := time.Since(t0)
		cpuPipe.Add(cpu0, cpuTimes(), d)
		return d
	})
	cores := goruntime.NumCPU()
	rows := [][]string{
		measure.Figure(label, fmt.Sprintf("many kinds: %d definitions served", k), served.Seconds(), "s", 60, false),
		measure.Report(label, "many kinds: raw creates, each run", measure.Durations(raws)),
		measure.Report(label, "many kinds: instances to the last status, each run", measure.Durations(pipes)),
		measure.MedianFigure(label, "many kinds efficiency 3*T_raw/T", measure.RunEfficiencies(3, raws, pipes), "", 0.8, true),
		measure.Report(label, "many kinds: CPU seconds during the raw creates", cpuRaw.Format(cores)),
		measure.Report(label, "many kinds: CPU seconds during the pipeline", cpuPipe.Format(cores)),
	}
	rows = append(rows, rss(label, true)...)
	finish(rows)
}
