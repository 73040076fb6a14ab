package instance

// Wiring: the manager's cache, the definition controller that starts and stops
// the watches of each served kind, and the mapping from backing objects back
// to their instances.

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// CacheOptions limits the manager's cache of backing objects to those
// carrying the application labels: a cluster may hold thousands of
// HelmReleases that are none of ours. Pass it to manager.New. A shard adds
// its selector's requirements on the instances' labels as the backing
// objects carry them (manager.PrefixedRequirements), so it caches only its own.
func CacheOptions(b Backend, shard ...labels.Requirement) manager.Customize {
	return func(o *ctrl.Options) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(b.TargetGVK())
		req, err := labels.NewRequirement(appsv1alpha1.LabelApplicationKind, selection.Exists, nil)
		if err != nil {
			panic(err) // a constant key: cannot fail
		}
		if o.Cache.ByObject == nil {
			o.Cache.ByObject = map[client.Object]cache.ByObject{}
		}
		o.Cache.ByObject[u] = cache.ByObject{Label: labels.NewSelector().Add(*req).Add(shard...)}
	}
}

// SetupWithManager registers the instance controller (fed by dynamic
// watches) and the definition controller that drives those watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Workers < 1 {
		r.Workers = 1
	}
	r.Components = r.Components.withDefaults()
	r.applier = ssa.Applier{Client: r.Client, FieldManager: r.Name, Creates: ssa.NewHandOvers(r.APIReader)}
	r.defs = newRegistry()
	r.watches = dynamicwatch.New(mgr.GetCache())

	c, err := controller.NewTyped[dynamicwatch.Request](r.Name, mgr, controller.TypedOptions[dynamicwatch.Request]{
		Reconciler:              r,
		MaxConcurrentReconciles: r.Workers,
	})
	if err != nil {
		return err
	}
	if err := c.Watch(r.watches); err != nil {
		return err
	}
	// Backing objects map back to their instance through the contract labels.
	// The echo of the controller's own write of a backing object enqueues
	// nothing: the reconcile that wrote it acted on the API server's answer.
	targets := dynamicwatch.Options{Map: mapTarget, Filter: hasApplicationLabels, Observe: r.observeTarget, Echo: r.targetEcho}
	// Deletes find an instance's backing objects in the cache (platform.go),
	// where a backend looks for them by owner at all: the index is kept from
	// the same events, before their requests are enqueued.
	if r.Components.findsOwned() {
		gvk := r.Backend.TargetGVK()
		x := newOwnerIndex()
		x.synced = func() bool { return r.watches.HasSynced(gvk) }
		targets.Observe = func(old, new client.Object) {
			x.set(old, new)
			r.observeTarget(old, new)
		}
		r.owned = x
	}
	if err := r.watches.Watch(r.Backend.TargetGVK(), targets); err != nil {
		return fmt.Errorf("watching %s (is its CRD installed?): %w", r.Backend.TargetGVK().Kind, err)
	}
	if err := r.watchMonitors(mgr); err != nil {
		return fmt.Errorf("watching WorkloadMonitors: %w", err)
	}
	defs, err := ownSync(context.Background(), mgr.GetCache(), &cozyv1alpha1.ApplicationDefinition{})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Name + "-definitions").
		WatchesRawSource(defs).
		Complete(reconcileFunc(r.reconcileDefinition))
}

type reconcileFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

func hasApplicationLabels(o client.Object) bool {
	l := o.GetLabels()
	return l[appsv1alpha1.LabelApplicationKind] != "" && l[appsv1alpha1.LabelApplicationName] != "" &&
		l[appsv1alpha1.LabelApplicationGroup] == appsv1alpha1.GroupVersion.Group
}

// mapTarget names the instance of a backing object: in the object's
// namespace, or in the one its namespace label names when it lives in a
// platform namespace (PlatformNamespaces).
func mapTarget(o client.Object) []dynamicwatch.Request {
	l := o.GetLabels()
	ns := o.GetNamespace()
	if v := l[appsv1alpha1.LabelApplicationNamespace]; v != "" {
		ns = v
	}
	return []dynamicwatch.Request{{
		GVK:            appsv1alpha1.GroupVersion.WithKind(l[appsv1alpha1.LabelApplicationKind]),
		NamespacedName: types.NamespacedName{Namespace: ns, Name: l[appsv1alpha1.LabelApplicationName]},
	}}
}

