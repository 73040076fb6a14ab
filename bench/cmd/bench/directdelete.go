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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// directDelete sends, for each of N Terraform-backed instances in turn, the
// requests a deleted instance costs the pipeline, with no controller: the
// tenant's DELETE of an instance the backend's finalizer holds (an update
// that sets its deletionTimestamp), then, as the terraform controller's
// identity, the DELETE of its Terraform object, on the condition of its uid
// and version (as deleteBacking sends it: nothing holds the object, so it
// goes at once), and the merge patch that takes the finalizer off the
// instance, which the API server then deletes. The controller's patch also
// carries the version its cache showed; the bench reads no version and
// sends none. The instances, with the finalizer, and their Terraform
// objects, of the controller's shape in the platform namespace, are made
// beforehand, untimed, as an administrator. It writes T_direct, in seconds,
// to --direct-out.
func directDelete(ctx context.Context, c client.Client, label string) {
	if *backend == "" || *directOut == "" {
		measure.Check(fmt.Errorf("the direct-delete phase needs --backend-kubeconfig and --direct-out"))
	}
	if be.name != "terraform" {
		measure.Check(fmt.Errorf("the direct-delete phase measures the terraform backend's deletion, not %s's", be.name))
	}
	setup(ctx, c)
	platform := be.namespace(directNS)
	namespaces(ctx, c, platform)
	_, _, bc := measure.Client(*backend, -1, 0, tfv1alpha2.AddToScheme)

	insts := make([]*unstructured.Unstructured, *n)
	tfs := make([]*unstructured.Unstructured, *n)
	fmt.Printf("== %s: the deletion's requests alone, %d Terraform-backed instances, %d unthrottled client workers\n", label, *n, *workers)
	measure.Parallel(*n, *workers, func(i int) {
		inst := instance(i, directNS)
		inst.SetFinalizers([]string{appsv1alpha1.FinalizerTerraform})
		measure.Check(c.Create(ctx, inst))
		tf := rawTerraform(i)
		tf.SetNamespace(platform)
		tf.SetLabels(map[string]string{appsv1alpha1.LabelApplicationKind: benchGVK.Kind, appsv1alpha1.LabelApplicationGroup: benchGVK.Group,
			appsv1alpha1.LabelApplicationName: inst.GetName(), appsv1alpha1.LabelApplicationNamespace: directNS,
			appsv1alpha1.LabelApplicationUID: string(inst.GetUID()), revLabel: firstRev})
		measure.Check(c.Create(ctx, tf))
		insts[i], tfs[i] = inst, tf
	})

	var cpuDirect measure.Tally
	var profiled sync.WaitGroup
	apiBefore := apiserverMetrics(ctx)
	profileAPIServer(ctx, &profiled, "the requests alone", 20*time.Second)
	unfinalize := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	t := timed("the deletion's requests alone", "instances", *n, &cpuDirect, func(i int) {
		inst, tf := insts[i], tfs[i]
		measure.Check(c.Delete(ctx, inst))
		measure.Check(bc.Delete(ctx, tf, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr(tf.GetUID()), ResourceVersion: ptr(tf.GetResourceVersion())}))
		measure.Check(bc.Patch(ctx, inst, unfinalize))
	})
	api := measure.AddDelta(nil, apiBefore, apiserverMetrics(ctx))
	profiled.Wait()
	fmt.Printf("  direct delete: %d instances' requests in %.1fs (%.0f/s)\n", *n, t.Seconds(), float64(*n)/t.Seconds())
	measure.AppendRows(*results,
		measure.Report(label, "delete: CPU seconds during the requests alone", cpuDirect.Format(goruntime.NumCPU())),
		measure.Report(label, "delete: the requests alone, watch events sent per instance, by kind", measure.WatchEventMix(nil, api, *n)))
	measure.Check(os.WriteFile(*directOut, []byte(strconv.FormatFloat(t.Seconds(), 'f', 3, 64)), 0o644))
	measure.WaitFor("the direct phase's instances and Terraform objects to go", 2*time.Minute, func() bool {
		return countObjects(ctx, c, benchGVK, directNS) == 0 && countObjects(ctx, c, be.object, platform) == 0
	})
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
