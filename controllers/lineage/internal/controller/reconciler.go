// Package controller writes upstream Cozystack's lineage labels on the objects
// an instance's HelmRelease renders. One reconcile handles one namespace: every
// watched object in it is mapped to its HelmRelease and from there to the
// instance, and the labels pkg/lineage computes are patched where they differ.
package controller

import (
	"context"
	"encoding/json"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/lineage"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// Labels helm-controller's origin post-renderer writes on every object a
// HelmRelease renders.
const (
	LabelHelmReleaseName      = "helm.toolkit.fluxcd.io/name"
	LabelHelmReleaseNamespace = "helm.toolkit.fluxcd.io/namespace"
	// LabelSystemNamespace marks a namespace upstream's webhook skips.
	LabelSystemNamespace = "cozystack.io/system"
)

// Rendered are the kinds upstream's webhook labels that a chart renders
// (carrying helm-controller's labels) or a workload controller or operator
// makes for a rendered object (carrying an owner reference).
var Rendered = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
}

// PodGVK: Pods are made by workload controllers from templates the
// post-renderer does not label; they are traced through their owner
// references.
var PodGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// WorkloadMonitorGVK: upstream's charts render a WorkloadMonitor per
// workload, and its webhook labels them; labelled here when the kind is
// served (upstream's CRD) when the controller starts.
var WorkloadMonitorGVK = schema.GroupVersionKind{Group: "cozystack.io", Version: "v1alpha1", Kind: "WorkloadMonitor"}

var helmReleaseGVK = helmv2.GroupVersion.WithKind("HelmRelease")

// maxOwnerDepth bounds the walk from an object to one without owners that
// carries the HelmRelease's label (Pod → ReplicaSet → Deployment; Pod → Job
// → CronJob; an operator's Service → its Cluster).
const maxOwnerDepth = 4

func meta(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(gvk)
	return o
}

func metaList(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// CacheByObject limits the cache of HelmReleases to those carrying the
// application kind label (the instances' releases). The labelled kinds are
// cached whole (metadata only): what an operator makes carries none of
// helm-controller's labels.
func CacheByObject() map[client.Object]cache.ByObject {
	app, _ := labels.NewRequirement(appsv1alpha1.LabelApplicationKind, selection.Exists, nil)
	return map[client.Object]cache.ByObject{
		meta(helmReleaseGVK): {Label: labels.NewSelector().Add(*app)},
	}
}

// Reconciler labels the objects of one namespace.
type Reconciler struct {
	// Name is the controller's, the label of its writes' count
	// (pkg/writemetric).
	Name   string
	Client client.Client
	// Reader reads what the cache does not hold: an object's owners.
	Reader client.Reader
	// kinds are the kinds labelled: Rendered, Pods and, when served,
	// WorkloadMonitors (SetupWithManager).
	kinds []schema.GroupVersionKind
}

// SetupWithManager watches the labelled kinds, Pods, the instances'
// HelmReleases, ApplicationDefinitions and Namespaces; each event enqueues the
// namespace it concerns.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.kinds = append(append([]schema.GroupVersionKind{}, Rendered...), PodGVK)
	switch _, err := mgr.GetRESTMapper().RESTMapping(WorkloadMonitorGVK.GroupKind(), WorkloadMonitorGVK.Version); {
	case apimeta.IsNoMatchError(err):
		mgr.GetLogger().Info("WorkloadMonitors are not served: none is labelled", "kind", WorkloadMonitorGVK.String())
	case err != nil:
		return err
	default:
		r.kinds = append(r.kinds, WorkloadMonitorGVK)
	}
	ns := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("lineage").
		WatchesMetadata(meta(helmReleaseGVK), ns, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}, ownerChanged))).
		Watches(&cozyv1alpha1.ApplicationDefinition{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOfKind),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(meta(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}),
			handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
			}), builder.WithPredicates(predicate.LabelChangedPredicate{}))
	for _, gvk := range r.kinds {
		b = b.WatchesMetadata(meta(gvk), ns, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, ownerChanged)))
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: workers}).Complete(r)
}

// ownerChanged passes updates that change an object's owner references
// (a Pod or claim adopted or orphaned), not the status churn of a running
// Pod.
var ownerChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld == nil || e.ObjectNew == nil ||
		!equality.Semantic.DeepEqual(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
}}

// namespacesOfKind maps a definition to the namespaces holding a release of
// its kind.
func (r *Reconciler) namespacesOfKind(ctx context.Context, o client.Object) []reconcile.Request {
	def, ok := o.(*cozyv1alpha1.ApplicationDefinition)
	if !ok {
		return nil
	}
	list := metaList(helmReleaseGVK)
	if err := r.Client.List(ctx, list, client.MatchingLabels{appsv1alpha1.LabelApplicationKind: def.Spec.Application.Kind}); err != nil {
		log.FromContext(ctx).Error(err, "listing HelmReleases", "kind", def.Spec.Application.Kind)
		return nil
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for _, hr := range list.Items {
		if !seen[hr.Namespace] {
			seen[hr.Namespace] = true
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: hr.Namespace}})
		}
	}
	return out
}

// Reconcile labels every watched object of namespace req.Name that one of
// the namespace's instance releases rendered.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	namespace := req.Name
	if skipNamespace(ctx, r.Client, namespace) {
		return ctrl.Result{}, nil
	}
	releases, err := r.releases(ctx, namespace)
	if err != nil || len(releases) == 0 {
		return ctrl.Result{}, err
	}
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, gvk := range r.kinds {
		list := metaList(gvk)
		if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return ctrl.Result{}, err
		}
		for i := range list.Items {
			o := &list.Items[i]
			o.SetGroupVersionKind(gvk)
			if rel := r.releaseOfObject(ctx, o, releases); rel != nil {
				keep(r.label(ctx, o, rel))
			}
		}
	}
	return ctrl.Result{}, firstErr
}

