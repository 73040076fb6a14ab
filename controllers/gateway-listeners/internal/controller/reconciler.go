// Package controller reconciles TenantGateways into their Gateway and
// redirect HTTPRoute. The decisions are the pure functions of
// pkg/tenantgateway; this package reads their inputs from the cache, applies
// their results and reports.
package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/gatewayctl"
	"github.com/cozyplane/cozyplane/pkg/readiness"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

var (
	gatewayGVK   = gatewayv1.SchemeGroupVersion.WithKind("Gateway")
	httpRouteGVK = gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute")
)

// Reconciler owns the Gateway <tgw> and the HTTPRoute <tgw>-http-redirect of
// every TenantGateway, and writes status.listeners, ListenersReady,
// HostnamesRejected and the Ready summary.
type Reconciler struct {
	gatewayctl.Base
}

// SetupWithManager registers the route index and the watches: TenantGateways
// (spec, and the conditions of the other controllers that Ready
// summarises), the owned Gateway (its status), routes naming the Gateway,
// and namespaces (their gateway and host labels decide attachment and child
// apexes at once).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if err := gatewayctl.SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("gateway-listeners").
		For(&gatewayv1alpha1.TenantGateway{}).
		Watches(&gatewayv1.Gateway{}, gatewayctl.GatewayToTenantGateway()).
		Watches(&gatewayv1.HTTPRoute{}, gatewayctl.RouteToTenantGateways()).
		Watches(&gatewayv1.TLSRoute{}, gatewayctl.RouteToTenantGateways()).
		Watches(&corev1.Namespace{}, gatewayctl.NamespaceToTenantGateways(mgr.GetClient()),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile brings the Gateway and the redirect route of one TenantGateway to
// the desired state and reports. Deleting a TenantGateway needs nothing:
// the garbage collector removes what it owns.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var tgw gatewayv1alpha1.TenantGateway
	if err := r.Client.Get(ctx, req.NamespacedName, &tgw); err != nil {
		if apierrors.IsNotFound(err) {
			readiness.Forget(gatewayctl.TenantGatewayGVK.Kind, req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tgw.DeletionTimestamp.IsZero() {
		readiness.Forget(gatewayctl.TenantGatewayGVK.Kind, req.Namespace, req.Name)
		return ctrl.Result{}, nil
	}
	st, err := r.reconcile(ctx, &tgw)
	readiness.Set(gatewayctl.TenantGatewayGVK.Kind, tgw.Namespace, tgw.Name, st.Conditions[0].Status)
	if werr := r.WriteStatus(ctx, &tgw, st); werr != nil {
		return ctrl.Result{}, errors.Join(err, werr)
	}
	return ctrl.Result{}, err
}

// reconcile does the work and returns the status to write. An error is
// returned only when retrying can help; problems the user must fix are in
// the status.
func (r *Reconciler) reconcile(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (gatewayctl.Status, error) {
	gw, err := r.liveGateway(ctx, tgw)
	if err != nil {
		return r.failed(tgw, nil, nil, gatewayv1alpha1.ReasonReconcileError, err.Error()), err
	}
	in, rejectedChildren, err := r.inputs(ctx, tgw)
	if err != nil {
		return r.failed(tgw, gw, nil, gatewayv1alpha1.ReasonReconcileError, err.Error()), err
	}
	listeners, rejected, err := tenantgateway.DesiredListeners(in)
	rejected = append(rejected, rejectedChildren...)
	if err != nil {
		// Too many listeners, or a spec that cannot work: nothing is
		// applied, the Gateway stays as it is.
		reason := gatewayv1alpha1.ReasonReconcileError
		if s, ok := reconcileerr.AsStalled(err); ok {
			reason = s.Reason
		}
		return r.failed(tgw, gw, rejected, reason, err.Error()), nil
	}

	if err := r.Refuse("Gateway", gw, tgw); err != nil {
		return r.failed(tgw, gw, rejected, gatewayv1alpha1.ReasonReconcileError, err.Error()), nil
	}
	redirect := tenantgateway.DesiredRedirectRoute(tenantgateway.RedirectRouteInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace, Apex: tgw.Spec.Apex, ManagedBy: r.Name})
	liveRoute, err := r.liveRoute(ctx, redirect.Namespace, redirect.Name)
	if err != nil {
		return r.failed(tgw, gw, rejected, gatewayv1alpha1.ReasonReconcileError, err.Error()), err
	}
	if err := r.Refuse("HTTPRoute", liveRoute, tgw); err != nil {
		return r.failed(tgw, gw, rejected, gatewayv1alpha1.ReasonReconcileError, err.Error()), nil
	}

	desiredGW := tenantgateway.DesiredGateway(tenantgateway.GatewayInput{
		TenantGateway: tgw.Name, Namespace: tgw.Namespace,
		GatewayClassName: tgw.Spec.EffectiveGatewayClassName(), Listeners: listeners, ManagedBy: r.Name})
	var liveGW client.Object
	if gw != nil {
		liveGW = gw
	}
	res, err := r.Apply(ctx, tgw, desiredGW, gatewayGVK, liveGW)
	if err != nil {
		return r.failed(tgw, gw, rejected, gatewayv1alpha1.ReasonReconcileError, err.Error()), err
	}
	var liveRT client.Object
	if liveRoute != nil {
		liveRT = liveRoute
	}
	if _, err := r.Apply(ctx, tgw, redirect, httpRouteGVK, liveRT); err != nil {
		return r.failed(tgw, gw, rejected, gatewayv1alpha1.ReasonReconcileError, err.Error()), err
	}
	statuses, ready := tenantgateway.ListenersStatus(listeners, gw)
	if res != ssa.Unchanged {
		// The status read describes the Gateway before this write; the
		// write's event brings the reconcile that reports on the new one.
		ready = gatewayctl.Condition(gatewayv1alpha1.ConditionListenersReady, metav1.ConditionUnknown,
			gatewayv1alpha1.ReasonProgressing, "the Gateway was updated; waiting for the implementation to program it")
	}
	return r.status(tgw, statuses, ready, rejected), nil
}

// inputs gathers what the listener set depends on: the hostnames of the
// routes attached to the Gateway (minus conflict losers, cert-manager's
// challenge routes and TLSRoutes of the passthrough listeners), and the
// inheriting child apexes.
func (r *Reconciler) inputs(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (tenantgateway.ListenersInput, []tenantgateway.RejectedHostname, error) {
	routes, err := gatewayctl.AttachedRoutes(ctx, r.Client, tgw)
	if err != nil {
		return tenantgateway.ListenersInput{}, nil, err
	}
	passthrough := map[string]bool{}
	for _, svc := range tgw.Spec.TLSPassthroughServices {
		passthrough[tenantgateway.PassthroughHostname(svc, tenantgateway.NormalizeHostname(tgw.Spec.Apex))] = true
	}
	var hostnames []string
	for _, rt := range routes {
		if rt.IsSolver() || gatewayctl.ConflictLoser(gatewayctl.RouteParents(rt.Object), rt.Key.Namespace, tgw.Namespace, tenantgateway.GatewayName(tgw.Name)) {
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
	if err := r.Client.List(ctx, &nsList, client.MatchingLabels{gatewayv1alpha1.LabelNamespaceGateway: tgw.Namespace}); err != nil {
		return tenantgateway.ListenersInput{}, nil, fmt.Errorf("listing namespaces: %w", err)
	}
	namespaces := make([]tenantgateway.Namespace, len(nsList.Items))
	for i, ns := range nsList.Items {
		namespaces[i] = tenantgateway.Namespace{Name: ns.Name, Labels: ns.Labels}
	}
	children, rejected := tenantgateway.InheritingChildApexes(tenantgateway.ChildrenInput{
		OwnerNamespace: tgw.Namespace, Apex: tgw.Spec.Apex, Namespaces: namespaces})
	return tenantgateway.NewListenersInput(tgw, hostnames, children), rejected, nil
}

func (r *Reconciler) liveGateway(ctx context.Context, tgw *gatewayv1alpha1.TenantGateway) (*gatewayv1.Gateway, error) {
	var gw gatewayv1.Gateway
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: tgw.Namespace, Name: tenantgateway.GatewayName(tgw.Name)}, &gw)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Gateway %s/%s: %w", tgw.Namespace, tgw.Name, err)
	}
	return &gw, nil
}

func (r *Reconciler) liveRoute(ctx context.Context, namespace, name string) (*gatewayv1.HTTPRoute, error) {
	var rt gatewayv1.HTTPRoute
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &rt)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading HTTPRoute %s/%s: %w", namespace, name, err)
	}
	return &rt, nil
}

// failed is the status when the Gateway could not be brought to the desired
// state: ListenersReady False with the reason, the listeners as they are.
func (r *Reconciler) failed(tgw *gatewayv1alpha1.TenantGateway, gw *gatewayv1.Gateway, rejected []tenantgateway.RejectedHostname, reason, message string) gatewayctl.Status {
	var current []gatewayv1.Listener
	if gw != nil && metav1.IsControlledBy(gw, tgw) {
		current = gw.Spec.Listeners
	}
	statuses, _ := tenantgateway.ListenersStatus(current, gw)
	return r.status(tgw, statuses, gatewayctl.Condition(gatewayv1alpha1.ConditionListenersReady, metav1.ConditionFalse, reason, message), rejected)
}

// status assembles what this controller owns of the TenantGateway status;
// Ready summarises it with the other controllers' conditions.
func (r *Reconciler) status(tgw *gatewayv1alpha1.TenantGateway, listeners []gatewayv1alpha1.TenantGatewayListenerStatus, ready metav1.Condition, rejected []tenantgateway.RejectedHostname) gatewayctl.Status {
	own := []metav1.Condition{ready, tenantgateway.HostnamesRejectedCondition(rejected)}
	all := slices.Clone(tgw.Status.Conditions)
	for _, c := range own {
		c.ObservedGeneration = tgw.Generation
		all = slices.DeleteFunc(all, func(x metav1.Condition) bool { return x.Type == c.Type })
		all = append(all, c)
	}
	return gatewayctl.Status{
		Conditions:         append(tenantgateway.Summarize(all, tgw.Generation), own...),
		Listeners:          listeners,
		OwnsListeners:      true,
		ObservedGeneration: true,
	}
}
