// Package controller reconciles TenantGateways into their Gateway and
// redirect HTTPRoute. The decisions are the pure functions of
// internal/gateway; this package reads their inputs from the cache, applies
// their results and reports.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/gateway-listeners/internal/gateway"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/phase"
	"github.com/cozyplane/cozyplane/pkg/readymetric"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

var (
	gatewayGVK   = gatewayv1.SchemeGroupVersion.WithKind("Gateway")
	httpRouteGVK = gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute")
)

// CacheTrims keep the cache small (gatewayruntime.Trim): the rules and
// annotations of the routes the TenantGateway does not control, which this
// controller never reads, and one copy of the allowedRoutes a Gateway's
// listeners share, and of each string cached objects repeat.
// Strings are shared before allowedRoutes, so each listener's copy is walked
// once, not the shared one once per listener.
var CacheTrims = []gatewayruntime.Trim{gatewayruntime.TrimRoutes(true), gatewayruntime.ShareStrings,
	gatewayruntime.ShareAllowedRoutes}

// Reconciler owns the Gateway <tgw> and the HTTPRoute <tgw>-http-redirect of
// every TenantGateway, and writes status.listeners, ListenersReady,
// HostnamesRejected and the Ready summary.
type Reconciler struct {
	gatewayruntime.Base
	// CertManagerNamespace is where cert-manager publishes its HTTP-01
	// challenge routes: the port-80 listener admits routes from there
	// (empty: Cozystack's cozy-cert-manager).
	CertManagerNamespace string
	// BatchWindow is how long a change waits for the changes that follow
	// it before the reconcile they share (gatewayruntime.Batch; 0: none).
	BatchWindow time.Duration

	// gateways remembers the Gateways whose plain create's fields were
	// handed over to this controller's apply (set by SetupWithManager;
	// nil: each such write reads the Gateway first).
	gateways *ssa.HandOvers
}

// DefaultBatchWindow is BatchWindow unless set: a new tenant's
// TenantGateway, its routes and the labels ns-labels writes on its
// namespaces, or a burst of routes (a chart's, a tenant's apps migrated at
// once), make one Gateway write, at the cost of a second before a change
// reaches the Gateway, which a new listener's certificate takes many times
// longer to follow.
const DefaultBatchWindow = time.Second

// SetupWithManager registers the route index and the watches: TenantGateways
// (spec, and the conditions of the other controllers that Ready
// summarises), the owned Gateway (its status), routes naming the Gateway,
// namespaces (their gateway and host labels decide attachment and child
// apexes at once) and GatewayClasses (their implementation decides the
// listeners' route kinds). A change of a TenantGateway, a route or a
// namespace waits until BatchWindow passes with no other change for the
// same TenantGateway (gatewayruntime.Batch); its Gateway's status and a
// GatewayClass are reconciled at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	ctx := context.Background()
	if err := gatewayruntime.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Namespace{}, indexGatewayOwner, gatewayOwner); err != nil {
		return fmt.Errorf("indexing namespaces: %w", err)
	}
	r.gateways = ssa.NewHandOvers(r.APIReader)
	batch := gatewayruntime.NewBatch(r.BatchWindow)
	return ctrl.NewControllerManagedBy(mgr).
		Named("gateway-listeners").
		Watches(&gatewayv1alpha1.TenantGateway{}, batch.Handler(&handler.EnqueueRequestForObject{})).
		Watches(&gatewayv1.Gateway{}, gatewayruntime.GatewayToTenantGateway()).
		Watches(&gatewayv1.HTTPRoute{}, batch.Handler(routeToTenantGateways())).
		Watches(&gatewayv1.TLSRoute{}, batch.Handler(routeToTenantGateways())).
		Watches(&corev1.Namespace{}, batch.Handler(gatewayruntime.NamespaceToTenantGateways(mgr.GetClient())),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&gatewayv1.GatewayClass{}, classToTenantGateways(mgr.GetClient())).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile brings the Gateway and the redirect route of one TenantGateway to
// the desired state and reports. Deleting a TenantGateway needs nothing:
// the garbage collector removes what it owns. The outcome (pkg/reconcileerr)
// decides the result: a stalled state is not retried, anything else is.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// No outcome of this controller is Foreign: no recheck interval.
	return reconcileerr.Result(r.reconcileOne(ctx, req), 0)
}

