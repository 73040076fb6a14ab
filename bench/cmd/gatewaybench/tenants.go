package main

// tenants: --tenant-gateways TenantGateways, each in its own tenant namespace
// (tenant-k<run>t<NNNN>, certMode http01, apex t<NNNN>.k<run>.example.org, the
// three passthrough services of upstream's gateway chart) with 10 HTTPRoutes:
// nine in the tenant's namespace, app-0 to app-8.<apex>, and one in its child
// tenant's namespace (<namespace>-apps, attached through the TenantGateway's
// attachedNamespaces), claiming app-0.<apex>, which the parent already holds:
// route-conflicts must give it a HostnameConflict verdict (10% of the routes).
//
// No Gateway API implementation and no cert-manager run here, so nothing
// programs a Gateway or issues a certificate. A tenant is settled when
// everything the four controllers write for it is there, seen through
// watches (events counted, no polling with lists):
//
//   - gateway-listeners: the Gateway with its 13 listeners (http, one HTTPS
//     listener per hostname, the three passthrough ones) and, on the
//     TenantGateway, Ready and ListenersReady for its current generation;
//   - gateway-certs: the Issuer and the 9 Certificates, and CertificatesReady
//     for the current generation;
//   - ns-labels: both namespaces labelled namespace.cozystack.io/gateway=<the
//     tenant's namespace>, and NamespacesAttached for the current generation;
//   - route-conflicts: each of the 10 routes carries its verdict for its
//     current generation, Accepted=True, or False with HostnameConflict for
//     the child's route.
//
// The raw side sends, from 16 unthrottled workers, what the tenant and a
// perfect set of controllers must send for as many tenants, each request of
// the kind and verb the controllers use: the tenant's 13 creates (2
// namespaces, the TenantGateway, 10 routes) and the controllers' 27 writes
// (writesPerTenant): the Gateway and the redirect route (server-side apply,
// gateway-listeners), the Issuer and 9 Certificates (server-side apply,
// gateway-certs), 2 namespace label patches (ns-labels), 10 route status
// updates (route-conflicts) and one status apply of the TenantGateway by each
// of gateway-listeners, gateway-certs and ns-labels. A perfect controller
// writes each object once, with its final content. Its objects are labelled
// rawLabel=true, which the controllers' --watch-label-selector leaves out
// (hack/bench.sh), so no controller acts on them. Efficiency T_raw/T over
// the same 40 requests a tenant, goal >= 0.8; each run has fresh namespaces
// (run k's), so every run asks the controllers for the same work.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cmacme "github.com/cert-manager/cert-manager/pkg/apis/acme/v1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

const (
	// rawLabel marks the raw side's objects; the controllers' watches leave
	// them out (hack/bench.sh starts them with --watch-label-selector
	// bench.cozystack.io/raw!=true).
	rawLabel = "bench.cozystack.io/raw"
	// tenantRoutes a tenant, the last one in its child's namespace.
	tenantRoutes = 10
	// hostsPerTenant: the child's route claims its parent's first hostname.
	hostsPerTenant = tenantRoutes - 1
	// tenantCreates: 2 namespaces, the TenantGateway, 10 routes.
	tenantCreates = 2 + 1 + tenantRoutes
	// writesPerTenant is what a perfect set of controllers writes for one
	// tenant: the Gateway and the redirect route, the Issuer and a
	// Certificate per hostname, 2 namespace labels, a verdict per route and
	// one TenantGateway status write by each of three controllers.
	writesPerTenant = 2 + 1 + hostsPerTenant + 2 + tenantRoutes + 3
	// requestsPerTenant on each side.
	requestsPerTenant = tenantCreates + writesPerTenant
	tenantWorkers     = 16
)

var passthrough = []string{"api", "vm-exportproxy", "cdi-uploadproxy"}

// listenersPerTenant: http, an HTTPS listener per hostname, the passthrough ones.
var listenersPerTenant = 1 + hostsPerTenant + len(passthrough)

