package quota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/record"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// RBAC, on top of the appdef controller's (charts/appdef/templates/clusterrole.yaml):
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=resourcequotas/status,verbs=patch

// DefaultForeignRecheckInterval is how often a namespace whose quota name
// is taken by someone else's quota is looked at again.
const DefaultForeignRecheckInterval = time.Minute

var namespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")

// Reconciler keeps the default quota of every tenant namespace, keyed by
// namespace name.
//
// Watches, and why:
//   - Namespaces, metadata only, those Config.Covers: the input (their
//     annotations override the limits).
//   - ResourceQuotas labelled as ours (a cache limited to that label, see
//     CacheOptions), and only changes outside their status (the quota
//     controller rewrites status.used on every count) or a status that
//     enforces a kind without its usage (MissingUsage): a quota someone
//     changed or deleted is put back, and a usage the quota controller
//     cannot count yet is counted here. One at Name without our label is read
//     straight from the API server, and looked at again every
//     ForeignRecheckInterval.
//   - The CRDs appdef serves (the manager's cache holds those labelled
//     cozystack.io/application-definition): a kind served, renamed or gone
//     changes every tenant namespace's quota. A kind is counted once its CRD
//     has been Established for Config.KindDelay (see DefaultKindDelay); until
//     then the namespace is looked at again when the delay runs out.
type Reconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	// FieldManager names the server-side apply field manager.
	FieldManager string
	Config       Config

	ForeignRecheckInterval time.Duration

	applier ssa.Applier
}

// CacheOptions limits the manager's cache of ResourceQuotas to ours.
func CacheOptions() manager.Customize {
	return func(o *ctrl.Options) {
		if o.Cache.ByObject == nil {
			o.Cache.ByObject = map[client.Object]cache.ByObject{}
		}
		o.Cache.ByObject[&corev1.ResourceQuota{}] = cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy})}
	}
}

// SetupWithManager registers the controller.
// events records on behalf of the controller (nil Recorder: nothing).
func (r *Reconciler) events() record.Events { return record.For(r.Recorder, r.Client) }

func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ForeignRecheckInterval <= 0 {
		r.ForeignRecheckInterval = DefaultForeignRecheckInterval
	}
	r.applier = ssa.Applier{Client: r.Client, FieldManager: r.FieldManager, Creates: r.APIReader}
	covered := predicate.NewPredicateFuncs(func(o client.Object) bool { return r.Config.Covers(o.GetName()) })
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("instance-quota").
		For(&corev1.Namespace{}, builder.OnlyMetadata, builder.WithPredicates(covered)).
		Watches(&corev1.ResourceQuota{}, byNamespace, builder.WithPredicates(outsideStatus())).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.allNamespaces), builder.WithPredicates(kindChanged())).
		Complete(r)
}

// outsideStatus lets through creations, deletions and the updates that
// change a quota's labels or spec.
func outsideStatus() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, _ := e.ObjectOld.(*corev1.ResourceQuota)
		n, _ := e.ObjectNew.(*corev1.ResourceQuota)
		return o == nil || n == nil || !reflect.DeepEqual(o.Labels, n.Labels) || !reflect.DeepEqual(o.Annotations, n.Annotations) ||
			!reflect.DeepEqual(o.Spec, n.Spec) || len(MissingUsage(n)) > 0
	}}
}

// kindChanged lets through creations, deletions and the updates that change
// a CRD's names, its Established condition or its deletion.
func kindChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, _ := e.ObjectOld.(*apiextensionsv1.CustomResourceDefinition)
		n, _ := e.ObjectNew.(*apiextensionsv1.CustomResourceDefinition)
		return o == nil || n == nil || o.Spec.Names.Kind != n.Spec.Names.Kind || o.Spec.Names.Plural != n.Spec.Names.Plural ||
			established(o) != established(n) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	}}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) metav1.Time {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return c.LastTransitionTime
		}
	}
	return metav1.Time{}
}

// allNamespaces maps a definition event to every covered namespace.
func (r *Reconciler) allNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := r.Client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing namespaces after a definition change")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if r.Config.Covers(list.Items[i].Name) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return out
}