// reconcileOne reads the TenantGateway, runs the reconcile and writes the
// status; it returns the outcome, joined with the status write's error.
func (r *Reconciler) reconcileOne(ctx context.Context, req ctrl.Request) error {
	var tgw gatewayv1alpha1.TenantGateway
	if err := r.Client.Get(ctx, req.NamespacedName, &tgw); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return client.IgnoreNotFound(err)
	}
	if !tgw.DeletionTimestamp.IsZero() {
		r.forget(req.NamespacedName)
		return nil
	}
	ctx, writes := gatewayruntime.WithWrites(ctx)
	st, err := r.reconcile(ctx, &tgw)
	writes.Record(r.Events(), &tgw)
	readymetric.Set(gatewayruntime.TenantGatewayGVK.Kind, tgw.Namespace, tgw.Name, st.Conditions[0].Status)
	if werr := r.WriteStatus(ctx, &tgw, st); werr != nil {
		// A status not written is retried, whatever the outcome.
		return errors.Join(err, werr)
	}
	return err
}

// forget drops what is kept of the TenantGateway at key once it goes.
func (r *Reconciler) forget(key types.NamespacedName) {
	readymetric.Forget(gatewayruntime.TenantGatewayGVK.Kind, key.Namespace, key.Name)
	if r.gateways != nil {
		r.gateways.Forget(client.ObjectKey{Namespace: key.Namespace, Name: names.Gateway(key.Name)})
	}
}

// listeners is what the phases of one reconcile learn and pass on.
type listeners struct {
	tgw *gatewayv1alpha1.TenantGateway
	// gw is the live Gateway (nil: it does not exist).
	gw        *gatewayv1.Gateway
	in        gateway.ListenersInput
	rejected  []gateway.RejectedHostname
	listeners []gatewayv1.Listener
	// route is the live redirect route (nil: it does not exist).
	route *gatewayv1.HTTPRoute
	// kinds are the port-443 route kinds for the GatewayClass's
	// implementation (gateway.RouteKindsFor).
	kinds gateway.RouteKinds
	// applied says how the Gateway's apply went; written is the Gateway
	// as that write left it (when applied is not Unchanged).
	applied ssa.Result
	written *gatewayv1.Gateway
}

// phases are the steps of a reconcile, in order; the first error ends it.
func (r *Reconciler) phases() []phase.Phase[*listeners] {
	return []phase.Phase[*listeners]{
		{Name: "read", Run: r.read},                  // the live Gateway and redirect route
		{Name: "gather", Run: r.gather},              // attached routes, inheriting children
		{Name: "decide", Run: r.decide},              // the listener set, or why none can be served
		{Name: "guard", Run: r.guard},                // both objects are the TenantGateway's (or absent)
		{Name: "apply-objects", Run: r.applyObjects}, // the Gateway, then the redirect route
	}
}

