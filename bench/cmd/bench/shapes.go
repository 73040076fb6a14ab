package main

// The shapes of work beside the create pipeline (--phase=fanout, delete):
// each measured measure.Runs times against the same requests sent raw in the
// same run, its verdict the median of the runs' own efficiencies with their
// range beside. No work left behind is added to either side. The process
// exits non-zero when a figure misses its goal.
//
//   - fanout: a definition change (its chart and its labels) at N settled
//     instances, from the change until every HelmRelease carries it (seen
//     through one metadata-only watch of the HelmReleases), against N raw
//     merge patches of the same fields of as many HelmReleases; one write a
//     HelmRelease: efficiency T_raw/T, goal >= 0.8. Then a change of the
//     definition that changes no HelmRelease (an annotation the backend does
//     not read): every instance is reconciled again, and the helm
//     controller's writes meanwhile are judged against 0.
//   - delete: N settled instances deleted by the tenants' workers, until
//     every HelmRelease is gone (the same watch's delete events), against N
//     raw deletes of as many HelmReleases; two deletes an instance (the
//     tenant's and the HelmRelease's): efficiency 2*T_raw/T, goal >= 0.8;
//     LISTs of HelmReleases and instances per deleted instance, from the API
//     server's counters over the pipeline's part, goal 0.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// revLabel is the label a fan-out's definition change puts on every
// HelmRelease (through the definition's release labels), and the raw side on
// its HelmReleases: the bench sees each change arrive in metadata alone.
const revLabel = "bench.cozystack.io/rev"

var releaseGVK = helmv2.GroupVersion.WithKind("HelmRelease")

// countWatch counts, from one metadata-only watch of HelmReleases in a
// namespace, those that match (added or updated to match) or, with deletes,
// those deleted: it decodes metadata only, and the bench waits on its events
// rather than polling with lists.
type countWatch struct {
	measure.Seen
	cancel context.CancelFunc
}

// watchReleases starts a countWatch of the HelmReleases of namespace: match
// nil counts deletes, otherwise the objects match accepts. It returns once
// the watch's first list is in.
func watchReleases(ctx context.Context, scheme *runtime.Scheme, namespace string, match func(client.Object) bool) *countWatch {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	cfg.QPS, cfg.Burst = -1, 0
	ctx, cancel := context.WithCancel(ctx)
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	measure.Check(err)
	w := &countWatch{cancel: cancel}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(releaseGVK)
	inf, err := ca.GetInformer(ctx, obj)
	measure.Check(err)
	h := toolscache.ResourceEventHandlerFuncs{}
	if match == nil {
		h.DeleteFunc = func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if m, ok := o.(client.Object); ok {
				w.Mark(m.GetName())
			}
		}
	} else {
		on := func(o any) {
			if m := o.(client.Object); match(m) {
				w.Mark(m.GetName())
			}
		}
		h.AddFunc = on
		h.UpdateFunc = func(_, o any) { on(o) }
	}
	_, err = inf.AddEventHandler(h)
	measure.Check(err)
	go func() { _ = ca.Start(ctx) }()
	ca.WaitForCacheSync(ctx)
	return w
}

// wait returns at the event that makes n (the time is counted to the event,
// not to a poll after it), and stops the watch.
func (w *countWatch) wait(what string, n int, timeout time.Duration) {
	defer w.cancel()
	if !w.Wait(n, timeout) {
		fmt.Fprintf(os.Stderr, "timed out waiting for %s: %d of %d\n", what, w.Len(), n)
		os.Exit(1)
	}
}

// settleInstances creates instances lo to hi-1 in ns (untimed) and waits
// until each has a status, then until the machine is quiet.
func settleInstances(ctx context.Context, c client.Client, scheme *runtime.Scheme, lo, hi int) {
	inst := &metav1.PartialObjectMetadata{}
	inst.SetGroupVersionKind(benchGVK)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // the watch ends with the settling: it would take CPU from the parts timed next
	w := newWatcher(wctx, scheme, inst, ns, statusWritten)
	var none measure.Tally
	w.createAndWait("settling instances", "statuses", lo, hi, &none, func(i int) { measure.Check(c.Create(ctx, instance(i, ns))) })
	if got := countReleases(ctx, c, ns); got != hi {
		measure.Check(fmt.Errorf("every instance has a status but %s holds %d HelmReleases, not %d: see the instances' conditions", ns, got, hi))
	}
}

// createRaw creates the raw side's N HelmReleases (untimed).
func createRaw(ctx context.Context, c client.Client) {
	measure.Parallel(*n, *workers, func(i int) { measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, rawRelease(i)))) })
}

