// Command bench measures the Helm backend against the performance budget of
// the design on a running control plane (hack/bench.sh sets it up with the
// appdef and helm controllers and the admission policies) and prints each
// figure with its target and whether it is met.
//
// Phase pipeline (--phase=pipeline), in rounds (--rounds; one per 400
// instances, 3 to 10), each of a part of the N instances, spread over one
// tenant namespace per hundred instances (at most 1,000):
//
//   - raw capacity: the time 16 unthrottled client workers take to create
//     as many HelmReleases directly on the same API server;
//   - pipeline: the time from the first of the round's instances created
//     (by 16 unthrottled workers, as tenants would) until every one has its
//     HelmRelease and a status written by the controller, seen through a
//     watch;
//   - the two in turns (raw first in one round, the pipeline first in the
//     next), each once the machine is quiet, so both sides see the same
//     moments of a machine whose speed moves within tens of seconds
//     (measure.CoreSpeed);
//   - write efficiency 3*T_raw/T of each round, from the round's own times
//     (the pipeline needs three writes per instance: the tenant's create,
//     the HelmRelease, one status write); the verdict is the rounds' median,
//     their range printed beside, and the summed rounds' efficiency too;
//   - controller writes per instance (target 2: the backing object and one
//     status write; the events the controller records, one per created
//     backing object, are reported beside it), peak RSS per controller, and
//     the helm controller's live heap per instance beyond its heap with no
//     instance (target 2 KiB);
//   - the flow schemas and priority levels API Priority and Fairness put
//     the pipeline's requests in.
//
// Phase direct (--phase=direct, before hack/bench.sh starts the helm
// controller): T_direct, the time 16 unthrottled workers take to send, for N
// instances, the requests the pipeline makes of the API server, one instance
// after another and with no controller: the tenant's create, then as the
// helm controller's identity the HelmRelease create, the status write and the
// Created event. With T_raw from the pipeline phase it gives the write
// efficiency of the requests alone, 3*T_raw/T_direct: the most any controller
// could reach on this machine, within a run's spread (docs/performance.md).
//
// Phase kro (--phase=kro, with kro running on the control plane): the
// nearest peer on the same measure, in kro.go.
//
// Phases create, fanout and delete (shapes.go), on the backend of --backend
// (helm or terraform, backends.go): N instances created until each has a
// status, a definition change reaching N settled instances' backing objects,
// and N instances deleted, each against the same requests sent raw, the
// median of three runs.
//
// Phase restart (--phase=restart, after hack/bench.sh restarted the helm
// controller over the settled instances, measure.Runs times): the time from
// the restart until the controller has reconciled every instance with an
// empty queue, the median of the runs, and its writes meanwhile (target 0 in
// each run).
//
// Before each timed part the bench prints one core's speed at that moment
// (measure.CoreSpeed), which on a shared virtual machine moves by itself.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

var (
	kubeconfig = flag.String("kubeconfig", "", "kubeconfig of the control plane")
	phase      = flag.String("phase", "pipeline", "direct, pipeline, apiserver-metrics, restart, kro, create, fanout, delete (shapes.go), direct-delete-setup and direct-delete (directdelete.go) or manykinds (manykinds.go)")
	setting    = flag.String("setting", "defaults", "name of the controllers' settings, for the report")
	n          = flag.Int("n", 2000, "instances")
	workers    = flag.Int("workers", 16, "unthrottled client workers of the raw measurement and of the tenants' creates")
	target     = flag.Float64("target", 0.8, "write efficiency target of this setting")
	metrics    = flag.String("metrics", "", "name=URL,... of the controllers' metrics endpoints")
	pids       = flag.String("pids", "", "name=pid,... of the controllers, for their peak RSS")
	shards     = flag.Int("shards", 0, "label instance i with cozystack.io/shard=s<i mod shards> (0: no label)")
	controller = flag.String("controller", "cozystack-helm", "the instance controller's name in its metrics (restart phase)")
	since      = flag.Int64("since", 0, "restart phase: the restart's time, Unix nanoseconds")
	restartRun = flag.Int("restart-run", 1, "restart phase: which of measure.Runs restarts over the same instances this is (1-based); the last one reports their median")
	restartsTo = flag.String("restarts-file", "", "restart phase: the file the restarts' times to settle are kept in from one run to the next")
	apiBefore  = flag.String("apiserver-metrics", "", "apiserver-metrics phase: write the API server's metrics to this file; restart phase: read them from it, as they were before the restart")
	results    = flag.String("results", "", "append the figures to this file, tab-separated")
	cpu        = flag.String("cpu", "", "name=pid,... of more processes (the API server, etcd) whose CPU time each phase reports, beside the controllers' and the bench's own")
	pprofURL   = flag.String("pprof", "", "pipeline, restart and create phases: the instance controller's pprof base URL, profiled over the pipeline's middle round and the restart's first 60s; its live heap before and after the instances")
	pprofOut   = flag.String("pprof-out", "", "where the CPU profile goes")
	apiProfOut = flag.String("apiserver-pprof-out", "", "delete, direct and direct-delete phases: a CPU profile of the API server over the whole middle pipeline run (as long as the first run, and 5s more), or over the first 20s of the requests alone, goes here")
	heapOut    = flag.String("heap-out", "", "where the backend controller's heap profile goes, the last one its live heap was read from (empty: nowhere)")
	backend    = flag.String("backend-kubeconfig", "", "direct and direct-delete phases: kubeconfig of the backend controller's identity")
	directOut  = flag.String("direct-out", "", "direct and direct-delete phases: write T_direct, in seconds, to this file")
	directT    = flag.Float64("direct", 0, "pipeline and delete phases: T_direct in seconds, from the direct or direct-delete phase (0: none)")
	kinds      = flag.Int("kinds", 50, "manykinds phase: definitions the instances are spread over")
	rounds     = flag.Int("rounds", 0, "pipeline phase: rounds of raw creates and of the pipeline, in turns (0: one per 400 instances, 1 to 10)")
	backendArg = flag.String("backend", "helm", "create, fanout and delete phases: the backend measured, helm or terraform (backends.go)")
	memLimits  = flag.String("memory-limits", "", "controller=MiB,... : each controller's container memory limit (its chart's), which its peak RSS is judged against")
)