// skipNamespace: upstream's webhook sees no object in kube-system, default
// or a namespace labelled cozystack.io/system=true, so neither does this.
func skipNamespace(ctx context.Context, c client.Client, name string) bool {
	if name == "kube-system" || name == "default" {
		return true
	}
	ns := meta(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
	if err := c.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		return true
	}
	return ns.Labels[LabelSystemNamespace] == "true" || ns.DeletionTimestamp != nil
}

// releaseOf is the HelmRelease named by helm-controller's labels, when they
// name one in the object's own namespace.
func releaseOf(o client.Object) string {
	l := o.GetLabels()
	name := l[LabelHelmReleaseName]
	if name == "" {
		return ""
	}
	if ns, ok := l[LabelHelmReleaseNamespace]; ok && ns != o.GetNamespace() {
		return ""
	}
	return name
}

// releaseOfObject is the instance release o belongs to, found as upstream's
// webhook walks ownership (pkg/lineage WalkOwnershipGraph upstream): an
// object with owner references belongs to what its owners belong to, each
// owner tried in order and the first that leads to an instance release
// winning; an object without any belongs to the release helm-controller's
// labels name; an owner that is itself an instance's HelmRelease is that
// release. The walk reads owners from the API server, stops after
// maxOwnerDepth owners, and skips an owner it cannot read or whose uid is
// not the reference's.
func (r *Reconciler) releaseOfObject(ctx context.Context, o client.Object, releases map[string]*release) *release {
	return r.walk(ctx, o, releases, 0)
}

func (r *Reconciler) walk(ctx context.Context, o client.Object, releases map[string]*release, depth int) *release {
	refs := o.GetOwnerReferences()
	if len(refs) == 0 {
		return releases[releaseOf(o)]
	}
	if depth == maxOwnerDepth {
		return nil
	}
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		if gv.Group == helmReleaseGVK.Group && ref.Kind == helmReleaseGVK.Kind {
			if rel := releases[ref.Name]; rel != nil && rel.uid == ref.UID {
				return rel
			}
			continue
		}
		owner := meta(gv.WithKind(ref.Kind))
		if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}, owner); err != nil || owner.UID != ref.UID {
			continue
		}
		if rel := r.walk(ctx, owner, releases, depth+1); rel != nil {
			return rel
		}
	}
	return nil
}

// release is what an object's labels are computed from.
type release struct {
	inst lineage.Instance
	def  *cozyv1alpha1.ApplicationDefinitionSpec
	uid  types.UID // the HelmRelease's
}

// releases maps the namespace's instance HelmReleases by name to their
// instance and definition. A release is an instance's when its application
// labels name a kind with a definition, its name is the definition's prefix
// plus the instance name, and a controller reference, if it has one, names
// that same instance.
func (r *Reconciler) releases(ctx context.Context, namespace string) (map[string]*release, error) {
	list := metaList(helmReleaseGVK)
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	defs := &cozyv1alpha1.ApplicationDefinitionList{}
	if err := r.Client.List(ctx, defs); err != nil {
		return nil, err
	}
	byKind := map[string]*instance.Definition{}
	for i := range defs.Items {
		d, err := instance.Resolve(&defs.Items[i])
		if err != nil {
			continue
		}
		byKind[d.GVK.Kind] = d
	}
	out := map[string]*release{}
	for i := range list.Items {
		hr := &list.Items[i]
		if rel := instanceRelease(hr, byKind); rel != nil {
			out[hr.Name] = rel
		}
	}
	return out, nil
}

func instanceRelease(hr *metav1.PartialObjectMetadata, byKind map[string]*instance.Definition) *release {
	l := hr.Labels
	group, kind, name := l[appsv1alpha1.LabelApplicationGroup], l[appsv1alpha1.LabelApplicationKind], l[appsv1alpha1.LabelApplicationName]
	if group != appsv1alpha1.GroupVersion.Group || kind == "" || name == "" {
		return nil
	}
	d := byKind[kind]
	if d == nil || hr.Name != d.Prefix()+name {
		return nil
	}
	if ref := metav1.GetControllerOf(hr); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != group || ref.Kind != kind || ref.Name != name {
			return nil
		}
	}
	return &release{
		inst: lineage.Instance{Group: group, Kind: kind, Name: name, Namespace: hr.Namespace},
		def:  &d.Object.Spec,
		uid:  hr.UID,
	}
}

// label patches the lineage labels of o that differ from rel's; nothing
// when o belongs to no instance release or already carries them.
func (r *Reconciler) label(ctx context.Context, o *metav1.PartialObjectMetadata, rel *release) error {
	if rel == nil {
		return nil
	}
	want := lineage.Labels(rel.def, rel.inst, lineage.Object{
		GroupKind: o.GroupVersionKind().GroupKind(), Name: o.Name, Labels: o.Labels,
	})
	diff := missingLabels(o.Labels, want)
	if len(diff) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": diff, "resourceVersion": o.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	kind := o.Kind
	if err := r.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			// Refused by admission (another policy guards the object, e.g.
			// cozystack-values) or RBAC: retrying changes nothing; the
			// next change of the object or its release tries again.
			log.FromContext(ctx).Info("labelling refused", "kind", kind, "namespace", o.Namespace, "name", o.Name, "reason", err.Error())
			return nil
		}
		return fmt.Errorf("labelling %s %s/%s: %w", kind, o.Namespace, o.Name, err)
	}
	writemetric.Count(r.Name, kind, writemetric.Labelled)
	log.FromContext(ctx).Info("labelled", "kind", kind, "namespace", o.Namespace, "name", o.Name, "labels", diff)
	return nil
}
