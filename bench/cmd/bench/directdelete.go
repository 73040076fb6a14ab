package main

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// directDeleteSetup makes N Terraform-backed instances in their own
// namespace and waits until the terraform controller, run for this phase
// alone, has written each one's Terraform object and status: the objects
// the direct-delete phase then deletes are the pipeline's, to the byte
// (status, managed fields, labels), since the API server's cost of a
// request grows with the object it decodes and writes.
func directDeleteSetup(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	checkDirectDelete()
	setup(ctx, c)
	namespaces(ctx, c, directNS)
	fmt.Printf("== %s: %d Terraform-backed instances settled for the deletion's requests alone\n", label, *n)
	settleInstances(ctx, c, scheme, directNS, 0, *n)
}

// directDelete sends, for each of the N instances directDeleteSetup
// settled, with no controller running, the requests a deleted instance
// costs the pipeline: the tenant's DELETE of the instance (which no
// finalizer holds: the bench's definition destroys nothing, so it goes at
// once), then, as the terraform controller's identity, the DELETE of its
// Terraform object on the condition of its uid (as collectOrphans sends
// it). It writes T_direct, in seconds, to --direct-out.
func directDelete(ctx context.Context, c client.Client, label string) {
	checkDirectDelete()
	platform := be.namespace(directNS)
	_, _, bc := measure.Client(*backend, -1, 0, tfv1alpha2.AddToScheme)
	insts := listAll(ctx, c, benchGVK, directNS)
	byName := map[string]*unstructured.Unstructured{}
	for _, tf := range listAll(ctx, c, be.object, platform) {
		byName[tf.GetLabels()[appsv1alpha1.LabelApplicationName]] = tf
	}
	if len(insts) != *n || len(byName) != *n {
		measure.Check(fmt.Errorf("the direct-delete phase found %d instances and %d Terraform objects, not %d of each: run direct-delete-setup first", len(insts), len(byName), *n))
	}
	for _, inst := range insts {
		if len(inst.GetFinalizers()) != 0 || byName[inst.GetName()] == nil {
			measure.Check(fmt.Errorf("instance %s holds finalizers %v (or has no Terraform object): not the shape the pipeline deletes", inst.GetName(), inst.GetFinalizers()))
		}
	}
	fmt.Printf("== %s: the deletion's requests alone, %d Terraform-backed instances, %d unthrottled client workers\n", label, *n, *workers)
	var cpuDirect measure.Tally
	var profiled sync.WaitGroup
	apiBefore := apiserverMetrics(ctx)
	profileAPIServer(ctx, &profiled, "the requests alone", 20*time.Second)
	t := timed("the deletion's requests alone", "instances", *n, &cpuDirect, func(i int) {
		inst := insts[i]
		tf := byName[inst.GetName()]
		measure.Check(c.Delete(ctx, inst))
		measure.Check(bc.Delete(ctx, tf, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptr(tf.GetUID())}))
	})
	api := measure.AddDelta(nil, apiBefore, apiserverMetrics(ctx))
	profiled.Wait()
	fmt.Printf("  direct delete: %d instances' requests in %.1fs (%.0f/s)\n", *n, t.Seconds(), float64(*n)/t.Seconds())
	measure.AppendRows(*results,
		measure.Report(label, "delete: CPU seconds during the requests alone", cpuDirect.Format(goruntime.NumCPU())),
		measure.Report(label, "delete: the requests alone, API requests per instance, watches aside", measure.RequestMix(nil, api, *n)),
		measure.Report(label, "delete: the requests alone, watch events sent per instance, by kind", measure.WatchEventMix(nil, api, *n)))
	measure.Check(os.WriteFile(*directOut, []byte(strconv.FormatFloat(t.Seconds(), 'f', 3, 64)), 0o644))
	measure.WaitFor("the direct phase's instances and Terraform objects to go", 2*time.Minute, func() bool {
		return countObjects(ctx, c, benchGVK, directNS) == 0 && countObjects(ctx, c, be.object, platform) == 0
	})
}

// checkDirectDelete exits unless the flags name what the direct-delete
// phases need.
func checkDirectDelete() {
	if *backend == "" || *directOut == "" {
		measure.Check(fmt.Errorf("the direct-delete phases need --backend-kubeconfig and --direct-out"))
	}
	if be.name != "terraform" {
		measure.Check(fmt.Errorf("the direct-delete phases measure the terraform backend's deletion, not %s's", be.name))
	}
}

// listAll reads the objects of kind in namespace, whole.
func listAll(ctx context.Context, c client.Client, kind schema.GroupVersionKind, namespace string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	inPages(ctx, c, func() client.ObjectList {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
		return l
	}, func(l client.ObjectList) {
		items := l.(*unstructured.UnstructuredList).Items
		for i := range items {
			out = append(out, &items[i])
		}
	}, client.InNamespace(namespace))
	return out
}

// directRows reports T_direct of the direct-delete phase beside the delete
// runs: 2 × T_raw / T_direct (T_raw the runs' median) is the most any
// controller could reach with these requests on this machine, and T_direct /
// T how close the pipeline comes. None when --direct is not set.
func directRows(label string, raws, pipes []time.Duration) [][]string {
	if *directT <= 0 {
		return nil
	}
	d := time.Duration(*directT * float64(time.Second))
	raw, pipe := medianDuration(raws), medianDuration(pipes)
	return [][]string{
		measure.Report(label, "delete: the requests alone T_direct", fmt.Sprintf("%.1fs", d.Seconds())),
		measure.Report(label, "delete: the requests alone 2*T_raw/T_direct, T_raw the runs' median", fmt.Sprintf("%.2f", measure.Efficiency(2, raw, d))),
		measure.Report(label, "delete: pipeline against the requests alone T_direct/T, T the runs' median", fmt.Sprintf("%.2f", d.Seconds()/pipe.Seconds())),
	}
}

// medianDuration is the median of ds.
func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = d.Seconds()
	}
	return time.Duration(measure.Median(xs) * float64(time.Second))
}