// The namespaces of the pipeline's instances and of the direct phase's.
const (
	ns       = "bench-ctrl"
	directNS = "bench-direct"
)

var benchGVK = schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Bench"}

func main() {
	flag.Parse()
	b, ok := backends[*backendArg]
	if !ok {
		measure.Check(fmt.Errorf("unknown backend %q (helm, terraform)", *backendArg))
	}
	be = b
	// Unthrottled: the API server's capacity is what is measured.
	_, scheme, c := measure.Client(*kubeconfig, -1, 0, cozyv1alpha1.AddToScheme, helmv2.AddToScheme, tfv1alpha2.AddToScheme)
	ctx := context.Background()
	label := fmt.Sprintf("%s N=%d", *setting, *n)
	switch *phase {
	case "direct":
		direct(ctx, c, label)
	case "direct-delete-setup":
		directDeleteSetup(ctx, c, scheme, label)
	case "direct-delete":
		directDelete(ctx, c, label)
	case "pipeline":
		pipeline(ctx, c, scheme, label)
	case "apiserver-metrics":
		measure.Check(os.WriteFile(*apiBefore, apiserverMetricsText(ctx), 0o644))
	case "restart":
		restart(label)
	case "kro":
		peerKro(ctx, c, scheme, label)
	case "create":
		createShape(ctx, c, scheme, label)
	case "fanout":
		fanout(ctx, c, scheme, label)
	case "delete":
		deleteShape(ctx, c, scheme, label)
	case "manykinds":
		manyKinds(ctx, c, scheme, label)
	default:
		measure.Check(fmt.Errorf("unknown phase %q", *phase))
	}
}

// setup creates the bench's namespaces and its definition, of the backend
// of --backend, and waits until the definition is served.
func setup(ctx context.Context, c client.Client) {
	rawNamespace(ctx, c)
	namespaces(ctx, c, ns, directNS)
	def := &cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: "Bench", Plural: "benches", Singular: "bench",
				OpenAPISchema: `{"type":"object","properties":{"replicas":{"type":"integer","default":1}}}`},
		},
	}
	be.define(&def.Spec)
	measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, def)))
	measure.WaitFor("definition Ready", 2*time.Minute, func() bool {
		d := &cozyv1alpha1.ApplicationDefinition{}
		return c.Get(ctx, types.NamespacedName{Name: "bench"}, d) == nil && meta.IsStatusConditionTrue(d.Status.Conditions, "Ready")
	})
	warmUp(ctx, c, map[string]client.Object{benchGVK.Kind: instance(0, ns), be.object.Kind: be.raw(0)})
}

// rawOwner is the owner reference of the raw side's backing objects: the
// namespace rawNS, which lives as long as they do. The controller's
// HelmReleases carry one to their instance; the raw ones carry one of the
// same shape, so both sides store, serve and collect objects of one size.
var rawOwner metav1.OwnerReference

// rawNamespace creates rawNS if it does not exist yet and sets rawOwner.
func rawNamespace(ctx context.Context, c client.Client) {
	namespaces(ctx, c, rawNS)
	n := &corev1.Namespace{}
	measure.Check(c.Get(ctx, types.NamespacedName{Name: rawNS}, n))
	rawOwner = metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: rawNS, UID: n.UID,
		Controller: ptr(true), BlockOwnerDeletion: ptr(true)}
}

// namespaces creates the namespaces of names that do not exist yet.
func namespaces(ctx context.Context, c client.Client, names ...string) {
	for _, name := range names {
		measure.Check(client.IgnoreAlreadyExists(c.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}})))
	}
}

// warmUp pays, before anything is timed, for the first request of each kind:
// discovery and, for a kind just served, the server's first use of its
// storage (which waits 2s). It sends dry-run creates, which store nothing.
func warmUp(ctx context.Context, c client.Client, objs map[string]client.Object) {
	for kind, o := range objs {
		start := time.Now()
		measure.WaitFor("a dry-run create of a "+kind, 2*time.Minute, func() bool {
			return c.Create(ctx, o.DeepCopyObject().(client.Object), client.DryRunAll) == nil
		})
		fmt.Printf("  warm-up: the first create of a %s answered in %.1fs\n", kind, time.Since(start).Seconds())
	}
}