// reconcileDefinition keeps the registry and the dynamic watches in line
// with the definitions of this backend. When a served definition changes,
// every instance of its kind is reconciled again, so every backing object
// reaches the new desired state.
func (r *Reconciler) reconcileDefinition(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	obj := &cozyv1alpha1.ApplicationDefinition{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			if err := r.unreleaseDefinition(ctx, req.Name); err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, r.forget(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	def, err := Resolve(obj)
	if err != nil || def.Backend.Type != r.Backend.Type() {
		// Not ours (or not valid: the appdef controller reports that).
		// Instances still holding our finalizers are released (platform.go).
		if err := r.forget(ctx, req.Name); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.releaseKind(obj)
	}
	if obj.Status.CRDName == "" {
		// The kind is not served yet; the appdef controller's status update
		// brings us back here.
		return ctrl.Result{}, nil
	}
	if err := r.unreleaseKind(ctx, def.GVK); err != nil {
		return ctrl.Result{}, err
	}
	gvk := def.GVK
	// A status write the cache shows is forgotten; its own echo enqueues
	// nothing, unless a reconcile that found the cache behind awaits it.
	echo := func(obj client.Object) bool { return r.statusWriter().Echo(gvk, obj) }
	if err := r.watches.Watch(def.GVK, dynamicwatch.Options{Deleted: r.rememberDeleted(def.GVK), Echo: echo}); err != nil {
		if meta.IsNoMatchError(err) {
			// The CRD is not served (yet, or any more): the appdef
			// controller says why on the definition. Look again shortly.
			logger.V(1).Info("kind not served yet", "kind", def.GVK.Kind)
			return ctrl.Result{RequeueAfter: 5 * time.Second}, r.forget(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	prev := r.defs.set(def)
	servedKinds.WithLabelValues(r.Name).Set(float64(len(r.watches.Watched()) - 1 - r.releasedCount())) // minus the backing objects' kind
	if prev == nil || definitionChanged(prev.Object, obj) {
		// A new watch delivers every existing instance by itself; a changed
		// definition needs them all enqueued again.
		n, err := r.enqueueAll(ctx, def.GVK)
		if err != nil {
			return ctrl.Result{}, err
		}
		logger.V(1).Info("definition changed; instances enqueued", "kind", def.GVK.Kind, "instances", n)
	}
	return ctrl.Result{}, nil
}

// definitionChanged reports a change that affects backing objects: the spec
// (generation) or the annotations that tune them.
func definitionChanged(old, cur *cozyv1alpha1.ApplicationDefinition) bool {
	return old.Generation != cur.Generation || !equality.Semantic.DeepEqual(old.Annotations, cur.Annotations) ||
		old.Status.CRDName != cur.Status.CRDName
}

func (r *Reconciler) forget(ctx context.Context, name string) error {
	prev := r.defs.remove(name)
	if prev == nil || r.defs.servesKind(prev.GVK) {
		return nil
	}
	if err := r.watches.Unwatch(ctx, prev.GVK); err != nil {
		return err
	}
	servedKinds.WithLabelValues(r.Name).Set(float64(len(r.watches.Watched()) - 1 - r.releasedCount()))
	return nil
}

func (r *Reconciler) enqueueAll(ctx context.Context, gvk schema.GroupVersionKind) (int, error) {
	if !r.watches.HasSynced(gvk) {
		return 0, nil // the informer's initial list enqueues everything
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.Client.List(ctx, ul); err != nil {
		return 0, err
	}
	reqs := make([]dynamicwatch.Request, 0, len(ul.Items))
	for i := range ul.Items {
		reqs = append(reqs, dynamicwatch.Request{GVK: gvk, NamespacedName: client.ObjectKeyFromObject(&ul.Items[i])})
	}
	r.watches.Enqueue(reqs...)
	return len(reqs), nil
}