// shapeRuns runs raw and pipe measure.Runs times in turns (raw first in even
// runs), each once the machine is quiet, and returns their own times.
func shapeRuns(name string, prepare func(k int), raw, pipe func(k int) time.Duration) (raws, pipes []time.Duration) {
	for k := range measure.Runs {
		if prepare != nil {
			prepare(k)
		}
		var dr, dp time.Duration
		if k%2 == 0 {
			dr, dp = raw(k), pipe(k)
		} else {
			dp, dr = pipe(k), raw(k)
		}
		fmt.Printf("  %s run %d/%d: raw %.1fs, pipeline %.1fs\n", name, k+1, measure.Runs, dr.Seconds(), dp.Seconds())
		raws, pipes = append(raws, dr), append(pipes, dp)
	}
	return raws, pipes
}

// patchDefinition merge-patches the bench's definition.
func patchDefinition(ctx context.Context, c client.Client, patch map[string]any) {
	b, err := json.Marshal(patch)
	measure.Check(err)
	def := &cozyv1alpha1.ApplicationDefinition{}
	def.SetName("bench")
	measure.Check(c.Patch(ctx, def, client.RawPatch(types.MergePatchType, b)))
}

// revision k's chart and label value.
func revision(k int) (chart, rev string) {
	return fmt.Sprintf("bench-v%d", k+1), fmt.Sprintf("v%d", k+1)
}

func fanout(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	ctrls := measure.KV(*metrics)
	fmt.Printf("== %s: fan-out, a definition change at %d settled instances against %d raw updates, %d runs; %d unthrottled client workers\n",
		label, *n, *n, measure.Runs, *workers)
	settleInstances(ctx, c, scheme, 0, *n)
	createRaw(ctx, c)
	var cpuRaw, cpuPipe measure.Tally
	var writesPer []float64
	raws, pipes := shapeRuns("fan-out", nil, func(k int) time.Duration {
		chart, rev := revision(k)
		b, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{revLabel: rev}},
			"spec": map[string]any{"chartRef": map[string]any{"name": chart}}})
		measure.Check(err)
		d, _ := timed(fmt.Sprintf("raw updates, run %d", k+1), "HelmReleases", *n, &cpuRaw, func(i int) {
			hr := &helmv2.HelmRelease{}
			hr.SetNamespace("bench-raw")
			hr.SetName(rawRelease(i).Name)
			measure.Check(c.Patch(ctx, hr, client.RawPatch(types.MergePatchType, b)))
		})
		return d
	}, func(k int) time.Duration {
		chart, rev := revision(k)
		what := fmt.Sprintf("pipeline, run %d", k+1)
		w := watchReleases(ctx, scheme, ns, func(o client.Object) bool { return o.GetLabels()[revLabel] == rev })
		measure.Quiet(what)
		before := writes(ctrls)
		stop := progress(what, func() string { return fmt.Sprintf("%d/%d HelmReleases changed", w.Len(), *n) })
		cpu0 := cpuTimes()
		start := time.Now()
		patchDefinition(ctx, c, map[string]any{"spec": map[string]any{"release": map[string]any{
			"labels": map[string]any{revLabel: rev}, "chartRef": map[string]any{"name": chart}}}})
		w.wait(what, *n, 30*time.Minute)
		d := time.Since(start)
		cpuPipe.Add(cpu0, cpuTimes(), d)
		stop()
		writesPer = append(writesPer, float64(settledWrites(ctrls)-before)/float64(*n))
		return d
	})
	cores := goruntime.NumCPU()
	rows := [][]string{
		measure.Report(label, "fan-out: raw updates, each run", durations(raws)),
		measure.Report(label, "fan-out: definition change to the last HelmRelease, each run", durations(pipes)),
		measure.MedianFigure(label, "fan-out efficiency T_raw/T", measure.RunEfficiencies(1, raws, pipes), "", 0.8, true),
		measure.Report(label, "fan-out: controller writes per instance, each run", floats(writesPer)),
		measure.Report(label, "fan-out: CPU seconds during the raw updates", cpuRaw.Format(cores)),
		measure.Report(label, "fan-out: CPU seconds during the pipeline", cpuPipe.Format(cores)),
	}
	rows = append(rows, idleChange(ctx, c, ctrls, label)...)
	rows = append(rows, rss(label, true)...)
	finish(rows)
}