// tenantConditions are the TenantGateway conditions each controller owns.
var tenantConditions = []string{gatewayv1alpha1.ConditionReady, gatewayv1alpha1.ConditionListenersReady,
	gatewayv1alpha1.ConditionCertificatesReady, gatewayv1alpha1.ConditionNamespacesAttached}

// tenant names run k's tenant t: its namespace (side "t", or "r" raw), apex
// and child namespace.
func tenant(k, t int, side string) (ns, apex, child string) {
	ns = fmt.Sprintf("tenant-k%d%s%04d", k, side, t)
	return ns, fmt.Sprintf("%s%04d.k%d.example.org", side, t, k), ns + "-apps"
}

func host(apex string, j int) string { return fmt.Sprintf("app-%d.%s", j, apex) }

// settledWatch sees, from watches of every kind the controllers write, the
// parts of run k's tenants that are settled, each part counted once.
type settledWatch struct {
	run atomic.Pointer[followed]
	// cache holds both sides' objects.
	cache cache.Cache
}

// followed is the run a settledWatch counts: its namespaces' prefix, and
// the names seen settled of each part.
type followed struct {
	prefix string
	parts  map[string]*measure.Seen
}

// settledParts and how many of each a tenant has.
var settledParts = map[string]int{
	"gateways": 1, "issuers": 1, "certificates": hostsPerTenant, "namespaces": 2,
	"conditions": len(tenantConditions), "verdicts": tenantRoutes,
}

// The watches take both sides' objects, though only the pipeline's are
// counted: the API server sends every write to each of its watchers, and an
// observer that watched one side only would cost that side alone.
func watchSettled(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) *settledWatch {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme})
	measure.Check(err)
	w := &settledWatch{cache: ca}
	w.run.Store(&followed{prefix: "-"})
	on := func(obj client.Object, mark func(o client.Object, seen func(part, name string))) {
		inf, err := ca.GetInformer(ctx, obj)
		measure.Check(err)
		h := func(o any) {
			run := w.run.Load()
			m, ok := o.(client.Object)
			if !ok || !strings.HasPrefix(m.GetNamespace()+m.GetName(), run.prefix) {
				return
			}
			mark(m, func(part, name string) { run.parts[part].Mark(name) })
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: h, UpdateFunc: func(_, o any) { h(o) }})
		measure.Check(err)
	}
	key := func(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
	on(&gatewayv1.Gateway{}, func(o client.Object, seen func(string, string)) {
		if len(o.(*gatewayv1.Gateway).Spec.Listeners) == listenersPerTenant {
			seen("gateways", key(o))
		}
	})
	on(&cmv1.Issuer{}, func(o client.Object, seen func(string, string)) { seen("issuers", key(o)) })
	on(&cmv1.Certificate{}, func(o client.Object, seen func(string, string)) { seen("certificates", key(o)) })
	on(&corev1.Namespace{}, func(o client.Object, seen func(string, string)) {
		if owner := strings.TrimSuffix(o.GetName(), "-apps"); o.GetLabels()[gatewayv1alpha1.LabelNamespaceGateway] == owner {
			seen("namespaces", o.GetName())
		}
	})
	on(&gatewayv1alpha1.TenantGateway{}, func(o client.Object, seen func(string, string)) {
		tgw := o.(*gatewayv1alpha1.TenantGateway)
		for _, t := range tenantConditions {
			if c := meta.FindStatusCondition(tgw.Status.Conditions, t); c != nil && c.ObservedGeneration == tgw.Generation {
				seen("conditions", key(o)+"/"+t)
			}
		}
	})
	on(&gatewayv1.HTTPRoute{}, func(o client.Object, seen func(string, string)) {
		r := o.(*gatewayv1.HTTPRoute)
		if names.RedirectRoute("cozystack") == r.Name {
			return
		}
		want := metav1.ConditionTrue
		if strings.HasSuffix(r.Namespace, "-apps") {
			want = metav1.ConditionFalse
		}
		for _, p := range r.Status.Parents {
			c := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted))
			if string(p.ControllerName) == ours && c != nil && c.ObservedGeneration == r.Generation && c.Status == want &&
				(want == metav1.ConditionTrue || c.Reason == gatewayv1alpha1.ReasonHostnameConflict) {
				seen("verdicts", key(o))
			}
		}
	})
	go func() { measure.Check(ca.Start(ctx)) }()
	ca.WaitForCacheSync(ctx)
	return w
}

