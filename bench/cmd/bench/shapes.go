package main

// The shapes of work beside the create pipeline (--phase=create, fanout,
// delete), on the backend of --backend (backends.go: the backing objects are
// HelmReleases in the instance's namespace, or Terraform objects in the
// platform namespace cozy-tf-<namespace>): each measured measure.Runs times
// against the same requests sent raw in the same run, its verdict the median
// of the runs' own efficiencies with their range beside. No work left behind
// is added to either side. The process exits non-zero when a figure misses
// its goal.
//
//   - create: N instances created by the tenants' workers until each has a
//     status (its backing object written first), against N raw creates of
//     as many backing objects; three writes an instance (the tenant's
//     create, the backing object, one status write): efficiency 3*T_raw/T,
//     goal >= 0.8. Each run creates new instances: the store grows by N of
//     each a run, on both sides.
//   - fanout: a definition change (a field of the backing object's spec and
//     its labels) at N settled instances, from the change until every
//     backing object carries it (seen through one metadata-only watch of the
//     backing objects), against N raw merge patches of the same fields of as
//     many backing objects; one write a backing object: efficiency T_raw/T,
//     goal >= 0.8. Then a change of the definition that changes no backing
//     object (an annotation the backend does not read): every instance is
//     reconciled again, and the backend controller's writes meanwhile are
//     judged against 0.
//   - delete: N settled instances deleted by the tenants' workers, until
//     every backing object and every instance is gone (the delete events of
//     two such watches: the Terraform backend's finalizer holds an instance
//     until its Terraform object is gone), against N raw deletes of as many
//     backing objects; two deletes an instance (the tenant's and the backing
//     object's): efficiency 2*T_raw/T, goal >= 0.8; LISTs of backing objects
//     and instances per deleted instance, from the API server's counters over
//     the pipeline's part, goal 0.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// revLabel is the label a fan-out's definition change sets on every backing
// object (through the definition's labels), and the raw side on its objects:
// the bench sees each change arrive in metadata alone. Both sides' objects
// carry it from their creation (firstRev), so a change sets other values of
// the fields the objects already have, as a chart version bump does.
const revLabel = "bench.cozystack.io/rev"

// firstRev is revLabel's value when the objects are created.
const firstRev = "v0"

var releaseGVK = helmv2.GroupVersion.WithKind("HelmRelease")

// countWatch counts, from one metadata-only watch of a kind in a namespace,
// the objects that match (added or updated to match) or, with deletes,
// those deleted: it decodes metadata only, and the bench waits on its events
// rather than polling with lists.
type countWatch struct {
	measure.Seen
	cancel context.CancelFunc
}

// watchObjects starts a countWatch of the objects of kind in namespace: match
// nil counts deletes, otherwise the objects match accepts. It returns once
// the watch's first list is in.
func watchObjects(ctx context.Context, scheme *runtime.Scheme, kind schema.GroupVersionKind, namespace string, match func(client.Object) bool) *countWatch {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	cfg.QPS, cfg.Burst = -1, 0
	ctx, cancel := context.WithCancel(ctx)
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	measure.Check(err)
	w := &countWatch{cancel: cancel}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(kind)
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

// settleInstances creates instances lo to hi-1 in namespace (untimed) and
// waits until each has a status, then until the machine is quiet.
func settleInstances(ctx context.Context, c client.Client, scheme *runtime.Scheme, namespace string, lo, hi int) {
	inst := &metav1.PartialObjectMetadata{}
	inst.SetGroupVersionKind(benchGVK)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // the watch ends with the settling: it would take CPU from the parts timed next
	w := newWatcher(wctx, scheme, inst, namespace, statusWritten)
	var none measure.Tally
	w.createAndWait("settling instances", "statuses", lo, hi, &none, func(i int) { measure.Check(c.Create(ctx, instance(i, namespace))) })
	checkBacked(ctx, c, namespace, hi)
}

// checkBacked fails unless the backing objects' namespace of the instances
// of namespace holds want of them once every instance has a status.
func checkBacked(ctx context.Context, c client.Client, namespace string, want int) {
	if got := countObjects(ctx, c, be.object, be.namespace(namespace)); got != want {
		measure.Check(fmt.Errorf("every instance has a status but %s holds %d %s, not %d: see the instances' conditions",
			be.namespace(namespace), got, be.items, want))
	}
}

// createRaw creates the raw side's N backing objects (untimed).
func createRaw(ctx context.Context, c client.Client) {
	measure.Parallel(*n, *workers, func(i int) { measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, be.raw(i)))) })
}