// idleChange changes the definition in a way no HelmRelease follows (an
// annotation the backend does not read), waits until the helm controller
// has reconciled every instance again with an empty queue, and judges its
// writes meanwhile against 0.
func idleChange(ctx context.Context, c client.Client, ctrls [][2]string, label string) [][]string {
	helm := ""
	for _, kv := range ctrls {
		if kv[0] == "helm" {
			helm = kv[1]
		}
	}
	if helm == "" {
		return [][]string{measure.Report(label, "fan-out: writes after a change that changes nothing", "not measured (no helm metrics)")}
	}
	reconciles := func() float64 {
		s, err := measure.Scrape(helm)
		measure.Check(err)
		return measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})
	}
	before, rec0 := settledWrites([][2]string{{"helm", helm}}), reconciles()
	patchDefinition(ctx, c, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"bench.cozystack.io/noop": time.Now().Format(time.RFC3339Nano)}}})
	measure.WaitFor("every instance reconciled after the no-op change", 30*time.Minute, func() bool {
		s, err := measure.Scrape(helm)
		if err != nil {
			return false
		}
		depth := measure.Sum(s, "workqueue_depth", map[string]string{"name": *controller})
		return measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})-rec0 >= float64(*n) && depth == 0
	})
	w := settledWrites([][2]string{{"helm", helm}}) - before
	return [][]string{
		measure.Report(label, "fan-out: reconciles after a change that changes nothing", fmt.Sprintf("%.0f", reconciles()-rec0)),
		measure.Figure(label, "fan-out: helm writes after a change that changes nothing", float64(w), "", 0, false),
	}
}

func deleteShape(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	fmt.Printf("== %s: delete, %d settled instances deleted against %d raw deletes, %d runs; %d unthrottled client workers\n",
		label, *n, *n, measure.Runs, *workers)
	var cpuRaw, cpuPipe measure.Tally
	var lists []float64
	var api []measure.Sample
	raws, pipes := shapeRuns("delete", func(int) {
		settleInstances(ctx, c, scheme, 0, *n)
		createRaw(ctx, c)
	}, func(k int) time.Duration {
		d, _ := timed(fmt.Sprintf("raw deletes, run %d", k+1), "HelmReleases", *n, &cpuRaw, func(i int) {
			measure.Check(c.Delete(ctx, rawRelease(i)))
		})
		return d
	}, func(k int) time.Duration {
		what := fmt.Sprintf("pipeline, run %d", k+1)
		w := watchReleases(ctx, scheme, ns, nil)
		measure.Quiet(what)
		apiBefore := apiserverMetrics(ctx)
		stop := progress(what, func() string { return fmt.Sprintf("%d/%d HelmReleases gone", w.Len(), *n) })
		cpu0 := cpuTimes()
		start := time.Now()
		measure.Parallel(*n, *workers, func(i int) { measure.Check(c.Delete(ctx, instance(i, ns))) })
		w.wait(what, *n, 30*time.Minute)
		d := time.Since(start)
		cpuPipe.Add(cpu0, cpuTimes(), d)
		stop()
		apiAfter := apiserverMetrics(ctx)
		delta := measure.AddDelta(nil, apiBefore, apiAfter)
		api = measure.AddDelta(api, apiBefore, apiAfter)
		l := 0.0
		for _, res := range []string{"helmreleases", "benches"} {
			l += measure.Sum(delta, "apiserver_request_total", map[string]string{"verb": "LIST", "resource": res})
		}
		lists = append(lists, l/float64(*n))
		if left := countReleases(ctx, c, ns); left != 0 {
			measure.Check(fmt.Errorf("every deletion seen but %s still holds %d HelmReleases", ns, left))
		}
		return d
	})
	cores := goruntime.NumCPU()
	rows := [][]string{
		measure.Report(label, "delete: raw deletes, each run", durations(raws)),
		measure.Report(label, "delete: instances deleted to the last HelmRelease gone, each run", durations(pipes)),
		measure.MedianFigure(label, "delete efficiency 2*T_raw/T", measure.RunEfficiencies(2, raws, pipes), "", 0.8, true),
		measure.MedianFigure(label, "delete: LISTs of HelmReleases and instances per deleted instance", lists, "", 0, false),
		measure.Report(label, "delete: API requests per instance, watches aside", measure.RequestMix(nil, api, measure.Runs*(*n))),
		measure.Report(label, "delete: CPU seconds during the raw deletes", cpuRaw.Format(cores)),
		measure.Report(label, "delete: CPU seconds during the pipeline", cpuPipe.Format(cores)),
	}
	rows = append(rows, rss(label, true)...)
	finish(rows)
}

// finish writes the rows and exits non-zero when a figure missed its goal.
func finish(rows [][]string) {
	measure.AppendRows(*results, rows...)
	if measure.Missed(rows) {
		fmt.Println("  a figure missed its goal")
		os.Exit(2)
	}
}

func durations(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.1fs", d.Seconds())
	}
	return s
}

func floats(xs []float64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.2f", x)
	}
	return s
}