func pipeline(ctx context.Context, c client.Client, scheme *runtime.Scheme, label string) {
	setup(ctx, c)
	r := *rounds
	if r == 0 {
		r = measure.RoundsFor(*n)
	}
	parts := measure.Rounds(*n, r)
	spread := tenants("", *n)
	namespaces(ctx, c, spread...)
	quotasCount(ctx, c, spread)
	fmt.Printf("== %s: %d instances over %d tenant namespaces in %d rounds, each a round of raw creates and a round of the pipeline in turns; %d unthrottled client workers, etcd on tmpfs\n",
		label, *n, len(spread), len(parts), *workers)

	ctrls := measure.KV(*metrics)
	inst := &metav1.PartialObjectMetadata{}
	inst.SetGroupVersionKind(benchGVK)
	w := newWatcher(ctx, scheme, inst, "", statusWritten)
	heap0 := liveHeap(ctrls, "helm")
	before, apiStart := writes(ctrls), apiserverMetrics(ctx)
	var (
		api                   []measure.Sample // the API server's counters over the pipeline's rounds
		rawCPU, pipeCPU       measure.Tally
		rawT, total, shortest time.Duration
		perRound              []float64
		profiled              sync.WaitGroup
	)
	cores := goruntime.NumCPU()
	for k, part := range parts {
		lo, hi := part[0], part[1]
		round := fmt.Sprintf("round %d/%d", k+1, len(parts))
		var dr, dp time.Duration
		// Raw capacity: HelmReleases like the controller's, created directly
		// (the controllers neither cache nor reconcile them).
		raw := func() {
			dr = timed("raw creates, "+round, "HelmReleases", hi-lo, &rawCPU, func(i int) { measure.Check(c.Create(ctx, rawRelease(lo+i))) })
		}
		pipe := func() {
			what := "pipeline, " + round
			measure.Quiet(what)
			apiBefore := apiserverMetrics(ctx)
			if k == len(parts)/2 && *pprofURL != "" && *pprofOut != "" {
				d := profileSpan(shortest)
				fmt.Printf("  profiling the helm controller and the API server for %.0fs of this round\n", d.Seconds())
				profileBoth(ctx, &profiled, d)
			}
			dp = w.createAndWait(what, "statuses", lo, hi, &pipeCPU, func(i int) {
				measure.Check(c.Create(ctx, instance(i, spread[i%len(spread)])))
			})
			api = measure.AddDelta(api, apiBefore, apiserverMetrics(ctx))
		}
		// In turns (raw first in one round, the pipeline first in the
		// next), so that neither side always follows the other.
		if k%2 == 0 {
			raw()
			pipe()
		} else {
			pipe()
			raw()
		}
		rawT += dr
		total += dp
		if shortest == 0 || dp < shortest {
			shortest = dp
		}
		perRound = append(perRound, measure.Efficiency(3, dr, dp))
		fmt.Printf("  %s: %d HelmReleases created directly in %.1fs, %d instances -> HelmReleases and status in %.1fs: %.2f\n",
			round, hi-lo, dr.Seconds(), hi-lo, dp.Seconds(), perRound[k])
	}
	releases := countObjects(ctx, c, releaseGVK, "", client.HasLabels{appsv1alpha1.LabelApplicationKind})
	heapN := liveHeap(ctrls, "helm")
	if *pprofURL != "" && *pprofOut != "" {
		// What the controller holds with every instance in place.
		measure.SaveProfile(*pprofURL+"/debug/pprof/heap?gc=1", strings.TrimSuffix(*pprofOut, ".cpu.pprof")+".heap.pprof")
	}
	fmt.Printf("  raw creates: %d HelmReleases in %.1fs (%.0f/s); pipeline: %d instances -> HelmReleases and status in %.1fs (%.0f/s)\n",
		*n, rawT.Seconds(), float64(*n)/rawT.Seconds(), *n, total.Seconds(), float64(*n)/total.Seconds())
	if releases != *n {
		measure.Check(fmt.Errorf("every instance has a status but the tenant namespaces hold %d HelmReleases, not %d: see the instances' conditions", releases, *n))
	}
	// The events are counted over the same span as the writes: the event
	// recorder sends them after the status a round waits for.
	after := settledWrites(ctrls)
	spanEvents := measure.Sum(measure.AddDelta(nil, apiStart, apiserverMetrics(ctx)), "apiserver_request_total",
		map[string]string{"verb": "POST", "resource": "events"})
	deleteAll(ctx, c, releaseGVK, rawNS)
	delta := func(name string, match map[string]string) float64 { return measure.Sum(api, name, match) }
	var lat []string
	for _, verb := range []string{"POST", "PUT", "PATCH", "APPLY"} {
		m := map[string]string{"verb": verb}
		if c := delta("apiserver_request_duration_seconds_count", m); c > 0 {
			lat = append(lat, fmt.Sprintf("%s %.0fms", verb, 1000*delta("apiserver_request_duration_seconds_sum", m)/c))
		}
	}
	rows := [][]string{
		measure.Report(label, "raw creates T_raw, rounds summed", fmt.Sprintf("%.1fs", rawT.Seconds())),
		measure.Report(label, "pipeline T, rounds summed", fmt.Sprintf("%.1fs", total.Seconds())),
		measure.MedianFigure(label, "write efficiency 3*T_raw/T, the rounds'", perRound, "", *target, true),
		measure.Report(label, "write efficiency of the summed rounds", fmt.Sprintf("%.2f", measure.Efficiency(3, rawT, total))),
	}
	if *directT > 0 {
		d := time.Duration(*directT * float64(time.Second))
		rows = append(rows,
			measure.Report(label, "requests alone T_direct", fmt.Sprintf("%.1fs", d.Seconds())),
			measure.Report(label, "requests alone 3*T_raw/T_direct", fmt.Sprintf("%.2f", measure.Efficiency(3, rawT, d))),
			measure.Report(label, "pipeline against the requests alone T_direct/T", fmt.Sprintf("%.2f", d.Seconds()/total.Seconds())))
	}
	rows = append(rows,
		measure.Figure(label, "controller writes per instance, events aside", (float64(after-before)-spanEvents)/float64(*n), "", 2, false),
		measure.Report(label, "events per instance", fmt.Sprintf("%.2f", spanEvents/float64(*n))),
		measure.Figure(label, "APF rejections", delta("apiserver_flowcontrol_rejected_requests_total", nil), "", 0, false),
		measure.Report(label, "APF: the pipeline's requests by flow schema/priority level", measure.FlowMix(nil, api, *n)),
		measure.Report(label, "API server mean write latency", strings.Join(lat, ", ")),
		measure.Report(label, "API requests per instance, watches aside", measure.RequestMix(nil, api, *n)),
		measure.Report(label, "CPU seconds during the raw creates", rawCPU.Format(cores)),
		measure.Report(label, "CPU seconds during the pipeline", pipeCPU.Format(cores)))
	rows = append(rows, heapRows(label, "helm", heap0, heapN, *n)...)
	for _, kv := range ctrls {
		s, err := measure.Scrape(kv[1])
		measure.Check(err)
		rec := measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})
		if rec > 0 || *shards > 0 {
			rows = append(rows, measure.Report(label, kv[0]+" reconciles", fmt.Sprintf("%.0f", rec)),
				measure.Report(label, kv[0]+" writes", strconv.Itoa(measure.WriteCount(s))))
		}
	}
	rows = append(rows, rss(label, true)...)
	measure.AppendRows(*results, rows...)
	profiled.Wait()
}