// reconcile runs the phases and returns the status to write and the
// outcome, which decides both the result (reconcileerr.Result) and
// ListenersReady's reason (reconcileerr.Reason): a stalled state (too many
// listeners, a spec that cannot work, an object that is not ours) reports
// its reason and is not retried; any other error reports ReconcileError and
// is retried. Either way the Gateway stays as it is.
func (r *Reconciler) reconcile(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (gatewayruntime.Status, error) {
	l := &listeners{tgw: tgw}
	if err := phase.Run(ctx, l, r.phases()...); err != nil {
		reason := reconcileerr.Reason(err, gatewayv1alpha1.ReasonReconcileError)
		return r.failed(tgw, l.gw, l.rejected, reason, err.Error()), err
	}
	// After a write, the Gateway is reported as the write left it (waiting
	// for the implementation at its new generation), not as read before:
	// the reconcile the write's event brings finds that same Gateway and
	// has nothing new to write.
	gw := l.gw
	if l.applied != ssa.Unchanged {
		gw = l.written
	}
	statuses, ready := gateway.ListenersStatus(l.listeners, gw)
	return r.status(tgw, statuses, ready, l.rejected), nil
}

func (r *Reconciler) read(ctx context.Context, l *listeners) error {
	var gw gatewayv1.Gateway
	found, err := r.Get(ctx, l.tgw.Namespace, names.Gateway(l.tgw.Name), &gw)
	if err != nil {
		return err
	}
	if found {
		l.gw = &gw
	}
	var route gatewayv1.HTTPRoute
	found, err = r.Get(ctx, l.tgw.Namespace, names.RedirectRoute(l.tgw.Name), &route)
	if err != nil {
		return err
	}
	if found {
		l.route = &route
	}
	// The GatewayClass names the implementation; without one the kinds are
	// the default class's, chosen again when it is created (the watch).
	var class gatewayv1.GatewayClass
	found, err = r.Get(ctx, "", l.tgw.Spec.EffectiveGatewayClassName(), &class)
	l.kinds = gateway.RouteKindsFor(string(class.Spec.ControllerName), found)
	return err
}

func (r *Reconciler) gather(ctx context.Context, l *listeners) error {
	in, rejected, err := r.inputs(ctx, l.tgw)
	in.RouteKinds = l.kinds
	l.in, l.rejected = in, rejected
	return err
}

// classToTenantGateways maps a GatewayClass to the TenantGateways whose
// Gateways use it.
func classToTenantGateways(reader client.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var list gatewayv1alpha1.TenantGatewayList
		if err := reader.List(ctx, &list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing TenantGateways", "gatewayClass", o.GetName())
			return nil
		}
		var out []reconcile.Request
		for _, t := range list.Items {
			if t.Spec.EffectiveGatewayClassName() == o.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
			}
		}
		return out
	})
}

// decide derives the listeners; an error of tenantgateway (too many
// listeners, a spec that cannot work) is a stalled state: nothing is applied.
func (r *Reconciler) decide(_ context.Context, l *listeners) error {
	listeners, rejected, err := gateway.DesiredListeners(l.in)
	l.listeners, l.rejected = listeners, append(rejected, l.rejected...)
	return err
}

// guard refuses to touch a Gateway or redirect route at the derived names
// that the TenantGateway does not control: stalled, ReconcileError.
func (r *Reconciler) guard(_ context.Context, l *listeners) error {
	if err := r.Refuse("Gateway", "gateway", l.gw, l.tgw); err != nil {
		return reconcileerr.Stalled(gatewayv1alpha1.ReasonReconcileError, err)
	}
	if err := r.Refuse("HTTPRoute", "httproute", l.route, l.tgw); err != nil {
		return reconcileerr.Stalled(gatewayv1alpha1.ReasonReconcileError, err)
	}
	return nil
}

func (r *Reconciler) applyObjects(ctx context.Context, l *listeners) error {
	tgw := l.tgw
	desiredGW := gateway.DesiredGateway(gateway.GatewayInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace,
		GatewayClassName: tgw.Spec.EffectiveGatewayClassName(), Listeners: l.listeners, ManagedBy: r.Name})
	// Both objects are created with a plain create
	// (OwnedApplier.PlainCreates): one request where an apply that creates
	// costs the API server three times as much, and no read first to
	// confirm the absence of an object the cache does not show. The
	// Gateway's listeners follow its routes, so its hand-overs are
	// remembered (r.gateways); the redirect route changes only with the
	// apex.
	plain := r.Base
	plain.PlainCreates = true
	gw := plain
	gw.HandOvers = r.gateways
	var err error
	if l.applied, err = gw.Apply(ctx, tgw, desiredGW, gatewayGVK, l.gw, l.gw != nil); err != nil {
		return err
	}
	l.written = desiredGW
	redirect := gateway.DesiredRedirectRoute(gateway.RedirectRouteInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, Apex: tgw.Spec.Apex, ManagedBy: r.Name})
	_, err = plain.Apply(ctx, tgw, redirect, httpRouteGVK, l.route, l.route != nil)
	return err
}

// indexGatewayOwner indexes namespaces by the owner namespace their
// namespace.cozystack.io/gateway label names (gatewayOwner). A reconcile
// reads the namespaces of its own tenant through it; a label selector would
// walk every namespace of the cluster on each reconcile.
const indexGatewayOwner = "metadata.labels.namespace.cozystack.io/gateway"

