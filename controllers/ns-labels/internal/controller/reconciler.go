// Package controller attaches namespaces to TenantGateways by label. One
// reconcile handles one owner namespace: every TenantGateway in it, and every
// namespace they list or that carries the annotation naming it.
package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/ns-labels/internal/attach"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/ownwrite"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

const (
	// indexAttached indexes TenantGateways by their attachedNamespaces
	// entries.
	indexAttached = "spec.attachedNamespaces"
	// indexAttachedBy indexes namespaces by the owner their
	// cozystack.io/gateway-attached-by annotation names: the namespaces this
	// controller labelled for an owner are found without a pass over every
	// namespace of the cluster.
	indexAttachedBy = "metadata.annotations.attached-by"
)

// CacheTrims are the fields of cached objects this controller never reads
// (gatewayruntime.Trim): the listeners a TenantGateway's status reports;
// and the strings cached objects repeat are kept once.
var CacheTrims = []gatewayruntime.Trim{gatewayruntime.TrimTenantGatewayListeners, gatewayruntime.ShareStrings}

// Reconciler writes and removes the gateway labels of one owner namespace's
// TenantGateways and reports NamespacesAttached on each.
type Reconciler struct {
	gatewayruntime.Base
	// written remembers each namespace as this controller's last patch left
	// it: while the cache still shows it as it was before, the patch, not
	// the cached copy, is the namespace (pkg/ownwrite). A reconcile that
	// the event of one of its own patches brings, before the event of the
	// next, would otherwise patch that next namespace again from a stale
	// version and be refused with a conflict.
	written ownwrite.Writes[string, *corev1.Namespace]
}

// SetupWithManager watches TenantGateways and Namespaces. Requests carry only
// the owner namespace (the name is empty): every TenantGateway there shares
// the label, so they are decided together.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if err := setupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// What a TenantGateway's status says is not an input: only a change of
	// its spec (its generation) or its deletion is.
	return ctrl.NewControllerManagedBy(mgr).
		Named("ns-labels").
		Watches(&gatewayv1alpha1.TenantGateway{}, handler.EnqueueRequestsFromMapFunc(r.ownersOfTenantGateway),
			builder.WithPredicates(gatewayruntime.SpecOrDeletionChanged())).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.ownersOfNamespace),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// setupIndexes registers indexAttached and indexAttachedBy.
func setupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &gatewayv1alpha1.TenantGateway{}, indexAttached,
		func(o client.Object) []string { return o.(*gatewayv1alpha1.TenantGateway).Spec.AttachedNamespaces }); err != nil {
		return fmt.Errorf("indexing TenantGateways: %w", err)
	}
	if err := indexer.IndexField(ctx, &corev1.Namespace{}, indexAttachedBy, attachedBy); err != nil {
		return fmt.Errorf("indexing namespaces: %w", err)
	}
	return nil
}

// attachedBy is the owner a namespace's cozystack.io/gateway-attached-by
// annotation names, if any.
func attachedBy(o client.Object) []string {
	if v := o.GetAnnotations()[gatewayv1alpha1.AnnotationAttachedBy]; v != "" {
		return []string{v}
	}
	return nil
}

// ownersOfTenantGateway maps a TenantGateway to its owner namespace and, for
// one in the root tenant's namespace, to the owner namespaces of the
// TenantGateways listing any of its entries: whether a shared entry there is
// published through the root's Gateway follows the root's list. On an update
// the handler maps the old object too, so dropped entries are covered.
func (r *Reconciler) ownersOfTenantGateway(ctx context.Context, o client.Object) []reconcile.Request {
	owners := map[string]bool{o.GetNamespace(): true}
	if o.GetNamespace() == attach.RootTenantNamespace {
		for _, ns := range o.(*gatewayv1alpha1.TenantGateway).Spec.AttachedNamespaces {
			r.addListers(ctx, owners, ns)
		}
	}
	return requests(owners)
}

// addListers adds the owner namespaces of the TenantGateways listing ns.
func (r *Reconciler) addListers(ctx context.Context, owners map[string]bool, ns string) {
	var list gatewayv1alpha1.TenantGatewayList
	if err := r.Client.List(ctx, &list, client.MatchingFields{indexAttached: ns}); err != nil {
		log.FromContext(ctx).Error(err, "listing TenantGateways that attach namespace", "namespace", ns)
	}
	for _, t := range list.Items {
		owners[t.Namespace] = true
	}
}

func requests(owners map[string]bool) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(owners))
	for ns := range owners {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns}})
	}
	return out
}