// follow starts counting run k's tenants afresh.
func (w *settledWatch) follow(k int) {
	parts := map[string]*measure.Seen{}
	for p := range settledParts {
		parts[p] = &measure.Seen{}
	}
	w.run.Store(&followed{prefix: fmt.Sprintf("tenant-k%dt", k), parts: parts})
}

// wait returns when every part of n tenants is settled.
func (w *settledWatch) wait(what string, n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	run := w.run.Load()
	for p, per := range settledParts {
		if !run.parts[p].Wait(per*n, time.Until(deadline)) {
			var got []string
			for q, per := range settledParts {
				got = append(got, fmt.Sprintf("%s %d/%d", q, run.parts[q].Len(), per*n))
			}
			fmt.Fprintf(os.Stderr, "timed out waiting for %s: %s\n", what, strings.Join(got, ", "))
			os.Exit(1)
		}
	}
}

// tenantKinds are the kinds of a tenant's objects.
var tenantKinds = []client.ObjectList{&gatewayv1alpha1.TenantGatewayList{}, &gatewayv1.GatewayList{},
	&gatewayv1.HTTPRouteList{}, &cmv1.CertificateList{}, &cmv1.IssuerList{}}

// clearRun deletes the objects of run k's tenants on both sides, so that
// every run starts from the same cluster: the shape is N TenantGateways,
// not N more on top of the runs before. The namespaces stay (a namespace's
// deletion sends the API server a hundred requests). On the pipeline's side
// the tenant deletes its TenantGateway and routes, and the garbage collector
// the objects the TenantGateway controlled, as on a real cluster: deleting
// those too at once would have the controllers, whose caches may still show
// the TenantGateway, make them again. The raw side's objects have no owner
// and are deleted one kind after the other. It returns when the pipeline's
// watches show none of the objects left, and the controllers' writes have
// stopped (what ns-labels undoes, a stray object made from a stale cache),
// and says what each controller wrote meanwhile, a tenant.
func clearRun(ctx context.Context, c client.Client, seen *settledWatch, k, n int, ctrls [][2]string) {
	urls := controllerURLs(ctrls)
	before := measure.Settled(urls...)
	start, ownBefore := time.Now(), scrapeControllers(ctrls)
	measure.Parallel(n, tenantWorkers, func(t int) {
		del := func(obj client.Object, ns string) {
			measure.Check(client.IgnoreNotFound(c.DeleteAllOf(ctx, obj, client.InNamespace(ns))))
		}
		ns, _, child := tenant(k, t, "t")
		del(&gatewayv1alpha1.TenantGateway{}, ns)
		del(&gatewayv1.HTTPRoute{}, child)
		for j := range tenantRoutes - 1 {
			measure.Check(client.IgnoreNotFound(c.Delete(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%d", j)}})))
		}
		ns, _, child = tenant(k, t, "r")
		for _, l := range tenantKinds {
			del(listItem(c, l), ns)
		}
		del(&gatewayv1.HTTPRoute{}, child)
	})
	for {
		left := 0
		for t := range n {
			ns, _, child := tenant(k, t, "t")
			for _, l := range tenantKinds {
				measure.Check(seen.cache.List(ctx, l, client.InNamespace(ns)))
				left += meta.LenList(l)
			}
			l := &gatewayv1.HTTPRouteList{}
			measure.Check(seen.cache.List(ctx, l, client.InNamespace(child)))
			left += meta.LenList(l)
		}
		if left == 0 {
			break
		}
		if time.Since(start) > 10*time.Minute {
			fmt.Fprintf(os.Stderr, "run %d's tenants: %d objects still there after 10 minutes\n", k+1, left)
			os.Exit(1)
		}
		time.Sleep(time.Second)
	}
	took, wrote := time.Since(start), measure.Settled(urls...)-before
	fmt.Printf("  run %d's tenants deleted in %.1fs; the controllers wrote %d times meanwhile\n", k+1, took.Seconds(), wrote)
	ownAfter := scrapeControllers(ctrls)
	for i, kv := range ctrls {
		fmt.Printf("    %s a tenant: %s; %s\n", kv[0],
			measure.Mix(ownBefore[i], ownAfter[i], n, "rest_client_requests_total", "method", "code"),
			measure.Mix(ownBefore[i], ownAfter[i], n, "cozystack_object_writes_total", "kind", "outcome"))
	}
}

// eventMix is the Events in the pipeline side's namespaces of every run,
// a tenant, by reporting controller and reason, most first: which decisions
// the POST events of the request mix recorded.
func eventMix(ctx context.Context, c client.Client, n int) string {
	var mu sync.Mutex
	counts := map[string]int{}
	measure.Parallel(measure.Runs*n, tenantWorkers, func(i int) {
		ns, _, child := tenant(i/n, i%n, "t")
		for _, namespace := range []string{ns, child} {
			var l eventsv1.EventList
			measure.Check(c.List(ctx, &l, client.InNamespace(namespace)))
			mu.Lock()
			for _, e := range l.Items {
				counts[e.ReportingController+" "+e.Reason]++
			}
			mu.Unlock()
		}
	})
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(counts[k])/float64(measure.Runs*n)))
	}
	return strings.Join(parts, ", ")
}