// tenants names the tenant namespaces n instances are spread over: a
// hundred instances each, at most 1,000 namespaces (the shape of a platform
// with 100,000 instances), at least one; each named tenant-<part>NNNN.
func tenants(part string, n int) []string {
	names := make([]string, max(1, min(1000, n/100)))
	for i := range names {
		names[i] = fmt.Sprintf("tenant-%s%04d", part, i)
	}
	return names
}

// quotasCount waits until the object-count quota appdef writes in each of
// the tenant namespaces (controllers/appdef/internal/quota) counts the
// bench's kind, which it does a minute after the kind is served: from then
// on every tenant's create is admitted against its quota, which the API
// server updates with each create, as on a platform; no round may start
// before.
func quotasCount(ctx context.Context, c client.Client, tenants []string) {
	key := corev1.ResourceName("count/benches." + benchGVK.Group)
	want := map[string]bool{}
	for _, t := range tenants {
		want[t] = true
	}
	measure.WaitFor("the tenant namespaces' quotas to count the instances", 5*time.Minute, func() bool {
		l := &corev1.ResourceQuotaList{}
		if c.List(ctx, l) != nil {
			return false
		}
		counted := 0
		for _, q := range l.Items {
			if _, ok := q.Status.Hard[key]; ok && want[q.Namespace] {
				counted++
			}
		}
		return counted >= len(tenants)
	})
}

// liveHeap is the live heap in bytes of the controller called name in ctrls
// (its heap after a garbage collection the bench asks for through pprof), or
// -1 without the controller's pprof and metrics.
func liveHeap(ctrls [][2]string, name string) float64 {
	url := ""
	for _, kv := range ctrls {
		if kv[0] == name {
			url = kv[1]
		}
	}
	if url == "" || *pprofURL == "" {
		return -1
	}
	resp, err := http.Get(*pprofURL + "/debug/pprof/heap?gc=1")
	measure.Check(err)
	var out io.Writer = io.Discard
	if *heapOut != "" {
		f, err := os.Create(*heapOut)
		measure.Check(err)
		defer func() { measure.Check(f.Close()) }()
		out = f
	}
	_, err = io.Copy(out, resp.Body)
	measure.Check(err)
	measure.Check(resp.Body.Close())
	s, err := measure.Scrape(url)
	measure.Check(err)
	return measure.Sum(s, "go_memstats_heap_alloc_bytes", nil)
}

// heapRows report a controller's live heap with no instance (heap0) and with
// n (heapN), and judge what it holds per instance beyond the first against
// 2 KiB; none without both (liveHeap).
func heapRows(label, name string, heap0, heapN float64, n int) [][]string {
	if heap0 < 0 || heapN < 0 {
		return nil
	}
	return [][]string{
		measure.Report(label, name+" live heap with no instance, then with every instance", fmt.Sprintf("%.1f MiB, %.1f MiB", heap0/(1<<20), heapN/(1<<20))),
		measure.Figure(label, name+" memory per instance beyond the base (live heap)", (heapN-heap0)/float64(n), " B", 2048, false),
	}
}

// profileSpan is how long the CPU profiles of the pipeline's middle round
// last: nine tenths of the shortest round before it, in whole seconds, 1s to
// 20s (20s when no round came before), so that they cover the round's work
// and little else.
func profileSpan(shortest time.Duration) time.Duration {
	if shortest == 0 {
		return 20 * time.Second
	}
	return min(max((shortest*9/10).Truncate(time.Second), time.Second), 20*time.Second)
}

// cpuTimes reads the CPU time used so far by each process of --cpu and
// --pids, and by the bench itself.
func cpuTimes() map[string]time.Duration { return measure.ProcessesCPU(*cpu, *pids) }