// patchDefinition merge-patches the bench's definition.
func patchDefinition(ctx context.Context, c client.Client, patch map[string]any) {
	b, err := json.Marshal(patch)
	measure.Check(err)
	def := &cozyv1alpha1.ApplicationDefinition{}
	def.SetName("bench")
	measure.Check(c.Patch(ctx, def, client.RawPatch(types.MergePatchType, b)))
}

// createShape measures N instances created until each has a status against
// N raw creates of the backing object, measure.Runs times; run r creates
// instances and raw objects r*N to (r+1)*N-1.
func createShape(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	ctrls := measure.KV(*metrics)
	fmt.Printf("== %s: create, %d instances to their %s and a status against %d raw creates, %d runs; %d unthrottled client workers\n",
		label, *n, be.items, *n, measure.Runs, *workers)
	var cpuRaw, cpuPipe measure.Tally
	var writesPer []float64
	heap0 := liveHeap(ctrls, *backendArg)
	raws, pipes := measure.InTurns("create", nil, func(r int) time.Duration {
		d := timed(fmt.Sprintf("raw creates, run %d", r+1), be.items, *n, &cpuRaw, func(i int) {
			measure.Check(c.Create(ctx, be.raw(r**n+i)))
		})
		return d
	}, func(r int) time.Duration {
		what := fmt.Sprintf("pipeline, run %d", r+1)
		inst := &metav1.PartialObjectMetadata{}
		inst.SetGroupVersionKind(benchGVK)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w := newWatcher(wctx, scheme, inst, ns, statusWritten)
		measure.Quiet(what)
		before := writes(ctrls)
		d := w.createAndWait(what, "statuses", r**n, (r+1)**n, &cpuPipe, func(i int) { measure.Check(c.Create(ctx, instance(i, ns))) })
		writesPer = append(writesPer, float64(settledWrites(ctrls)-before)/float64(*n))
		return d
	})
	checkBacked(ctx, c, ns, measure.Runs**n)
	// The raw objects carry labels no controller selects, so the heap beyond
	// the base is the runs' instances and their backing objects.
	heapN := liveHeap(ctrls, *backendArg)
	rows := runRows(label, "create", "raw creates", "instances to the last status", 3, raws, pipes, &cpuRaw, &cpuPipe)
	rows = append(rows, measure.Report(label, "create: controller writes per instance, events included, each run", measure.Floats(writesPer)))
	rows = append(rows, heapRows(label, "create: "+*backendArg, heap0, heapN, measure.Runs**n)...)
	rows = append(rows, rss(label, true)...)
	finish(rows)
}

// runRows are the rows of a shape's runs: each run's own time on both sides
// (raw and pipe name them), the median of the runs' efficiencies k*T_raw/T
// against 0.8 with their range, and the CPU of every process on both sides.
func runRows(label, shape, raw, pipe string, k int, raws, pipes []time.Duration, cpuRaw, cpuPipe *measure.Tally) [][]string {
	eff := "T_raw/T"
	if k != 1 {
		eff = fmt.Sprintf("%d*T_raw/T", k)
	}
	cores := goruntime.NumCPU()
	return [][]string{
		measure.Report(label, shape+": "+raw+", each run", measure.Durations(raws)),
		measure.Report(label, shape+": "+pipe+", each run", measure.Durations(pipes)),
		measure.MedianFigure(label, shape+" efficiency "+eff, measure.RunEfficiencies(k, raws, pipes), "", 0.8, true),
		measure.Report(label, shape+": CPU seconds during the "+raw, cpuRaw.Format(cores)),
		measure.Report(label, shape+": CPU seconds during the pipeline", cpuPipe.Format(cores)),
	}
}