// cpuTimes is the CPU time each process of --pids and --cpu, and the
// bench, used so far.
func cpuTimes() map[string]time.Duration { return measure.ProcessesCPU(*cpu, *pids) }

// controllerURLs are the metrics URLs of ctrls (name, URL).
func controllerURLs(ctrls [][2]string) []string {
	urls := make([]string, len(ctrls))
	for i, kv := range ctrls {
		urls[i] = kv[1]
	}
	return urls
}

// scrapeControllers reads the metrics of each of ctrls (name, URL), in order.
func scrapeControllers(ctrls [][2]string) [][]measure.Sample {
	own := make([][]measure.Sample, len(ctrls))
	for i, kv := range ctrls {
		var err error
		own[i], err = measure.Scrape(kv[1])
		measure.Check(err)
	}
	return own
}

// profileControllers takes a CPU profile of d of each controller of --pprof
// into --pprof-dir, in the background; wg is done when all are saved.
func profileControllers(wg *sync.WaitGroup, d time.Duration) {
	if *pprofDir == "" {
		return
	}
	for _, kv := range measure.KV(*pprofs) {
		wg.Go(func() {
			measure.CPUProfile(kv[1], filepath.Join(*pprofDir, "bench-gateway-"+kv[0]+".cpu.pprof"), d)
		})
	}
}

// listItem is an empty object of the kind of list l.
func listItem(c client.Client, l client.ObjectList) client.Object {
	gvk, err := c.GroupVersionKindFor(l)
	measure.Check(err)
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	o, err := c.Scheme().New(gvk)
	measure.Check(err)
	return o.(client.Object)
}