// profileBoth takes CPU profiles of the instance controller (--pprof, into
// --pprof-out) and of the API server (beside it, .apiserver.cpu.pprof) over
// the next d, in the background; wg is done when both are saved.
func profileBoth(ctx context.Context, wg *sync.WaitGroup, d time.Duration) {
	wg.Add(2)
	go func() { defer wg.Done(); measure.CPUProfile(*pprofURL, *pprofOut, d) }()
	go func() {
		defer wg.Done()
		apiserverProfile(ctx, strings.TrimSuffix(*pprofOut, ".helm.cpu.pprof")+".apiserver.cpu.pprof", d)
	}()
}

// profileAPIServer takes a CPU profile of the API server into
// --apiserver-pprof-out, when it is set, over the next d (of what), in the
// background; wg is done when it is saved.
func profileAPIServer(ctx context.Context, wg *sync.WaitGroup, what string, d time.Duration) {
	if *apiProfOut == "" {
		return
	}
	fmt.Printf("  profiling the API server for %.0fs of %s\n", d.Seconds(), what)
	wg.Add(1)
	go func() { defer wg.Done(); apiserverProfile(ctx, *apiProfOut, d) }()
}

// apiserverProfile writes a CPU profile of the API server (its
// /debug/pprof, on by default) over d: where the server's time goes.
func apiserverProfile(ctx context.Context, out string, d time.Duration) {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	cfg.Timeout = d + 30*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	measure.Check(err)
	b, err := cs.RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
	if err == nil {
		err = os.WriteFile(out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "  no API server CPU profile: %v\n", err)
	}
}

// countObjects counts the objects of kind in namespace (every namespace: ""),
// of those more options select, from their metadata
// (once, after T: a controller reports on an instance after its backing
// object, and this confirms the backing objects are stored).
func countObjects(ctx context.Context, c client.Client, kind schema.GroupVersionKind, namespace string, more ...client.ListOption) int {
	n := 0
	inPages(ctx, c, func() client.ObjectList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
		return l
	}, func(l client.ObjectList) { n += meta.LenList(l) }, append(more, client.InNamespace(namespace))...)
	return n
}

// inPages lists, page by page, into a new list of newList each, and hands
// each page to each: one list of 100,000 objects outlasts the API server's
// request timeout.
func inPages(ctx context.Context, c client.Client, newList func() client.ObjectList, each func(client.ObjectList), opts ...client.ListOption) {
	next := ""
	for {
		l := newList()
		measure.Check(c.List(ctx, l, append(opts, client.Limit(5000), client.Continue(next))...))
		each(l)
		if next = l.GetContinue(); next == "" {
			return
		}
	}
}

// rawRelease is a HelmRelease of the controller's shape and size, owned by
// rawNS (rawOwner). Its label keys differ from the application labels by
// their prefix only, so the controller neither caches nor reconciles it: the
// raw measurement is the API server's alone.
func rawRelease(i int) *helmv2.HelmRelease {
	name := fmt.Sprintf("app-%05d", i)
	hr := release(name, rawNS, map[string]string{
		"bench.cozystack.io/application.kind": "Raw", "bench.cozystack.io/application.group": "apps.cozystack.io",
		"bench.cozystack.io/application.name": name, revLabel: firstRev})
	hr.OwnerReferences = []metav1.OwnerReference{rawOwner}
	return hr
}

// release is the HelmRelease the helm controller makes of the bench's
// instance name (docs/helm-backend.md): the definition's prefix and chart, the
// instance's values with the schema's default, and the annotations with the
// hash of what was applied and the shape of what was created (placeholders of
// the hashes' length), and the release records in the platform namespace of
// namespace (none for namespace ""). The caller adds the owner reference.
func release(name, namespace string, labels map[string]string) *helmv2.HelmRelease {
	retry, timeout := &metav1.Duration{Duration: 30 * time.Second}, &metav1.Duration{Duration: 10 * time.Minute}
	onFailure := string(helmv2.ActionStrategyRetryOnFailure)
	return &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "b-" + name, Namespace: namespace, Labels: labels,
			Annotations: map[string]string{"cozystack.io/applied-hash.cozystack-helm": strings.Repeat("0", 24),
				"cozystack.io/created-shape.cozystack-helm": strings.Repeat("0", 24)}},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: 5 * time.Minute}, MaxHistory: ptr(5),
			ChartRef:         &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "bench", Namespace: "cozy-system"},
			Values:           &apiextensionsv1.JSON{Raw: []byte(`{"replicas":1}`)},
			ValuesFrom:       []helmv2.ValuesReference{{Kind: "Secret", Name: "cozystack-values"}},
			Install:          &helmv2.Install{Timeout: timeout, Strategy: &helmv2.InstallStrategy{Name: onFailure, RetryInterval: retry}},
			Upgrade:          &helmv2.Upgrade{Timeout: timeout, Strategy: &helmv2.UpgradeStrategy{Name: onFailure, RetryInterval: retry}},
			StorageNamespace: storageNamespace(namespace)},
	}
}

// storageNamespace is the spec.storageNamespace the helm controller gives
// the HelmReleases of namespace (helmbackend.StorageNamespaceOf).
func storageNamespace(namespace string) string {
	if namespace == "" {
		return ""
	}
	return appsv1alpha1.PlatformNamespaceName(appsv1alpha1.HelmStorageNamespacePrefix, namespace)
}