func fanout(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	ctrls := measure.KV(*metrics)
	fmt.Printf("== %s: fan-out, a definition change at %d settled instances against %d raw updates, %d runs; %d unthrottled client workers\n",
		label, *n, *n, measure.Runs, *workers)
	settleInstances(ctx, c, scheme, ns, 0, *n)
	createRaw(ctx, c)
	var cpuRaw, cpuPipe measure.Tally
	var writesPer []float64
	var api []measure.Sample
	raws, pipes := measure.InTurns("fan-out", nil, func(k int) time.Duration {
		_, raw, _ := be.change(k)
		b, err := json.Marshal(raw)
		measure.Check(err)
		d := timed(fmt.Sprintf("raw updates, run %d", k+1), be.items, *n, &cpuRaw, func(i int) {
			o := be.raw(i)
			measure.Check(c.Patch(ctx, o, client.RawPatch(types.MergePatchType, b)))
		})
		return d
	}, func(k int) time.Duration {
		def, _, rev := be.change(k)
		what := fmt.Sprintf("pipeline, run %d", k+1)
		w := watchObjects(ctx, scheme, be.object, be.namespace(ns), func(o client.Object) bool { return o.GetLabels()[revLabel] == rev })
		measure.Quiet(what)
		apiBefore := apiserverMetrics(ctx)
		before := writes(ctrls)
		stop := progress(what, func() string { return fmt.Sprintf("%d/%d %s changed", w.Len(), *n, be.items) })
		cpu0 := cpuTimes()
		start := time.Now()
		patchDefinition(ctx, c, def)
		w.wait(what, *n, 30*time.Minute)
		d := time.Since(start)
		cpuPipe.Add(cpu0, cpuTimes(), d)
		stop()
		writesPer = append(writesPer, float64(settledWrites(ctrls)-before)/float64(*n))
		api = measure.AddDelta(api, apiBefore, apiserverMetrics(ctx))
		return d
	})
	rows := runRows(label, "fan-out", "raw updates", "definition change to the last backing object", 1, raws, pipes, &cpuRaw, &cpuPipe)
	rows = append(rows, measure.Report(label, "fan-out: controller writes per instance, each run", measure.Floats(writesPer)),
		measure.Report(label, "fan-out: API requests per instance, watches aside", measure.RequestMix(nil, api, measure.Runs*(*n))))
	rows = append(rows, idleChange(ctx, c, ctrls, label)...)
	rows = append(rows, rss(label, true)...)
	finish(rows)
}

// idleChange changes the definition in a way no backing object follows (an
// annotation the backend does not read), waits until the backend controller
// has reconciled every instance again with an empty queue, and judges its
// writes meanwhile against 0.
func idleChange(ctx context.Context, c client.Client, ctrls [][2]string, label string) [][]string {
	url := ""
	for _, kv := range ctrls {
		if kv[0] == be.name {
			url = kv[1]
		}
	}
	if url == "" {
		return [][]string{measure.Report(label, "fan-out: writes after a change that changes nothing", "not measured (no "+be.name+" metrics)")}
	}
	reconciles := func() float64 {
		s, err := measure.Scrape(url)
		measure.Check(err)
		return measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})
	}
	before, rec0 := settledWrites([][2]string{{be.name, url}}), reconciles()
	patchDefinition(ctx, c, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"bench.cozystack.io/noop": time.Now().Format(time.RFC3339Nano)}}})
	measure.Poll("every instance reconciled after the no-op change", 30*time.Minute, measure.ScrapeEvery, func() bool {
		s, err := measure.Scrape(url)
		if err != nil {
			return false
		}
		depth := measure.Sum(s, "workqueue_depth", map[string]string{"name": *controller})
		return measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})-rec0 >= float64(*n) && depth == 0
	})
	w := settledWrites([][2]string{{be.name, url}}) - before
	return [][]string{
		measure.Report(label, "fan-out: reconciles after a change that changes nothing", fmt.Sprintf("%.0f", reconciles()-rec0)),
		measure.Figure(label, "fan-out: "+be.name+" writes after a change that changes nothing", float64(w), "", 0, false),
	}
}