// Reconcile brings one tenant namespace's default quota in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.Config.Covers(req.Name) {
		return ctrl.Result{}, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(namespaceGVK)
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil {
		// Gone: its quota went with it.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ns.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	limits, err := LimitsFor(r.Config, ns.Annotations)
	if err != nil {
		// Fixed only by a change of the namespace, which is watched.
		r.events().Warning(ns, nil, cozyv1alpha1.EventInvalidAnnotation, "Reconcile", fmt.Sprintf("%v; the namespace's instance quota %s is left as it is. Fix the annotation", err, Name))
		return ctrl.Result{}, nil
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.Client.List(ctx, crds, client.HasLabels{cozyschema.LabelDefinition}); err != nil {
		return ctrl.Result{}, err
	}
	delay := r.Config.KindDelay
	if delay <= 0 {
		delay = DefaultKindDelay
	}
	kinds, wait := ServedKinds(crds.Items, time.Now(), delay)
	hard := Hard(kinds, limits)
	// A kind served a moment ago is counted when its delay runs out.
	later := ctrl.Result{RequeueAfter: wait}

	live, err := r.live(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	action, err := Decide(live, hard)
	var notOwned *NotOwnedError
	if errors.As(err, &notOwned) {
		r.events().Warning(ns, nil, cozyv1alpha1.EventQuotaNotOwned, "Reconcile", err.Error())
		log.FromContext(ctx).Info("quota not owned", "namespace", req.Name, "reason", err.Error())
		return ctrl.Result{RequeueAfter: r.ForeignRecheckInterval}, nil
	}
	switch action {
	case Apply:
		if err := r.apply(ctx, ns, live, Desired(req.Name, hard)); err != nil {
			return ctrl.Result{}, err
		}
		// A status read before the write: a later one is watched.
		return later, r.countMissing(ctx, ns, live, crds.Items)
	case Delete:
		err := r.Client.Delete(ctx, live, client.Preconditions{UID: &live.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting ResourceQuota %s/%s: %w", req.Name, Name, err)
		}
		if err == nil {
			writemetric.Count(r.FieldManager, "ResourceQuota", writemetric.Deleted)
		}
		r.events().Normal(ns, nil, cozyv1alpha1.EventQuotaDeleted, "Delete", fmt.Sprintf("no instance limit is wanted in %s (flags or annotations %s, %s): ResourceQuota %s deleted", req.Name, AnnotationInstances, AnnotationTenants, Name))
	}
	return later, nil
}

// live reads the quota at Name: from the cache (ours), else from the API
// server (someone else's, which the cache does not hold). nil when absent.
func (r *Reconciler) live(ctx context.Context, ns string) (*corev1.ResourceQuota, error) {
	key := types.NamespacedName{Namespace: ns, Name: Name}
	q := &corev1.ResourceQuota{}
	err := r.Client.Get(ctx, key, q)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, q)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ResourceQuota %s/%s: %w", ns, Name, err)
	}
	return q, nil
}

// countMissing writes the usage of every kind q enforces without one
// (MissingUsage): the number of its instances in the namespace, read from
// the API server. Until a usage is there the API server refuses every
// create of the kind, so nothing is created between the count and the
// write; a deletion in between leaves the count one high until the quota
// controller counts the kind itself. The write is conditional on q's
// resourceVersion: a usage the quota controller wrote meanwhile wins.
func (r *Reconciler) countMissing(ctx context.Context, ns client.Object, q *corev1.ResourceQuota, crds []apiextensionsv1.CustomResourceDefinition) error {
	missing := MissingUsage(q)
	if len(missing) == 0 {
		return nil
	}
	used := corev1.ResourceList{}
	for _, res := range missing {
		gvk, ok := kindOf(crds, PluralOf(res))
		if !ok {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.APIReader.List(ctx, list, client.InNamespace(q.Namespace)); err != nil {
			return fmt.Errorf("counting %s in %s for ResourceQuota %s: %w", gvk.Kind, q.Namespace, Name, err)
		}
		used[res] = *resource.NewQuantity(int64(len(list.Items)), resource.DecimalSI)
	}
	if len(used) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": q.ResourceVersion},
		"status":   map[string]any{"used": used},
	})
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, q, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Changed meanwhile (the quota controller may have counted
			// it): the change is watched and decided again.
			return nil
		}
		return fmt.Errorf("writing the usage of ResourceQuota %s/%s: %w", q.Namespace, Name, err)
	}
	writemetric.Count(r.FieldManager, "ResourceQuota", writemetric.Status)
	r.events().Normal(ns, nil, cozyv1alpha1.EventUsageCounted, "Count", fmt.Sprintf("ResourceQuota %s enforced kinds the quota controller had not counted yet (every create of them was refused): usage written %s", Name, describe(used)))
	log.FromContext(ctx).Info("instance quota usage counted", "namespace", q.Namespace, "used", used)
	return nil
}

// kindOf is the served kind of plural among crds, at the version the
// API server stores.
func kindOf(crds []apiextensionsv1.CustomResourceDefinition, plural string) (schema.GroupVersionKind, bool) {
	for i := range crds {
		crd := &crds[i]
		if crd.Spec.Group != Group || crd.Spec.Names.Plural != plural {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage && v.Served {
				return schema.GroupVersionKind{Group: Group, Version: v.Name, Kind: crd.Spec.Names.Kind}, true
			}
		}
	}
	return schema.GroupVersionKind{}, false
}

func (r *Reconciler) apply(ctx context.Context, ns client.Object, live, desired *corev1.ResourceQuota) error {
	u, err := toUnstructured(desired)
	if err != nil {
		return err
	}
	// Only what we set: an empty creation time or status would never match.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	var liveU *unstructured.Unstructured
	if live != nil {
		if liveU, err = toUnstructured(live); err != nil {
			return err
		}
	}
	res, err := r.applier.Apply(ctx, u, liveU)
	if apierrors.IsAlreadyExists(err) {
		// Created by someone else since it was read: decided again.
		return fmt.Errorf("ResourceQuota %s/%s appeared while it was being created: %w", desired.Namespace, Name, err)
	}
	if err != nil {
		return fmt.Errorf("writing ResourceQuota %s/%s: %w", desired.Namespace, Name, err)
	}
	writemetric.Applied(r.FieldManager, "ResourceQuota", res)
	if res != ssa.Unchanged {
		r.events().Normal(ns, nil, cozyv1alpha1.EventQuotaWritten, "Apply", fmt.Sprintf("ResourceQuota %s %s: %s", Name, res, describe(desired.Spec.Hard)))
		log.FromContext(ctx).Info("instance quota written", "namespace", desired.Namespace, "result", res.String())
	}
	return nil
}

func toUnstructured(q *corev1.ResourceQuota) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(q)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ResourceQuota"))
	return u, nil
}

// describe lists a quota's limits, sorted.
func describe(hard corev1.ResourceList) string {
	keys := make([]string, 0, len(hard))
	for k := range hard {
		keys = append(keys, string(k))
	}
	sortStrings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		q := hard[corev1.ResourceName(k)]
		s += k + "=" + q.String()
	}
	return s
}