// instance is the i-th instance a tenant creates in namespace.
func instance(i int, namespace string) *unstructured.Unstructured {
	md := map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": namespace}
	if *shards > 0 {
		md["labels"] = map[string]any{"cozystack.io/shard": fmt.Sprintf("s%d", i%*shards)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": benchGVK.GroupVersion().String(), "kind": benchGVK.Kind, "metadata": md, "spec": map[string]any{}}}
}

// direct sends, for each of N instances in turn, the requests the pipeline
// makes of the API server, with no controller: the tenant's create, in
// tenant namespaces of their own spread and limited as the pipeline's (so
// the API server updates their object-count quota with each create, as in
// the pipeline), then as the helm controller's identity the HelmRelease
// (labels and owner reference as the controller sets them), the status the
// controller's first reconcile writes, and its Created event. Then it
// deletes what it made, so the
// pipeline runs on the same store size, and writes T_direct to --direct-out.
func direct(ctx context.Context, c client.Client, label string) {
	if *backend == "" || *directOut == "" {
		measure.Check(fmt.Errorf("the direct phase needs --backend-kubeconfig and --direct-out"))
	}
	setup(ctx, c)
	cfg, _, bc := measure.Client(*backend, -1, 0, helmv2.AddToScheme)
	events, err := kubernetes.NewForConfig(cfg)
	measure.Check(err)
	host, _ := os.Hostname()
	spread := tenants("direct-", *n)
	namespaces(ctx, c, spread...)
	quotasCount(ctx, c, spread)
	fmt.Printf("== %s: the pipeline's requests alone, %d instances over %d tenant namespaces, %d unthrottled client workers\n", label, *n, len(spread), *workers)
	var cpuDirect measure.Tally
	var profiled sync.WaitGroup
	apiBefore := apiserverMetrics(ctx)
	profileAPIServer(ctx, &profiled, "the requests alone", 20*time.Second)
	t := timed("requests alone", "instances", *n, &cpuDirect, func(i int) {
		namespace := spread[i%len(spread)]
		inst := instance(i, namespace)
		measure.Check(c.Create(ctx, inst))
		name := inst.GetName()
		hr := release(name, namespace, map[string]string{"apps.cozystack.io/application.kind": benchGVK.Kind,
			"apps.cozystack.io/application.group": benchGVK.Group, "apps.cozystack.io/application.name": name})
		hr.OwnerReferences = []metav1.OwnerReference{{APIVersion: benchGVK.GroupVersion().String(), Kind: benchGVK.Kind,
			Name: name, UID: inst.GetUID(), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
		measure.Check(bc.Create(ctx, hr, client.FieldOwner("cozystack-helm-create")))
		now, waiting := metav1.Now(), "waiting for helm-controller to report on HelmRelease "+hr.Name
		cond := func(t string, status metav1.ConditionStatus) metav1.Condition {
			return metav1.Condition{Type: t, Status: status, Reason: appsv1alpha1.ReasonProgressing, Message: waiting,
				ObservedGeneration: 1, LastTransitionTime: now}
		}
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&appsv1alpha1.ApplicationStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{cond(appsv1alpha1.ConditionReady, metav1.ConditionUnknown),
				cond(appsv1alpha1.ConditionReconciling, metav1.ConditionTrue)},
			Backend: &appsv1alpha1.BackendStatus{Type: "Helm", APIVersion: helmv2.GroupVersion.String(), Kind: "HelmRelease", Name: hr.Name},
		})
		measure.Check(err)
		// As the controller writes it: a merge patch of the status at the
		// version read (pkg/statusapply, Writer.Patch).
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": inst.GetResourceVersion()}, "status": st})
		measure.Check(err)
		patched := &unstructured.Unstructured{}
		patched.SetGroupVersionKind(benchGVK)
		patched.SetNamespace(namespace)
		patched.SetName(name)
		measure.Check(bc.Status().Patch(ctx, patched, client.RawPatch(types.MergePatchType, body), client.FieldOwner("cozystack-helm")))
		inst.SetResourceVersion(patched.GetResourceVersion())
		_, err = events.EventsV1().Events(namespace).Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, time.Now().UnixNano()), Namespace: namespace},
			EventTime:  metav1.NowMicro(), Type: "Normal", Reason: "Created", Action: "Apply",
			Note:                "created HelmRelease " + hr.Name,
			ReportingController: "cozystack-helm", ReportingInstance: "cozystack-helm-" + host,
			Regarding: corev1.ObjectReference{APIVersion: benchGVK.GroupVersion().String(), Kind: benchGVK.Kind,
				Namespace: namespace, Name: name, UID: inst.GetUID(), ResourceVersion: inst.GetResourceVersion()},
		}, metav1.CreateOptions{})
		measure.Check(err)
	})
	api := measure.AddDelta(nil, apiBefore, apiserverMetrics(ctx))
	profiled.Wait()
	fmt.Printf("  direct: %d instances' requests in %.1fs (%.0f/s)\n", *n, t.Seconds(), float64(*n)/t.Seconds())
	measure.AppendRows(*results,
		measure.Report(label, "CPU seconds during the requests alone", cpuDirect.Format(goruntime.NumCPU())),
		measure.Report(label, "the requests alone, API requests per instance, watches aside", measure.RequestMix(nil, api, *n)))
	measure.Check(os.WriteFile(*directOut, []byte(strconv.FormatFloat(t.Seconds(), 'f', 3, 64)), 0o644))

	// Drop what the phase made (as an administrator: a tenant may not delete
	// backing objects), the HelmReleases before their instances: an instance
	// deleted first leaves the garbage collector its HelmRelease to read and
	// delete, at kube-controller-manager's own pace, well into the rounds
	// that follow (0.29 reads of a HelmRelease per instance there).
	for _, namespace := range spread {
		for _, kind := range []schema.GroupVersionKind{helmv2.GroupVersion.WithKind("HelmRelease"), benchGVK,
			eventsv1.SchemeGroupVersion.WithKind("Event")} {
			deleteAll(ctx, c, kind, namespace)
		}
	}
}