// ownersOfNamespace maps a namespace to the owner namespaces it concerns: the
// one its annotation names (we wrote there, perhaps for a TenantGateway
// deleted while we were down), the one its gateway label names, those whose
// TenantGateways list it, and itself (it may be an owner).
func (r *Reconciler) ownersOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	// An event of the version a patch made (or a later one) ends the wait
	// for it: what the patch remembered is dropped.
	r.written.Behind(o.GetName(), o.GetResourceVersion())
	owners := map[string]bool{o.GetName(): true}
	if v := o.GetAnnotations()[gatewayv1alpha1.AnnotationAttachedBy]; v != "" {
		owners[v] = true
	}
	if v := o.GetLabels()[gatewayv1alpha1.LabelNamespaceGateway]; v != "" {
		owners[v] = true
	}
	r.addListers(ctx, owners, o.GetName())
	return requests(owners)
}

// Reconcile brings the gateway labels of one owner namespace to the plan and
// reports on each of its TenantGateways: plan, write, report. The result and
// the conditions come from one outcome: a write that failed is reported as
// ReconcileError on every TenantGateway of the owner and retried
// (reconcileerr.Reason and reconcileerr.Result).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p, err := r.plan(ctx, req.Namespace)
	if err != nil {
		// Nothing read, nothing to report on.
		return reconcileerr.Result(err, 0)
	}
	err = r.write(ctx, p)
	werr := r.report(ctx, p, err)
	// No step returns a Foreign error: nothing to look at again unasked.
	result, err := reconcileerr.Result(err, 0)
	if werr != nil {
		return ctrl.Result{}, errors.Join(err, werr)
	}
	return result, err
}

// planned is one owner namespace's plan and what it was made from.
type planned struct {
	owner string
	// live are the owner's TenantGateways not being deleted; split what
	// each one's attachedNamespaces come to, by name.
	live  []gatewayv1alpha1.TenantGateway
	split map[string]attach.Attachments
	// byName are the namespaces read, plan what to write to them.
	byName map[string]*corev1.Namespace
	plan   attach.NamespacePlan
}

// plan reads the owner's TenantGateways, the root tenant's and the
// namespaces, and decides the labels (attach.SplitAttachments,
// attach.PlanNamespaces).
func (r *Reconciler) plan(ctx context.Context, owner string) (*planned, error) {
	var tgws gatewayv1alpha1.TenantGatewayList
	if err := r.Client.List(ctx, &tgws, client.InNamespace(owner)); err != nil {
		return nil, err
	}
	rootAttached, err := r.rootAttached(ctx)
	if err != nil {
		return nil, err
	}
	p := &planned{owner: owner, split: map[string]attach.Attachments{}, byName: map[string]*corev1.Namespace{}}
	var wanted []string
	for _, t := range tgws.Items {
		if t.DeletionTimestamp.IsZero() {
			p.live = append(p.live, t)
			a := attach.SplitAttachments(t.Namespace, t.Spec.AttachedNamespaces, rootAttached)
			p.split[t.Name] = a
			wanted = append(wanted, a.Allowed...)
		}
	}
	states, err := r.namespaces(ctx, owner, wanted, p.byName)
	if err != nil {
		return nil, err
	}
	p.plan = attach.PlanNamespaces(owner, wanted, states)
	return p, nil
}

// namespaces reads what PlanNamespaces needs: the wanted namespaces that
// exist and those annotated as attached by owner, each once, into byName. A
// reconcile reads the namespaces of one owner, never every namespace of the
// cluster: with thousands of tenants, a pass over all of them per reconcile
// made the controller's cost grow with the square of the tenants.
func (r *Reconciler) namespaces(ctx context.Context, owner string, wanted []string, byName map[string]*corev1.Namespace) ([]attach.NamespaceState, error) {
	var attached corev1.NamespaceList
	if err := r.Client.List(ctx, &attached, client.MatchingFields{indexAttachedBy: owner}); err != nil {
		return nil, fmt.Errorf("listing the namespaces attached by %s: %w", owner, err)
	}
	for i := range attached.Items {
		byName[attached.Items[i].Name] = r.ownWrite(&attached.Items[i])
	}
	for _, name := range wanted {
		if byName[name] != nil {
			continue
		}
		ns := &corev1.Namespace{}
		found, err := r.Get(ctx, "", name, ns)
		if err != nil {
			return nil, err
		}
		if found {
			byName[name] = r.ownWrite(ns)
		}
	}
	states := make([]attach.NamespaceState, 0, len(byName))
	for _, ns := range byName {
		states = append(states, attach.NamespaceState{Name: ns.Name, Labels: ns.Labels, Annotations: ns.Annotations})
	}
	return states, nil
}

// ownWrite is cached, or the namespace as this controller's last patch of it
// left it while the cache has not shown that patch yet.
func (r *Reconciler) ownWrite(cached *corev1.Namespace) *corev1.Namespace {
	if ns, behind := r.written.Behind(cached.Name, cached.ResourceVersion); behind {
		return ns.DeepCopy()
	}
	return cached
}