func deleteShape(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	fmt.Printf("== %s: delete, %d settled instances deleted against %d raw deletes, %d runs; %d unthrottled client workers\n",
		label, *n, *n, measure.Runs, *workers)
	var cpuRaw, cpuPipe measure.Tally
	var lists []float64
	var api []measure.Sample
	var firstRun time.Duration // the middle run's profile spans as long, and 5s more
	raws, pipes := measure.InTurns("delete", func(int) {
		settleInstances(ctx, c, scheme, ns, 0, *n)
		createRaw(ctx, c)
	}, func(k int) time.Duration {
		d := timed(fmt.Sprintf("raw deletes, run %d", k+1), be.items, *n, &cpuRaw, func(i int) {
			measure.Check(c.Delete(ctx, be.raw(i)))
		})
		return d
	}, func(k int) time.Duration {
		what := fmt.Sprintf("pipeline, run %d", k+1)
		w := watchObjects(ctx, scheme, be.object, be.namespace(ns), nil)
		wi := watchObjects(ctx, scheme, benchGVK, ns, nil)
		measure.Quiet(what)
		apiBefore := apiserverMetrics(ctx)
		stop := progress(what, func() string {
			return fmt.Sprintf("%d/%d %s gone, %d/%d instances gone", w.Len(), *n, be.items, wi.Len(), *n)
		})
		var profiled sync.WaitGroup
		if k == measure.Runs/2 {
			profileAPIServer(ctx, &profiled, "the middle pipeline run", (firstRun + 5*time.Second).Truncate(time.Second))
		}
		cpu0 := cpuTimes()
		start := time.Now()
		measure.Parallel(*n, *workers, func(i int) { measure.Check(c.Delete(ctx, instance(i, ns))) })
		w.wait(what, *n, 30*time.Minute)
		wi.wait(what, *n, 30*time.Minute)
		d := time.Since(start)
		cpuPipe.Add(cpu0, cpuTimes(), d)
		stop()
		profiled.Wait()
		apiAfter := apiserverMetrics(ctx)
		delta := measure.AddDelta(nil, apiBefore, apiAfter)
		api = measure.AddDelta(api, apiBefore, apiAfter)
		l := 0.0
		for _, res := range []string{be.resource, "benches"} {
			l += measure.Sum(delta, "apiserver_request_total", map[string]string{"verb": "LIST", "resource": res})
		}
		lists = append(lists, l/float64(*n))
		if left := countObjects(ctx, c, be.object, be.namespace(ns)); left != 0 {
			measure.Check(fmt.Errorf("every deletion seen but %s still holds %d %s", be.namespace(ns), left, be.items))
		}
		if k == 0 {
			firstRun = d
		}
		return d
	})
	rows := runRows(label, "delete", "raw deletes", "instances deleted to the last backing object and instance gone", 2, raws, pipes, &cpuRaw, &cpuPipe)
	rows = append(rows, directRows(label, raws, pipes)...)
	rows = append(rows,
		measure.MedianFigure(label, "delete: LISTs of "+be.items+" and instances per deleted instance", lists, "", 0, false),
		measure.Report(label, "delete: API requests per instance, watches aside", measure.RequestMix(nil, api, measure.Runs*(*n))),
		measure.Report(label, "delete: watch events sent per instance, by kind", measure.WatchEventMix(nil, api, measure.Runs*(*n))))
	rows = append(rows, namespaceDelete(ctx, c, scheme, label)...)
	rows = append(rows, rss(label, true)...)
	finish(rows)
}