// deleteAll deletes every object of kind in namespace and waits until none is
// left. A collection delete of thousands of objects outlasts the API server's
// request timeout, which then gives it up (a Timeout status, or the stream
// reset), so the bench deletes a page of 1,000 at a time and asks again after
// an error, until none is left; an error that persists shows when the wait
// runs out.
func deleteAll(ctx context.Context, c client.Client, kind schema.GroupVersionKind, namespace string) {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(kind)
	var last error
	what := namespace + "'s " + kind.Kind + " objects to go"
	measure.WaitFor(what, 10*time.Minute, func() bool {
		if c.List(ctx, l, client.InNamespace(namespace), client.Limit(1)) == nil && len(l.Items) == 0 {
			return true
		}
		if err := c.DeleteAllOf(ctx, o, &client.DeleteAllOfOptions{ListOptions: client.ListOptions{Namespace: namespace, Limit: 1000}}); err != nil && (last == nil || err.Error() != last.Error()) {
			fmt.Fprintf(os.Stderr, "  .. waiting for %s, asking again after: %v\n", what, err)
			last = err
		}
		return false
	})
}

func ptr[T any](v T) *T { return &v }

// restart: the helm controller was restarted at --since over N settled
// instances, for the --restart-run'th time; wait until it reconciled them all
// and its queue is empty. Each run's writes (target 0) and peak RSS are judged
// on their own; the time to settle is judged on the runs' median, by the last
// run, from the times the runs before it kept in --restarts-file.
func restart(label string) {
	ctrls := measure.KV(*metrics)
	if len(ctrls) == 0 {
		measure.Check(fmt.Errorf("restart needs --metrics"))
	}
	if *restartsTo == "" || *apiBefore == "" || *restartRun < 1 || *restartRun > measure.Runs {
		measure.Check(fmt.Errorf("restart needs --restarts-file, --apiserver-metrics and a --restart-run from 1 to %d", measure.Runs))
	}
	url := ctrls[0][1]
	t0 := time.Unix(0, *since)
	run := fmt.Sprintf("restart %d/%d", *restartRun, measure.Runs)
	first := *restartRun == 1
	before, err := os.ReadFile(*apiBefore)
	measure.Check(err)
	api0 := measure.ParseMetrics(bytes.NewReader(before))
	var profiled sync.WaitGroup
	if first && *pprofURL != "" && *pprofOut != "" {
		// Where the restart's time goes: its first lists and its reconciles.
		// The bench starts as the controller does (hack/bench.sh), and its
		// profiler serves before its informers start.
		measure.WaitFor("the restarted controller's profiler", time.Minute, func() bool {
			resp, err := http.Get(*pprofURL + "/debug/pprof/") //nolint:gosec // local URL
			if err == nil {
				resp.Body.Close()
			}
			return err == nil && resp.StatusCode == http.StatusOK
		})
		d := 60 * time.Second
		fmt.Printf("  profiling the restarted controller and the API server for the restart's first %.0fs\n", d.Seconds())
		profileBoth(context.Background(), &profiled, d)
	}
	var mu sync.Mutex
	var rec, failed, depth float64
	stop := progress(run, func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("%.0f/%d instances reconciled (%.0f failed), %.0f queued", rec, *n, failed, depth)
	})
	measure.Poll("the restarted controller to settle", 30*time.Minute, measure.ScrapeEvery, func() bool {
		s, err := measure.ScrapeOnly(url, "controller_runtime_reconcile_total", "workqueue_depth")
		if err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		rec = measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller})
		failed = measure.Sum(s, "controller_runtime_reconcile_total", map[string]string{"controller": *controller, "result": "error"})
		depth = measure.Sum(s, "workqueue_depth", map[string]string{"name": *controller})
		return rec >= float64(*n) && depth == 0
	})
	settle := time.Since(t0)
	stop()
	profiled.Wait()
	w := settledWrites(ctrls[:1])
	fmt.Printf("  %s: settled in %.1fs\n", run, settle.Seconds())
	rows := [][]string{
		measure.Report(label, run+": time to settle", fmt.Sprintf("%.1f s", settle.Seconds())),
		measure.Figure(label, run+": writes", float64(w), "", 0, false),
		measure.Report(label, run+": reconciles per instance", fmt.Sprintf("%.2f (%.0f failed)", rec/float64(*n), failed)),
	}
	if first {
		// How the restarted controller filled its caches, as the API server
		// saw it: first lists streamed from the watch cache (WatchList), their
		// waits for the cache to be as fresh as etcd, and any list they fell
		// back to.
		api := apiserverMetrics(context.Background())
		rows = append(rows,
			measure.Report(label, "restart: streamed lists, mean (count) by resource",
				measure.Means(api0, api, "apiserver_watch_list_duration_seconds", "resource")),
			measure.Report(label, "restart: waits for a fresh watch cache, mean (count) by resource",
				measure.Means(api0, api, "apiserver_watch_cache_read_wait_seconds", "resource")),
			measure.Report(label, "restart: the API server's requests, watches aside",
				measure.RequestMix(api0, api, 1)))
	}
	rows = append(rows, rss(label, true)...)
	settles, err := measure.KeepRun(*restartsTo, *restartRun, settle.Seconds())
	measure.Check(err)
	if *restartRun == measure.Runs {
		rows = append(rows, measure.MedianFigure(label, "restart: time to settle", settles, "s", 60, false))
	}
	measure.AppendRows(*results, rows...)
}