// createTenant sends the tenant's 13 creates of tenant t of run k on side
// "t" (the pipeline's) or "r" (raw, labelled rawLabel), and returns the
// TenantGateway and the routes.
func createTenant(ctx context.Context, c client.Client, k, t int, side string) (*gatewayv1alpha1.TenantGateway, []*gatewayv1.HTTPRoute) {
	ns, apex, child := tenant(k, t, side)
	extra := map[string]string{}
	if side == "r" {
		extra[rawLabel] = "true"
	}
	withExtra := func(l map[string]string) map[string]string {
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	for _, n := range []string{ns, child} {
		namespace(ctx, c, n, withExtra(map[string]string{gatewayv1alpha1.LabelNamespaceHost: apex}))
	}
	tgw := &gatewayv1alpha1.TenantGateway{
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns, Labels: withExtra(map[string]string{})},
		Spec: gatewayv1alpha1.TenantGatewaySpec{Apex: apex, CertMode: gatewayv1alpha1.CertModeHTTP01,
			AttachedNamespaces: []string{child}, TLSPassthroughServices: passthrough},
	}
	measure.Check(c.Create(ctx, tgw))
	routes := make([]*gatewayv1.HTTPRoute, tenantRoutes)
	for j := range tenantRoutes {
		r := route(ns, fmt.Sprintf("app-%d", j), ns, host(apex, j))
		if j == tenantRoutes-1 {
			r = route(child, "app-0", ns, host(apex, 0))
		}
		r.Labels = withExtra(map[string]string{})
		measure.Check(c.Create(ctx, r))
		routes[j] = r
	}
	return tgw, routes
}

// apply server-side applies obj (typed, its kind from the scheme) as manager.
func apply(ctx context.Context, c client.Client, obj client.Object, manager string, status bool) {
	gvk, err := c.GroupVersionKindFor(obj)
	measure.Check(err)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	measure.Check(err)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	ac := client.ApplyConfigurationFromUnstructured(u)
	if status {
		measure.Check(c.Status().Apply(ctx, ac, client.FieldOwner(manager), client.ForceOwnership))
		return
	}
	measure.Check(c.Apply(ctx, ac, client.FieldOwner(manager), client.ForceOwnership))
}

