// Package controller writes hostname-conflict verdicts on the routes attached
// to each TenantGateway's Gateway.
package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/route-conflicts/internal/verdicts"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/ownwrite"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// indexOurParents indexes routes by the Gateways ("<namespace>/<name>") our
// status.parents entries refer to, so that a route that left a Gateway is
// found to have its entry removed.
const indexOurParents = "status.parents.ours"

// CacheTrims are the fields of cached objects this controller never reads
// (gatewayruntime.Trim): the listeners a TenantGateway's status reports, and
// the rules of routes (a status update takes nothing but the status from the
// object it sends); and the strings cached objects repeat are kept once.
var CacheTrims = []gatewayruntime.Trim{gatewayruntime.TrimTenantGatewayListeners, gatewayruntime.TrimRoutes(false),
	gatewayruntime.ShareStrings}

// Reconciler keeps our status.parents entries on the routes of one
// TenantGateway's Gateway.
type Reconciler struct {
	// Base's APIReader reads a route afresh when its cached copy is stale:
	// status.parents is an atomic list, so it is updated with the
	// resourceVersion it was read at. Its events are the verdicts, on the
	// routes.
	gatewayruntime.Base
	// written remembers our last write of each route's status: while the
	// cache still shows the route as it was before, that write, not the
	// cached copy, is the route (pkg/ownwrite).
	written ownwrite.Writes[routeKey, ownWrite]
	// writers is how many route statuses one reconcile writes at once (the
	// controller's workers).
	writers int
	// DeletionWindow is how long the deletion of a TenantGateway or a route
	// waits for the deletions that follow it before the verdicts it changes
	// are written (gatewayruntime.Held; 0: none).
	DeletionWindow time.Duration
	// BatchWindow is how long any other change waits for the changes that
	// follow it (gatewayruntime.Held; 0: none).
	BatchWindow time.Duration
}

// DefaultBatchWindow is BatchWindow unless set. A reconcile decides the
// verdicts of every route of its Gateway: acted on change by change, a burst
// of routes (a tenant's chart, thousands migrated at once) had all of them
// decided again and again, back to back, while it went on. Held for a tenth
// of a second (at most ten windows, a second, while the burst goes on), the
// burst's routes share reconciles.
const DefaultBatchWindow = 100 * time.Millisecond

// DefaultDeletionWindow is DeletionWindow unless set. A tenant's
// TenantGateway and routes go together (its namespace deleted, its apps
// uninstalled): acted on at once, the TenantGateway's deletion would
// withdraw the verdict of every route a moment before the route itself
// goes, a status write for each. Held for a second, the deletions of a
// burst make one reconcile, which finds the routes gone. A conflict that a
// deleted route resolves is decided a second later.
const DefaultDeletionWindow = time.Second

// routeKey names a route for the writes remembered.
type routeKey struct{ kind, namespace, name string }

// ownWrite is a route's status.parents as our write left them, at the
// resourceVersion the write made.
type ownWrite struct {
	version string
	parents []gatewayv1.RouteParentStatus
}

// SetupWithManager registers the indexes and watches TenantGateways, routes
// (by the Gateways their spec and our entries name) and namespaces (their
// gateway label decides which routes are attached). A reconcile writes up to
// workers routes' statuses at once. The deletion of a TenantGateway or a
// route is held until DeletionWindow passes with no other deletion for the
// same Gateway, any other change until BatchWindow passes with no other
// change (gatewayruntime.Held).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.writers = workers
	changes, deletions := gatewayruntime.NewBatch(r.BatchWindow), gatewayruntime.NewBatch(r.DeletionWindow)
	held := func(h handler.EventHandler) handler.EventHandler { return gatewayruntime.Held(changes, deletions, h) }
	ctx := context.Background()
	if err := gatewayruntime.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	for _, obj := range []client.Object{&gatewayv1.HTTPRoute{}, &gatewayv1.TLSRoute{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, indexOurParents, func(o client.Object) []string {
			return ourParents(o)
		}); err != nil {
			return fmt.Errorf("indexing routes by status: %w", err)
		}
	}
	routeEvents := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		keys := append(gatewayruntime.ParentGateways(o.GetNamespace(), gatewayruntime.RouteParentRefs(o)), ourParents(o)...)
		seen := map[string]bool{}
		var out []reconcile.Request
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			ns, name, _ := strings.Cut(k, "/")
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("route-conflicts").
		Watches(&gatewayv1alpha1.TenantGateway{}, held(&handler.EnqueueRequestForObject{}),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&gatewayv1.HTTPRoute{}, held(routeEvents)).
		Watches(&gatewayv1.TLSRoute{}, held(routeEvents)).
		Watches(&corev1.Namespace{}, held(gatewayruntime.NamespaceToTenantGateways(mgr.GetClient())),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// ourParents lists the Gateways our status entries on a route refer to.
func ourParents(o client.Object) []string {
	var out []string
	for _, p := range gatewayruntime.RouteParents(o) {
		if string(p.ControllerName) == gatewayv1alpha1.RouteConflictControllerName {
			out = append(out, gatewayruntime.ParentGateways(o.GetNamespace(), []gatewayv1.ParentReference{p.ParentRef})...)
		}
	}
	return out
}

// Reconcile decides the verdicts for the routes of one Gateway (named after
// the TenantGateway req) and brings every route's entry to its verdict; routes
// that carry an entry but are no longer attached lose it, and when the
// TenantGateway is gone, every entry for its Gateway goes. Every error here
// is an API error, retried (pkg/reconcileerr).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// No outcome of this controller is Foreign: no recheck interval.
	return reconcileerr.Result(r.reconcile(ctx, req), 0)
}