// write attaches and detaches the namespaces of the plan. A conflict means
// the namespace changed since the cache saw it: its event brings a fresh
// reconcile. Others are retried with backoff. The namespaces attached are
// told in one NamespaceAttached event on each TenantGateway of the owner,
// those detached in one NamespaceDetached: a new tenant's namespaces come
// in one reconcile, and an event costs the API server what the patch it
// tells of costs.
func (r *Reconciler) write(ctx context.Context, p *planned) error {
	var errs []error
	var attached, detached []gatewayruntime.Write
	for _, name := range p.plan.Attach {
		w, err := r.patch(ctx, p.byName[name], p.owner, true, true)
		errs = append(errs, err)
		if err == nil {
			attached = append(attached, w)
		}
	}
	for _, d := range p.plan.Detach {
		w, err := r.patch(ctx, p.byName[d.Name], p.owner, false, d.RemoveLabel)
		errs = append(errs, err)
		if err == nil {
			detached = append(detached, w)
		}
	}
	for i := range p.live {
		for _, told := range []struct {
			reason string
			writes []gatewayruntime.Write
		}{{gatewayv1alpha1.EventNamespaceAttached, attached}, {gatewayv1alpha1.EventNamespaceDetached, detached}} {
			if len(told.writes) > 0 {
				r.Events().Normal(&p.live[i], told.writes[0].Object, told.reason, "Label", gatewayruntime.WritesNote(told.writes))
			}
		}
	}
	return errors.Join(errs...)
}

// report writes NamespacesAttached on each live TenantGateway: decided from
// its attachments and the plan once the writes succeeded
// (attach.NamespacesAttachedCondition), or False with the outcome's reason
// (reconcileerr.Reason: ReconcileError, retried) and message when one
// failed.
func (r *Reconciler) report(ctx context.Context, p *planned, outcome error) error {
	var errs []error
	for i := range p.live {
		t := &p.live[i]
		cond := attach.NamespacesAttachedCondition(p.split[t.Name], p.plan)
		if outcome != nil {
			cond = gatewayruntime.Condition(gatewayv1alpha1.ConditionNamespacesAttached, metav1.ConditionFalse,
				reconcileerr.Reason(outcome, gatewayv1alpha1.ReasonReconcileError), outcome.Error())
		}
		if err := r.WriteStatus(ctx, t, gatewayruntime.Status{Conditions: []metav1.Condition{cond}}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rootAttached is what the root tenant's TenantGateways list, which decides
// whether a shared namespace listed outside the root tenant is published
// through the root's Gateway (attach.SplitAttachments).
func (r *Reconciler) rootAttached(ctx context.Context) ([]string, error) {
	var root gatewayv1alpha1.TenantGatewayList
	if err := r.Client.List(ctx, &root, client.InNamespace(attach.RootTenantNamespace)); err != nil {
		return nil, err
	}
	var out []string
	for _, t := range root.Items {
		if t.DeletionTimestamp.IsZero() {
			out = append(out, t.Spec.AttachedNamespaces...)
		}
	}
	return out, nil
}

// patch writes (attach) or removes the label and the annotation with a JSON
// merge patch carrying the resourceVersion read (MergeFromWithOptimisticLock):
// if anyone changed the namespace since, the API server refuses and nothing
// is overwritten. It returns the write, for the event that tells it.
func (r *Reconciler) patch(ctx context.Context, ns *corev1.Namespace, owner string, attaching, label bool) (gatewayruntime.Write, error) {
	changed := ns.DeepCopy()
	set := func(m map[string]string, key string) map[string]string {
		if !attaching {
			delete(m, key)
			return m
		}
		if m == nil {
			m = map[string]string{}
		}
		m[key] = owner
		return m
	}
	changed.Annotations = set(changed.Annotations, gatewayv1alpha1.AnnotationAttachedBy)
	if label {
		changed.Labels = set(changed.Labels, gatewayv1alpha1.LabelNamespaceGateway)
	}
	if err := r.Client.Patch(ctx, changed, client.MergeFromWithOptions(ns, client.MergeFromWithOptimisticLock{})); err != nil {
		return gatewayruntime.Write{}, fmt.Errorf("labelling namespace %s: %w", ns.Name, err)
	}
	r.written.Wrote(ns.Name, ns.ResourceVersion, changed.ResourceVersion, changed)
	outcome := writemetric.Detached
	why := "no TenantGateway of " + owner + " lists it any more (or may attach it)"
	if attaching {
		outcome = writemetric.Attached
		why = "a TenantGateway of " + owner + " lists it (or owns it) and it carried no gateway label"
	}
	writemetric.Count(r.Name, "Namespace", outcome)
	log.FromContext(ctx).Info(outcome, "namespace", ns.Name, "owner", owner, "why", why)
	return gatewayruntime.Write{Object: ns, Kind: "namespace", Name: ns.Name, Outcome: outcome, Why: why}, nil
}