// gatewayOwner is the owner namespace o's namespace.cozystack.io/gateway
// label names, if any: the key of indexGatewayOwner.
func gatewayOwner(o client.Object) []string {
	if v := o.GetLabels()[gatewayv1alpha1.LabelNamespaceGateway]; v != "" {
		return []string{v}
	}
	return nil
}

// inputs gathers what the listener set depends on: the hostnames of the
// routes attached to the Gateway (minus conflict losers, cert-manager's
// challenge routes and TLSRoutes of the passthrough listeners), and the
// inheriting child apexes.
func (r *Reconciler) inputs(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (gateway.ListenersInput, []gateway.RejectedHostname, error) {
	routes, err := gatewayruntime.AttachedRoutes(ctx, r.Client, tgw)
	if err != nil {
		return gateway.ListenersInput{}, nil, err
	}
	passthrough := map[string]bool{}
	for _, svc := range tgw.Spec.TLSPassthroughServices {
		passthrough[names.PassthroughHostname(svc, tenantgateway.NormalizeHostname(tgw.Spec.Apex))] = true
	}
	var hostnames []string
	for _, rt := range routes {
		if rt.IsSolver() || gateway.ConflictLoser(gatewayruntime.RouteParents(rt.Object), rt.Key.Namespace, tgw.Namespace, names.Gateway(tgw.Name)) {
			continue
		}
		for _, h := range rt.Hostnames {
			if rt.Key.Kind == tenantgateway.KindTLSRoute && passthrough[tenantgateway.NormalizeHostname(h)] {
				continue
			}
			hostnames = append(hostnames, h)
		}
	}
	var nsList corev1.NamespaceList
	if err := r.Client.List(ctx, &nsList, client.MatchingFields{indexGatewayOwner: tgw.Namespace}); err != nil {
		return gateway.ListenersInput{}, nil, fmt.Errorf("listing namespaces: %w", err)
	}
	namespaces := make([]gateway.Namespace, len(nsList.Items))
	for i, ns := range nsList.Items {
		namespaces[i] = gateway.Namespace{Name: ns.Name, Labels: ns.Labels}
	}
	children, rejected := gateway.InheritingChildApexes(gateway.ChildrenInput{
		OwnerNamespace: tgw.Namespace, Apex: tgw.Spec.Apex, Namespaces: namespaces})
	in := gateway.NewListenersInput(tgw, hostnames, children)
	in.CertManagerNamespace = r.CertManagerNamespace
	return in, rejected, nil
}

// failed is the status when the Gateway could not be brought to the desired
// state: ListenersReady False with the reason, the listeners as they are.
func (r *Reconciler) failed(tgw *gatewayv1alpha1.TenantGateway, gw *gatewayv1.Gateway, rejected []gateway.RejectedHostname, reason, message string) gatewayruntime.Status {
	var current []gatewayv1.Listener
	if gw != nil && gatewayruntime.ControlledBy(gw, tgw) {
		current = gw.Spec.Listeners
	}
	statuses, _ := gateway.ListenersStatus(current, gw)
	return r.status(tgw, statuses, gatewayruntime.Condition(gatewayv1alpha1.ConditionListenersReady, metav1.ConditionFalse, reason, message), rejected)
}

// status assembles what this controller owns of the TenantGateway status;
// Ready summarises it with the other controllers' conditions.
func (r *Reconciler) status(tgw *gatewayv1alpha1.TenantGateway, listeners []gatewayv1alpha1.TenantGatewayListenerStatus, ready metav1.Condition, rejected []gateway.RejectedHostname) gatewayruntime.Status {
	own := []metav1.Condition{ready, gateway.HostnamesRejectedCondition(rejected)}
	all := slices.Clone(tgw.Status.Conditions)
	for _, c := range own {
		c.ObservedGeneration = tgw.Generation
		all = slices.DeleteFunc(all, func(x metav1.Condition) bool { return x.Type == c.Type })
		all = append(all, c)
	}
	return gatewayruntime.Status{
		Conditions:         append(gateway.Summarize(all, tgw.Generation), own...),
		Absent:             []string{gatewayv1alpha1.ConditionReconciling, gatewayv1alpha1.ConditionStalled},
		Listeners:          listeners,
		OwnsListeners:      true,
		ObservedGeneration: true,
	}
}
