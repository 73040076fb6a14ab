// Command gatewaybench measures the gateway controllers against the
// performance budget of the design, on a running control plane with the four
// gateway controllers (hack/bench.sh sets that up), and prints each figure:
//
//   - convergence: a TenantGateway (HTTP-01) gets 60 routes; the time until
//     its Gateway has the 64 listeners, gateway-certs has created the 60
//     Certificates and route-conflicts has written the 60 verdicts;
//   - conflicts: 5,000 routes on one Gateway from 50 namespaces, a fifth of
//     them claiming another namespace's hostname; the time until every route
//     carries its verdict, next to the time it took to create them;
//   - tenant gateways: --tenant-gateways TenantGateways with 10 routes each,
//     a tenth of them hostname conflicts, until every Gateway, Certificate,
//     namespace label, TenantGateway condition and route verdict is settled,
//     against the same requests sent raw (tenants.go);
//   - memory: each controller's peak resident set (VmHWM);
//   - idle (--phase idle, the controllers restarted with --resync-period
//     --resync over everything the first phase settled): API writes of the
//     four controllers over two resync periods (target 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

var (
	kubeconfig = flag.String("kubeconfig", "", "kubeconfig of the control plane")
	routes     = flag.Int("routes", 5000, "routes of the conflicts figure")
	qps        = flag.Float64("qps", -1, "client QPS of the benchmark's own requests (-1: unthrottled)")
	results    = flag.String("results", "", "append the figures to this file, tab-separated")
	target     = flag.Float64("target", 0.8, "target of route-conflicts' throughput over the raw status-update throughput")
	metrics    = flag.String("metrics", "", "comma-separated name=URL of the controllers' metrics endpoints")
	pids       = flag.String("pids", "", "comma-separated name=pid of the controllers")
	cpu        = flag.String("cpu", "", "name=pid,... of more processes (the API server, etcd) whose CPU time the tenant gateways' runs report, beside the controllers' and the bench's own")
	memLimits  = flag.String("memory-limits", "", "comma-separated controller=MiB: each controller's container memory limit (its chart's), which its peak RSS is judged against")
	resync     = flag.Duration("resync", 30*time.Second, "the controllers' --resync-period (--phase idle)")
	tenants    = flag.Int("tenant-gateways", 1000, "TenantGateways of the tenant gateways figure (0 skips it)")
	pprofs     = flag.String("pprof", "", "comma-separated name=URL of the controllers' pprof endpoints: CPU profiles of each over the first minute of the tenant gateways' second run")
	pprofDir   = flag.String("pprof-dir", "", "where those profiles go, as bench-gateway-<name>.cpu.pprof")
	phase      = flag.String("phase", "work", "work: convergence, conflicts, tenant gateways and peak RSS; idle: the controllers' writes over two resync periods")
)

const ours = gatewayv1alpha1.RouteConflictControllerName

func main() {
	flag.Parse()
	cfg, scheme, c := measure.Client(*kubeconfig, float32(*qps), max(int(2**qps), 0), gatewayv1.Install, cmv1.AddToScheme, gatewayv1alpha1.AddToScheme, eventsv1.AddToScheme)
	ctx := context.Background()

	urls := controllerURLs(measure.KV(*metrics))
	var rows [][]string
	if *phase == "idle" {
		rows = idle(urls)
	} else {
		convergence(ctx, c)
		rows = conflicts(ctx, c, watchVerdicts(ctx, cfg, scheme))
		if *tenants > 0 {
			rows = append(rows, tenantGateways(ctx, cfg, c, watchSettled(ctx, cfg, scheme), measure.KV(*metrics))...)
		}
		label := fmt.Sprintf("gateway, %d routes", *routes)
		rows = append(rows, measure.PeakRSS(label, *pids, *memLimits, true)...)
		rows = append(rows, measure.EventsLost(label, *metrics)...)
	}
	measure.AppendRows(*results, rows...)
	if measure.Missed(rows) {
		fmt.Println("  a figure missed its goal")
		os.Exit(2)
	}
}

// idle: the controllers' writes over two resync periods (and a fifth, for
// the resync's jitter) once their writes hold still.
func idle(urls []string) [][]string {
	before := measure.Settled(urls...)
	window := 2**resync + *resync/5
	time.Sleep(window)
	w := measure.Settled(urls...) - before
	return [][]string{measure.Figure(fmt.Sprintf("gateway, resync %s, everything settled", *resync),
		fmt.Sprintf("idle: writes of the gateway controllers over %s", window), float64(w), "", 0, false)}
}