// apiserverMetrics scrapes the API server's own metrics.
func apiserverMetrics(ctx context.Context) []measure.Sample {
	return measure.APIServerMetrics(ctx, apiserverConfig())
}

// apiserverMetricsText is the API server's metrics as it serves them.
func apiserverMetricsText(ctx context.Context) []byte {
	return measure.APIServerMetricsText(ctx, apiserverConfig())
}

// apiserverConfig is the client configuration of --kubeconfig.
func apiserverConfig() *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	return cfg
}

// rss reports the peak RSS of each process of --pids, judged against its
// controller's memory limit (--memory-limits) or (a peer's) only reported,
// and the events each controller of --metrics dropped.
func rss(label string, judged bool) [][]string {
	return append(measure.PeakRSS(label, *pids, *memLimits, judged), measure.EventsLost(label, *metrics)...)
}

func writes(ctrls [][2]string) int {
	t := 0
	for _, kv := range ctrls {
		s, err := measure.Scrape(kv[1])
		measure.Check(err)
		t += measure.WriteCount(s)
	}
	return t
}

// settledWrites waits until the controllers' write count holds for 5s.
func settledWrites(ctrls [][2]string) int {
	urls := make([]string, len(ctrls))
	for i, kv := range ctrls {
		urls[i] = kv[1]
	}
	return measure.Settled(urls...)
}

// timed runs work for each of count items on the bench's workers, once the
// machine is quiet, with progress lines of the items done; it returns the wall
// time and adds it, with the CPU every process used meanwhile, to tally.
func timed(what, items string, count int, tally *measure.Tally, work func(i int)) time.Duration {
	measure.Quiet(what)
	var done atomic.Int64
	stop := progress(what, func() string { return fmt.Sprintf("%d/%d %s", done.Load(), count, items) })
	before := cpuTimes()
	start := time.Now()
	measure.Parallel(count, *workers, func(i int) {
		work(i)
		done.Add(1)
	})
	d := time.Since(start)
	stop()
	tally.Add(before, cpuTimes(), d)
	return d
}

// progress prints what every 2s until the returned stop is called.
func progress(what string, status func() string) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(os.Stderr, "  .. %s %5.1fs: %s\n", what, time.Since(start).Seconds(), status())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// watcher counts, from one watch of a kind in one namespace (no polling
// lists), the objects a controller has brought to the end the bench waits for
// (done). The pipeline watches its instances' metadata only: the bench
// decodes little and the API server sends it one event per write, so it takes
// little of the CPU the pipeline it measures shares (it receives nothing
// during the raw creates). A status write shows in an instance's metadata as a
// managedFields entry of the status subresource (statusWritten); the
// controller writes it once the backing object is created (or failed to be:
// countObjects checks).
type watcher struct {
	measure.Seen // the objects done
}

// newWatcher watches the objects of obj's kind (a PartialObjectMetadata for
// metadata only, an Unstructured for whole objects) in namespace.
func newWatcher(ctx context.Context, scheme *runtime.Scheme, obj client.Object, namespace string, done func(client.Object) bool) *watcher {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	measure.Check(err)
	cfg.QPS, cfg.Burst = -1, 0
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}}) // "": every namespace
	measure.Check(err)
	w := &watcher{}
	ii, err := ca.GetInformer(ctx, obj)
	measure.Check(err)
	on := func(o any) {
		if m := o.(client.Object); done(m) {
			w.Mark(m.GetName())
		}
	}
	_, err = ii.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }})
	measure.Check(err)
	go func() { measure.Check(ca.Start(ctx)) }()
	ca.WaitForCacheSync(ctx)
	return w
}

// statusWritten reports whether some manager has written o's status
// subresource.
func statusWritten(o client.Object) bool {
	for _, f := range o.GetManagedFields() {
		if f.Subresource == "status" {
			return true
		}
	}
	return false
}

// createAndWait creates the objects lo to hi-1 (create) on the bench's
// workers, with progress lines, and waits until hi objects are done (what the
// watcher counts, named done in the progress lines): the objects before lo
// were done in earlier rounds. It returns the time from the first create and
// adds it, with the CPU every process used meanwhile, to tally.
func (w *watcher) createAndWait(what, done string, lo, hi int, tally *measure.Tally, create func(i int)) time.Duration {
	var created atomic.Int64
	stop := progress(what, func() string {
		return fmt.Sprintf("%d/%d created, %d/%d %s", created.Load(), hi-lo, w.Len(), hi, done)
	})
	before := cpuTimes()
	start := time.Now()
	measure.Parallel(hi-lo, *workers, func(i int) {
		create(lo + i)
		created.Add(1)
	})
	w.wait(int64(hi), 60*time.Minute)
	d := time.Since(start)
	stop()
	tally.Add(before, cpuTimes(), d)
	return d
}

// wait returns as soon as n instances have a status (at the event that
// makes n, not at a poll after it: a round's time is counted to the event).
func (w *watcher) wait(n int64, timeout time.Duration) {
	if !w.Wait(int(n), timeout) {
		measure.Check(fmt.Errorf("timed out waiting for every instance's status: %d of %d", w.Len(), n))
	}
}