// namespaceDelete times the deletion of a namespace holding m = min(N, 1000)
// settled instances, until the namespace and every backing object of its
// instances are gone, against the deletion of a namespace holding 2m raw
// backing objects: as many objects as the instances and theirs, deleted by
// kube-controller-manager's namespace controller in both cases, so the
// pipeline's time beyond the raw one is what the backend controller adds.
// Each run has namespaces of its own. The namespaces are not tenant-*
// ones, whose object-count quota admits 100 instances of a kind.
func namespaceDelete(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) [][]string {
	m := min(*n, 1000)
	fmt.Printf("== %s: delete a namespace of %d instances against a namespace of %d raw %s, %d runs\n", label, m, 2*m, be.items, measure.Runs)
	tenant := func(k int) string { return fmt.Sprintf("bench-nsdel-%d", k) }
	raw := func(k int) string { return fmt.Sprintf("bench-nsdel-raw-%d", k) }
	var cpuRaw, cpuPipe measure.Tally
	var api []measure.Sample
	raws, pipes := measure.InTurns("namespace delete", func(k int) {
		namespaces(ctx, c, tenant(k), raw(k))
		settleInstances(ctx, c, scheme, tenant(k), 0, m)
		measure.Parallel(2*m, *workers, func(i int) {
			o := be.raw(i)
			o.SetNamespace(raw(k))
			measure.Check(c.Create(ctx, o))
		})
	}, func(k int) time.Duration {
		return deleteNamespace(ctx, c, scheme, raw(k), 0, fmt.Sprintf("raw namespace delete, run %d", k+1), &cpuRaw)
	}, func(k int) time.Duration {
		backed := 0 // in the namespace itself: gone before it is
		if be.namespace(tenant(k)) != tenant(k) {
			backed = m
		}
		apiBefore := apiserverMetrics(ctx)
		d := deleteNamespace(ctx, c, scheme, tenant(k), backed, fmt.Sprintf("pipeline namespace delete, run %d", k+1), &cpuPipe)
		api = measure.AddDelta(api, apiBefore, apiserverMetrics(ctx))
		return d
	})
	rows := runRows(label, "namespace delete", fmt.Sprintf("namespaces of %d raw %s deleted", 2*m, be.items),
		fmt.Sprintf("namespaces of %d instances deleted to the last of their %s", m, be.items), 1, raws, pipes, &cpuRaw, &cpuPipe)
	return append(rows, measure.Report(label, "namespace delete: API requests per instance, watches aside", measure.RequestMix(nil, api, measure.Runs*m)))
}

// deleteNamespace deletes namespace and times it until the namespace is gone
// (its delete event) and, when backed is not 0, until as many backing
// objects of its instances in their platform namespace are deleted.
func deleteNamespace(ctx context.Context, c client.Client, scheme *runtime.Scheme, namespace string, backed int, what string, tally *measure.Tally) time.Duration {
	// Nothing else deletes a namespace meanwhile: the first deletion seen
	// is this one, as the Get after it confirms.
	gone := watchObjects(ctx, scheme, corev1.SchemeGroupVersion.WithKind("Namespace"), "", nil)
	var objects *countWatch
	if backed > 0 {
		objects = watchObjects(ctx, scheme, be.object, be.namespace(namespace), nil)
	}
	measure.Quiet(what)
	stop := progress(what, func() string { return fmt.Sprintf("namespace gone: %v", gone.Len() > 0) })
	cpu0 := cpuTimes()
	start := time.Now()
	measure.Check(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
	gone.wait(what, 1, 30*time.Minute)
	if objects != nil {
		objects.wait(what, backed, 30*time.Minute)
	}
	d := time.Since(start)
	tally.Add(cpu0, cpuTimes(), d)
	stop()
	if err := c.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		measure.Check(fmt.Errorf("a namespace's deletion was seen but %s is still there (%v)", namespace, err))
	}
	return d
}

// finish writes the rows and exits non-zero when a figure missed its goal.
func finish(rows [][]string) {
	measure.AppendRows(*results, rows...)
	if measure.Missed(rows) {
		fmt.Println("  a figure missed its goal")
		os.Exit(2)
	}
}