// rawTenant sends what the tenant and a perfect set of controllers send for
// one tenant: 40 requests (requestsPerTenant).
func rawTenant(ctx context.Context, c client.Client, k, t int) {
	tgw, routes := createTenant(ctx, c, k, t, "r")
	ns, apex, child := tenant(k, t, "r")
	raw := map[string]string{rawLabel: "true"}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: raw}
	}
	// gateway-listeners: the Gateway and the redirect route.
	admit := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSelector),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{gatewayv1alpha1.LabelNamespaceGateway: ns}}}}
	gw := &gatewayv1.Gateway{ObjectMeta: meta(names.Gateway(tgw.Name)), Spec: gatewayv1.GatewaySpec{GatewayClassName: "cilium",
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	for j := range hostsPerTenant {
		h := gatewayv1.Hostname(host(apex, j))
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: gatewayv1.SectionName(names.PerHostListener(string(h))),
			Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: &h, AllowedRoutes: admit,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{
				{Name: gatewayv1.ObjectName(names.PerListenerCertificate(tgw.Name, string(h)))}}}})
	}
	for _, s := range passthrough {
		h := gatewayv1.Hostname(names.PassthroughHostname(s, apex))
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: gatewayv1.SectionName(names.PassthroughListener(s)),
			Port: 443, Protocol: gatewayv1.TLSProtocolType, Hostname: &h, AllowedRoutes: admit,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	}
	apply(ctx, c, gw, "gateway-listeners", false)
	redirect := route(ns, names.RedirectRoute(tgw.Name), ns, "*."+apex)
	redirect.Labels = raw
	redirect.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("http"))
	redirect.Spec.Rules = []gatewayv1.HTTPRouteRule{{Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https"), StatusCode: ptr.To(301)}}}}}
	apply(ctx, c, redirect, "gateway-listeners", false)
	// gateway-certs: the Issuer and a Certificate per hostname.
	gwNS := gatewayv1.Namespace(ns)
	apply(ctx, c, &cmv1.Issuer{ObjectMeta: meta(names.Issuer(tgw.Name)), Spec: cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{
		ACME: &cmacme.ACMEIssuer{Server: "https://acme-v02.api.letsencrypt.org/directory",
			PrivateKey: cmmetav1.SecretKeySelector{LocalObjectReference: cmmetav1.LocalObjectReference{Name: names.ACMEAccountSecret(tgw.Name)}},
			Solvers: []cmacme.ACMEChallengeSolver{{HTTP01: &cmacme.ACMEChallengeSolverHTTP01{GatewayHTTPRoute: &cmacme.ACMEChallengeSolverHTTP01GatewayHTTPRoute{
				ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(names.Gateway(tgw.Name)), Namespace: &gwNS,
					SectionName: ptr.To(gatewayv1.SectionName("http"))}}}}}}}}}}, "gateway-certs", false)
	for j := range hostsPerTenant {
		h := host(apex, j)
		m := meta(names.PerListenerCertificate(tgw.Name, h))
		m.Labels = map[string]string{rawLabel: "true", gatewayv1alpha1.LabelPerListenerCert: "true"}
		apply(ctx, c, &cmv1.Certificate{ObjectMeta: m, Spec: cmv1.CertificateSpec{SecretName: m.Name, DNSNames: []string{h},
			IssuerRef: cmmetav1.IssuerReference{Name: names.Issuer(tgw.Name), Kind: "Issuer"}}}, "gateway-certs", false)
	}
	// ns-labels: the two namespaces' labels.
	for _, n := range []string{ns, child} {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q},"annotations":{%q:%q}}}`,
			gatewayv1alpha1.LabelNamespaceGateway, ns, gatewayv1alpha1.AnnotationAttachedBy, ns)
		measure.Check(c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, client.RawPatch(types.MergePatchType, []byte(patch))))
	}
	// route-conflicts: a verdict per route, an update at the version created.
	for j, r := range routes {
		cond := metav1.Condition{Type: string(gatewayv1.RouteConditionAccepted), Status: metav1.ConditionTrue,
			Reason: string(gatewayv1.RouteReasonAccepted), Message: "no route in another namespace takes precedence for its hostnames",
			ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now()}
		if j == tenantRoutes-1 {
			cond.Status, cond.Reason = metav1.ConditionFalse, gatewayv1alpha1.ReasonHostnameConflict
			cond.Message = "hostname conflict: " + host(apex, 0) + " is served by HTTPRoute " + ns + "/app-0"
		}
		r.Status.Parents = []gatewayv1.RouteParentStatus{{ParentRef: r.Spec.ParentRefs[0], ControllerName: ours, Conditions: []metav1.Condition{cond}}}
		measure.Check(c.Status().Update(ctx, r))
	}
	// A status apply of the TenantGateway by each of three controllers.
	for _, s := range []struct {
		manager string
		types   []string
	}{
		{"gateway-listeners", []string{gatewayv1alpha1.ConditionReady, gatewayv1alpha1.ConditionListenersReady}},
		{"gateway-certs", []string{gatewayv1alpha1.ConditionCertificatesReady}},
		{"ns-labels", []string{gatewayv1alpha1.ConditionNamespacesAttached}},
	} {
		st := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Name: tgw.Name, Namespace: ns}}
		for _, t := range s.types {
			st.Status.Conditions = append(st.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: "Progressing",
				Message: "waiting for the Gateway's implementation", ObservedGeneration: tgw.Generation, LastTransitionTime: metav1.Now()})
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
		measure.Check(err)
		obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": tgw.Name, "namespace": ns}, "status": u["status"]}}
		obj.SetGroupVersionKind(gatewayv1alpha1.GroupVersion.WithKind("TenantGateway"))
		measure.Check(c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(s.manager), client.ForceOwnership))
	}
}

// tenantGateways measures --tenant-gateways tenants settling against the raw
// side, measure.Runs runs in turns, and returns its rows: beside the times,
// where the pipeline's requests went a tenant, over all runs, as the API
// server counted them (the tenant's creates among them) and as each of ctrls
// (name, metrics URL) counted its own: its requests by method and code (its
// POSTs are its events, a 409 a write refused on a stale version) and the
// objects it wrote by kind and outcome (writemetric; the TenantGateway status
// writes are not among them).
func tenantGateways(ctx context.Context, cfg *rest.Config, c client.Client, seen *settledWatch, ctrls [][2]string) [][]string {
	n := *tenants
	urls := controllerURLs(ctrls)
	scrape := func() (api []measure.Sample, own [][]measure.Sample) {
		return measure.APIServerMetrics(ctx, cfg), scrapeControllers(ctrls)
	}
	var api []measure.Sample
	own := make([][]measure.Sample, len(ctrls))
	label := fmt.Sprintf("gateway, %d TenantGateways", n)
	fmt.Printf("== %s: %d routes each (one a hostname conflict), %d requests a tenant on each side (%d the tenant's, %d the controllers'), %d runs; %d unthrottled workers\n",
		label, tenantRoutes, requestsPerTenant, tenantCreates, writesPerTenant, measure.Runs, tenantWorkers)
	var writesPer []float64
	var rawCPU, pipeCPU measure.Tally
	var profiled sync.WaitGroup
	defer profiled.Wait()
	prepare := func(k int) {
		if k > 0 {
			clearRun(ctx, c, seen, k-1, n, ctrls)
		}
	}
	raws, pipes := measure.InTurns("tenant gateways", prepare, func(k int) time.Duration {
		measure.Quiet(fmt.Sprintf("raw tenants, run %d", k+1))
		start, cpuBefore := time.Now(), cpuTimes()
		measure.Parallel(n, tenantWorkers, func(t int) { rawTenant(ctx, c, k, t) })
		d := time.Since(start)
		rawCPU.Add(cpuBefore, cpuTimes(), d)
		return d
	}, func(k int) time.Duration {
		what := fmt.Sprintf("tenant gateways settled, run %d", k+1)
		before := measure.Settled(urls...)
		seen.follow(k)
		measure.Quiet(what)
		apiBefore, ownBefore := scrape()
		if k == 1 {
			profileControllers(&profiled, time.Minute)
		}
		start, cpuBefore := time.Now(), cpuTimes()
		measure.Parallel(n, tenantWorkers, func(t int) { createTenant(ctx, c, k, t, "t") })
		seen.wait(what, n, 30*time.Minute)
		d := time.Since(start)
		pipeCPU.Add(cpuBefore, cpuTimes(), d)
		writesPer = append(writesPer, float64(measure.Settled(urls...)-before)/float64(n))
		apiAfter, ownAfter := scrape()
		api = measure.AddDelta(api, apiBefore, apiAfter)
		for i := range ctrls {
			own[i] = measure.AddDelta(own[i], ownBefore[i], ownAfter[i])
		}
		return d
	})
	rows := [][]string{
		measure.Report(label, "tenant gateways: raw requests, each run", measure.Durations(raws)),
		measure.Report(label, "tenant gateways: first create to all settled, each run", measure.Durations(pipes)),
		measure.MedianFigure(label, fmt.Sprintf("tenant gateways efficiency T_raw/T (%d requests a tenant)", requestsPerTenant),
			measure.RunEfficiencies(1, raws, pipes), "", *target, true),
		measure.Report(label, fmt.Sprintf("tenant gateways: controller writes a tenant, each run (a perfect set: %d)", writesPerTenant), measure.Floats(writesPer)),
		measure.Report(label, "tenant gateways: CPU seconds during the raw runs", rawCPU.Format(goruntime.NumCPU())),
		measure.Report(label, "tenant gateways: CPU seconds during the pipeline's runs", pipeCPU.Format(goruntime.NumCPU())),
		measure.Report(label, "tenant gateways: API requests a tenant, watches aside", measure.RequestMix(nil, api, measure.Runs*n)),
	}
	rows = append(rows, measure.Report(label, "tenant gateways: events a tenant, by controller and reason", eventMix(ctx, c, n)))
	for i, kv := range ctrls {
		rows = append(rows, measure.Report(label, "tenant gateways: "+kv[0]+" a tenant, requests by method, code; objects written by kind, outcome",
			measure.Mix(nil, own[i], measure.Runs*n, "rest_client_requests_total", "method", "code")+"; "+
				measure.Mix(nil, own[i], measure.Runs*n, "cozystack_object_writes_total", "kind", "outcome")))
	}
	return rows
}