// reconcile decides the verdicts (plan), then writes each route's entry.
func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) error {
	gwNS, gwName := req.Namespace, names.Gateway(req.Name)
	byRoute := map[tenantgateway.RouteKey]verdicts.Verdict{}
	var tgw gatewayv1alpha1.TenantGateway
	err := r.Client.Get(ctx, req.NamespacedName, &tgw)
	switch {
	case client.IgnoreNotFound(err) != nil:
		return err
	case err == nil && tgw.DeletionTimestamp.IsZero():
		attached, err := gatewayruntime.AttachedRoutes(ctx, r.Client, &tgw)
		if err != nil {
			return err
		}
		refs := make([]tenantgateway.RouteRef, len(attached))
		for i, rt := range attached {
			refs[i] = rt.Ref()
		}
		byRoute = verdicts.ResolveConflicts(refs)
		for k, v := range byRoute {
			log.FromContext(ctx).V(1).Info("verdict", "route", k.String(), "accepted", v.Accepted, "reason", v.Reason, "message", v.Message)
		}
	}

	candidates, err := r.candidates(ctx, gwNS+"/"+gwName)
	if err != nil {
		return err
	}
	// The routes' statuses are written side by side, up to one per worker:
	// one Gateway's routes are one reconcile, and a Gateway of thousands
	// written one after the other would wait on as many round trips.
	errs := make([]error, len(candidates))
	slots := make(chan struct{}, max(r.writers, 1))
	var wg sync.WaitGroup
	for i, rt := range candidates {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = r.writeVerdict(ctx, rt, gwNS, gwName, byRoute)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// candidates are the routes whose spec or whose status (our entries) name
// the Gateway key, as the cache holds them: not copied, so read only
// (writeVerdict copies the ones it writes).
func (r *Reconciler) candidates(ctx context.Context, key string) ([]client.Object, error) {
	seen := map[string]bool{}
	var out []client.Object
	add := func(kind string, o client.Object) {
		k := kind + " " + o.GetNamespace() + "/" + o.GetName()
		if !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	for _, index := range []string{gatewayruntime.IndexParentGateway, indexOurParents} {
		var https gatewayv1.HTTPRouteList
		if err := r.Client.List(ctx, &https, client.MatchingFields{index: key}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing HTTPRoutes: %w", err)
		}
		for i := range https.Items {
			add(tenantgateway.KindHTTPRoute, &https.Items[i])
		}
		var tlss gatewayv1.TLSRouteList
		if err := r.Client.List(ctx, &tlss, client.MatchingFields{index: key}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing TLSRoutes: %w", err)
		}
		for i := range tlss.Items {
			add(tenantgateway.KindTLSRoute, &tlss.Items[i])
		}
	}
	return out, nil
}

// writeVerdict brings our entries on one route to its verdict (none when it
// has no verdict: not attached, or a cert-manager solver route).
func (r *Reconciler) writeVerdict(ctx context.Context, cached client.Object, gwNS, gwName string,
	byRoute map[tenantgateway.RouteKey]verdicts.Verdict) error {
	kind := tenantgateway.KindHTTPRoute
	if _, ok := cached.(*gatewayv1.TLSRoute); ok {
		kind = tenantgateway.KindTLSRoute
	}
	desired := func(o client.Object) ([]gatewayv1.RouteParentStatus, bool) {
		var refs []gatewayv1.ParentReference
		var cond *metav1.Condition
		if v, ok := byRoute[tenantgateway.RouteKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}]; ok {
			c := verdicts.AcceptedCondition(v, o.GetGeneration())
			cond = &c
			for _, ref := range gatewayruntime.RouteParentRefs(o) {
				if tenantgateway.ParentRef(ref).NamesGateway(o.GetNamespace(), gwNS, gwName) {
					refs = append(refs, ref)
				}
			}
		}
		return verdicts.RewriteRouteParents(gatewayruntime.RouteParents(o), o.GetNamespace(), gwNS, gwName, refs, cond, metav1.Now())
	}
	// The list is atomic: it is written with the resourceVersion it was read
	// at, so others' entries are never lost. The cached copy is tried first,
	// or our own last write when the cache has not caught up with it yet (the
	// cached copy would be refused); when it is stale the API server refuses
	// the write and the route is read afresh.
	refused := false // our verdict before the write was a conflict
	write := func(o client.Object) (bool, error) {
		parents, changed := desired(o)
		if !changed {
			return false, nil
		}
		refused = verdicts.WasRefused(gatewayruntime.RouteParents(o), o.GetNamespace(), gwNS, gwName)
		if len(gatewayruntime.RouteParents(o))+1 > verdicts.MaxRouteParents && len(parents) == verdicts.MaxRouteParents {
			log.FromContext(ctx).Info("route status is full; our entry may be incomplete", "route", client.ObjectKeyFromObject(o))
		}
		setRouteParents(o, parents)
		return true, r.Client.Status().Update(ctx, o)
	}
	key := routeKey{kind: kind, namespace: cached.GetNamespace(), name: cached.GetName()}
	o := cached
	if own, behind := r.written.Behind(key, cached.GetResourceVersion()); behind {
		o = cached.DeepCopyObject().(client.Object)
		setRouteParents(o, own.parents)
		o.SetResourceVersion(own.version)
	}
	if _, changed := desired(o); !changed {
		return nil
	}
	if o == cached {
		// cached is the cache's own object: write a copy.
		o = cached.DeepCopyObject().(client.Object)
	}
	wrote, err := write(o)
	if apierrors.IsConflict(err) {
		o = cached.DeepCopyObject().(client.Object)
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), o); err != nil {
			if apierrors.IsNotFound(err) {
				r.written.Forget(key)
			}
			return client.IgnoreNotFound(err)
		}
		wrote, err = write(o)
	}
	if apierrors.IsNotFound(err) {
		r.written.Forget(key)
	}
	if err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing the status of %s %s/%s: %w", kind, cached.GetNamespace(), cached.GetName(), err))
	}
	if !wrote {
		return nil
	}
	// Until the cache shows another version than the one this decision was
	// made on, the route is what this write left.
	r.written.Wrote(key, cached.GetResourceVersion(), o.GetResourceVersion(), ownWrite{version: o.GetResourceVersion(), parents: gatewayruntime.RouteParents(o)})
	writemetric.Count(r.Name, kind, writemetric.Status)
	v, ok := byRoute[tenantgateway.RouteKey{Kind: kind, Namespace: cached.GetNamespace(), Name: cached.GetName()}]
	why := "the route no longer attaches to Gateway " + gwNS + "/" + gwName + ": our entry removed"
	ev := r.Events()
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: gwNS, Name: gwName}}
	switch {
	case ok && !v.Accepted:
		why = v.Message
		ev.Warning(cached, gw, gatewayv1alpha1.ReasonHostnameConflict, "Verdict", fmt.Sprintf("Gateway %s/%s: %s", gwNS, gwName, v.Message))
	case ok:
		why = "no other namespace claims its hostnames"
		if refused {
			// A first acceptance is in the route's status only, as every
			// Gateway implementation reports one: an event each would
			// double the requests a route costs.
			ev.Normal(cached, gw, gatewayv1alpha1.EventRouteAccepted, "Verdict", fmt.Sprintf("Gateway %s/%s: accepted; %s", gwNS, gwName, why))
		}
	}
	log.FromContext(ctx).Info("verdict written", "kind", kind, "route", client.ObjectKeyFromObject(cached), "accepted", ok && v.Accepted, "why", why)
	return nil
}

// setRouteParents sets status.parents of an HTTPRoute or TLSRoute.
func setRouteParents(o client.Object, parents []gatewayv1.RouteParentStatus) {
	switch rt := o.(type) {
	case *gatewayv1.HTTPRoute:
		rt.Status.Parents = parents
	case *gatewayv1.TLSRoute:
		rt.Status.Parents = parents
	}
}