// convergence: one TenantGateway, 60 routes in its namespace.
func convergence(ctx context.Context, c client.Client) {
	const ns, n = "bench-gw60", 60
	namespace(ctx, c, ns, nil)
	tenantGateway(ctx, c, ns, "example.org")
	start := time.Now()
	measure.Parallel(n, 8, func(i int) {
		measure.Check(c.Create(ctx, route(ns, fmt.Sprintf("app-%02d", i), ns, fmt.Sprintf("app-%02d.example.org", i))))
	})
	measure.WaitFor("64 listeners, 60 certificates and 60 verdicts", 5*time.Minute, func() bool {
		var gw gatewayv1.Gateway
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cozystack"}, &gw); err != nil || len(gw.Spec.Listeners) != n+4 {
			return false
		}
		var certs cmv1.CertificateList
		measure.Check(c.List(ctx, &certs, client.InNamespace(ns), client.MatchingLabels{gatewayv1alpha1.LabelPerListenerCert: "true"}))
		return len(certs.Items) == n && verdicts(ctx, c, ns) == n
	})
	fmt.Printf("convergence: a TenantGateway with %d routes has its 64 listeners, %d certificates and %d verdicts %.1fs after the routes were created\n",
		n, n, n, time.Since(start).Seconds())
}

// conflicts: 5,000 routes from 50 namespaces on one Gateway, three runs in
// turns with the same requests sent raw; before each run after the first,
// the last run's routes (on both sides) are deleted, so that every run
// starts from the same Gateway with no route.
func conflicts(ctx context.Context, c client.Client, seen *verdictWatch) [][]string {
	const owner, spaces = "bench-rc", 50
	namespace(ctx, c, owner, nil)
	for i := range spaces {
		namespace(ctx, c, fmt.Sprintf("bench-rc-%02d", i), map[string]string{gatewayv1alpha1.LabelNamespaceGateway: owner})
	}
	tenantGateway(ctx, c, owner, "example.net")
	prepare := func(k int) {
		if k == 0 {
			return
		}
		for i := range spaces {
			measure.Check(c.DeleteAllOf(ctx, &gatewayv1.HTTPRoute{}, client.InNamespace(fmt.Sprintf("bench-rc-%02d", i))))
		}
	}
	var together, phased []time.Duration
	var rawCPU, pipeCPU measure.Tally
	raws, pipes := measure.InTurns("route-conflicts", prepare, func(k int) time.Duration {
		// The same requests sent raw, on routes labelled rawLabel, which
		// the controllers' watches leave out: a write to a route they
		// watch would make them work meanwhile, and on a machine of two
		// cores slow the raw side with their CPU. Sent two ways, the API
		// server's capacity being the faster of the two: side by side, as
		// the pipeline sends them (one phase after the other leaves the API
		// server the idle moments the pipeline fills), and one phase after
		// the other (32 writers at once may cost a machine of two cores
		// more than 16 do).
		measure.Quiet(fmt.Sprintf("the raw routes, side by side, run %d", k+1))
		cpuBefore := cpuTimes()
		t := rawRoutes(ctx, c, owner, spaces, fmt.Sprintf("raw%d", k), true)
		rawCPU.Add(cpuBefore, cpuTimes(), t)
		measure.Quiet(fmt.Sprintf("the raw routes, one phase after the other, run %d", k+1))
		p := rawRoutes(ctx, c, owner, spaces, fmt.Sprintf("rawp%d", k), false)
		together, phased = append(together, t), append(phased, p)
		fmt.Printf("conflicts: raw, %d routes created and their status updated in %.1fs side by side, %.1fs one phase after the other\n",
			*routes, t.Seconds(), p.Seconds())
		return min(t, p)
	}, func(k int) time.Duration {
		measure.Quiet(fmt.Sprintf("the routes, run %d", k+1))
		start, cpuBefore := time.Now(), cpuTimes()
		measure.Parallel(*routes, 16, func(i int) {
			host := i
			if i%5 == 0 {
				host = i + 1 // the next route, in the next namespace, claims it too
			}
			measure.Check(c.Create(ctx, route(fmt.Sprintf("bench-rc-%02d", i%spaces), fmt.Sprintf("r%d-%05d", k, i), owner,
				fmt.Sprintf("h%d-%05d.example.net", k, host))))
		})
		created := time.Since(start)
		measure.WaitFor("every route's verdict", 15*time.Minute, func() bool { return seen.n.Load() == int64((k+1)**routes) })
		all := time.Since(start)
		pipeCPU.Add(cpuBefore, cpuTimes(), all)
		fmt.Printf("conflicts: %d routes created in %.1fs (%.0f/s); all carry their verdict after %.1fs (%.0f routes/s)\n",
			*routes, created.Seconds(), float64(*routes)/created.Seconds(), all.Seconds(), float64(*routes)/all.Seconds())
		return all
	})
	label := fmt.Sprintf("gateway, %d routes", *routes)
	return [][]string{
		measure.Report(label, "route-conflicts verdicts, all routes, each run", measure.Durations(pipes)),
		measure.Report(label, "raw creates and status updates side by side, each run", measure.Durations(together)),
		measure.Report(label, "raw creates, then status updates, each run", measure.Durations(phased)),
		measure.Report(label, "route-conflicts: CPU seconds during the raw runs (side by side)", rawCPU.Format(goruntime.NumCPU())),
		measure.Report(label, "route-conflicts: CPU seconds during the pipeline's runs", pipeCPU.Format(goruntime.NumCPU())),
		// The pipeline is one create and one status write per route.
		measure.MedianFigure(label, "route-conflicts efficiency T_raw/T (T_raw the faster way)",
			measure.RunEfficiencies(1, raws, pipes), "", *target, true),
	}
}

// rawRoutes creates the routes' raw twins, named prefix-<i>, and updates
// each one's status as route-conflicts would: 16 unthrottled workers create
// while 16 others update the status of each route created (sideBySide), or
// the 16 create them all and then update them all. It returns the time
// from the first create to the last status update.
func rawRoutes(ctx context.Context, c client.Client, owner string, spaces int, prefix string, sideBySide bool) time.Duration {
	made := make(chan *gatewayv1.HTTPRoute, *routes)
	setStatus := func(r *gatewayv1.HTTPRoute) {
		r.Status.Parents = []gatewayv1.RouteParentStatus{{
			ParentRef: r.Spec.ParentRefs[0], ControllerName: ours,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
				Message:            "no route in another namespace takes precedence for its hostnames",
				LastTransitionTime: metav1.Now(), ObservedGeneration: r.Generation}}}}
		measure.Check(c.Status().Update(ctx, r))
	}
	var statuses sync.WaitGroup
	start := time.Now()
	if sideBySide {
		for range 16 {
			statuses.Go(func() {
				for r := range made {
					setStatus(r)
				}
			})
		}
	}
	measure.Parallel(*routes, 16, func(i int) {
		r := route(fmt.Sprintf("bench-rc-%02d", i%spaces), fmt.Sprintf("%s-%05d", prefix, i), owner, fmt.Sprintf("%s-%05d.example.net", prefix, i))
		r.Labels = map[string]string{rawLabel: "true"}
		measure.Check(c.Create(ctx, r))
		made <- r
	})
	close(made)
	if !sideBySide {
		all := make([]*gatewayv1.HTTPRoute, 0, *routes)
		for r := range made {
			all = append(all, r)
		}
		measure.Parallel(len(all), 16, func(i int) { setStatus(all[i]) })
	}
	statuses.Wait()
	return time.Since(start)
}

// verdictWatch counts, from a watch, the conflicts routes (not their raw twins)
// that carry route-conflicts' verdict: listing 5,000 routes over and over would
// load the API server whose capacity the figure is compared with.
type verdictWatch struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]bool
	n    atomic.Int64
}

func watchVerdicts(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) *verdictWatch {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme})
	measure.Check(err)
	inf, err := ca.GetInformer(ctx, &gatewayv1.HTTPRoute{})
	measure.Check(err)
	w := &verdictWatch{seen: map[types.NamespacedName]bool{}}
	mark := func(o any) {
		r, ok := o.(*gatewayv1.HTTPRoute)
		if !ok || !strings.HasPrefix(r.Namespace, "bench-rc-") || r.Labels[rawLabel] == "true" || !hasVerdict(r) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if k := client.ObjectKeyFromObject(r); !w.seen[k] {
			w.seen[k] = true
			w.n.Add(1)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: mark, UpdateFunc: func(_, o any) { mark(o) }})
	measure.Check(err)
	go func() { measure.Check(ca.Start(ctx)) }()
	ca.WaitForCacheSync(ctx)
	return w
}

func hasVerdict(r *gatewayv1.HTTPRoute) bool {
	for _, p := range r.Status.Parents {
		if string(p.ControllerName) == ours {
			return true
		}
	}
	return false
}

func verdicts(ctx context.Context, c client.Client, ns string) int {
	var list gatewayv1.HTTPRouteList
	measure.Check(c.List(ctx, &list, client.InNamespace(ns)))
	k := 0
	for i := range list.Items {
		if hasVerdict(&list.Items[i]) {
			k++
		}
	}
	return k
}

func namespace(ctx context.Context, c client.Client, name string, labels map[string]string) {
	measure.Check(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
}

func tenantGateway(ctx context.Context, c client.Client, ns, apex string) {
	measure.Check(c.Create(ctx, &gatewayv1alpha1.TenantGateway{
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: apex,
			// As upstream's gateway chart: three passthrough listeners, so 60
			// routes make the 64 listeners Gateway API allows.
			TLSPassthroughServices: []string{"api", "vm-exportproxy", "cdi-uploadproxy"}},
	}))
}

func route(ns, name, gatewayNS, hostname string) *gatewayv1.HTTPRoute {
	gwNS := gatewayv1.Namespace(gatewayNS)
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "cozystack", Namespace: &gwNS}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(hostname)},
		},
	}
}
