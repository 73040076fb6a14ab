package instance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/readiness"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// Event reasons on instances.
const (
	EventCreated         = "Created"
	EventUpdated         = "Updated"
	EventDriftCorrected  = "DriftCorrected"
	EventTakeoverRefused = "TakeoverRefused"
	EventAdopted         = "Adopted"
	EventInvalidSpec     = "InvalidSpec"
	EventApplyFailed     = "ApplyFailed"
)

// errConflict: the backing object changed between our read and our
// write; the reconcile starts over on a fresh read.
var errConflict = errors.New("the backing object changed while it was being written")

const conflictRetry = 200 * time.Millisecond

// Reconciler is the generic instance reconciler of one backend.
type Reconciler struct {
	// Name names the controller and its field manager, e.g. cozystack-helm.
	Name    string
	Backend Backend
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: an object with a backing
	// object's name but none of our labels is not in the label-filtered
	// cache, and must still be seen before anything is applied.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Workers   int
	// ForeignRecheck is how often an instance blocked by a foreign object
	// with its backing object's name looks again (default 30s).
	ForeignRecheck time.Duration

	applier ssa.Applier
	defs    *registry
	watches *dynamicwatch.Set

	// Platform namespaces known to exist (TargetNamespacing), and kinds
	// watched only to release instances (Releasing), by definition name:
	// platform.go.
	namespaces sync.Map
	releasedMu sync.Mutex
	released   map[schema.GroupVersionKind]string
}

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
	r.applier = ssa.Applier{Client: r.Client, FieldManager: r.Name}
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
	if err := r.watches.Watch(r.Backend.TargetGVK(), dynamicwatch.Options{Map: mapTarget, Filter: hasApplicationLabels}); err != nil {
		return fmt.Errorf("watching %s (is its CRD installed?): %w", r.Backend.TargetGVK().Kind, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Name + "-definitions").
		For(&cozyv1alpha1.ApplicationDefinition{}).
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
// platform namespace (TargetNamespacing).
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
	if err := r.watches.Watch(def.GVK, dynamicwatch.Options{}); err != nil {
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

// Reconcile brings one instance's backing object to its desired state and
// projects its status back.
func (r *Reconciler) Reconcile(ctx context.Context, req dynamicwatch.Request) (ctrl.Result, error) {
	def := r.defs.forKind(req.GVK)
	if def == nil {
		if r.isReleased(req.GVK) {
			return r.reconcileReleased(ctx, req)
		}
		return ctrl.Result{}, nil
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(req.GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, inst); err != nil {
		// Gone: the garbage collector removes the backing object through
		// its ownerReference; one in a platform namespace is removed here.
		if apierrors.IsNotFound(err) {
			readiness.Forget(req.GVK.Kind, req.Namespace, req.Name)
			return ctrl.Result{}, r.collectOrphans(ctx, req)
		}
		return ctrl.Result{}, err
	}
	if !inst.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, def, inst)
	}
	if err := r.ensureFinalizer(ctx, def, inst); err != nil {
		return ctrl.Result{}, err
	}

	old, err := readStatus(inst)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := *old.DeepCopy()
	target, rerr := r.reconcileTarget(ctx, def, inst)
	if errors.Is(rerr, errConflict) {
		// Not worth a status change: read again and retry shortly.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	r.summarize(def, inst, target, rerr, &status)
	if err := r.writeStatus(ctx, inst, old, &status); err != nil {
		return ctrl.Result{}, err
	}
	recordReadiness(req.GVK.Kind, req.Namespace, req.Name, &status)
	if ownership.IsNotOwned(rerr) {
		// The foreign object carries none of our labels, so no event will
		// tell us when its owner removes it: look again from time to time.
		return ctrl.Result{RequeueAfter: r.foreignRecheck()}, nil
	}
	return reconcileerr.Result(rerr)
}

func (r *Reconciler) foreignRecheck() time.Duration {
	if r.ForeignRecheck > 0 {
		return r.ForeignRecheck
	}
	return 30 * time.Second
}

// ensureFinalizer keeps the backend's finalizer on instances whose
// definition needs one, and takes it off when the definition stops needing it.
func (r *Reconciler) ensureFinalizer(ctx context.Context, def *Definition, inst *unstructured.Unstructured) error {
	fz, ok := r.Backend.(Finalizing)
	if !ok {
		return nil
	}
	want := fz.Finalizer(def)
	patch := client.MergeFromWithOptions(inst.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := false
	if want != "" && !controllerutil.ContainsFinalizer(inst, want) {
		changed = controllerutil.AddFinalizer(inst, want)
	}
	if want != appsv1alpha1.FinalizerDestroy && controllerutil.ContainsFinalizer(inst, appsv1alpha1.FinalizerDestroy) {
		changed = controllerutil.RemoveFinalizer(inst, appsv1alpha1.FinalizerDestroy) || changed
	}
	if !changed {
		return nil
	}
	return r.Client.Patch(ctx, inst, patch)
}

// reconcileTarget builds, guards and applies the backing object. It returns
// the live backing object (nil when it could not be written).
func (r *Reconciler) reconcileTarget(ctx context.Context, def *Definition, inst *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ns, platform := r.targetNamespace(inst)
	if platform {
		// A backing object an earlier version wrote in the tenant's
		// namespace stays untouched; a platform namespace that is not ours
		// gets nothing (platform.go).
		legacy, err := r.legacyTarget(ctx, def, inst)
		if err != nil {
			return nil, err
		}
		if legacy != nil {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonLegacyBackingObject, errors.New(LegacyMessage(legacy, ns)))
		}
		if err := r.ensureNamespace(ctx, ns, inst.GetNamespace()); err != nil {
			return nil, err
		}
	}
	key := &unstructured.Unstructured{}
	key.SetGroupVersionKind(r.Backend.TargetGVK())
	key.SetNamespace(ns)
	key.SetName(r.Backend.TargetName(def, inst))
	live, err := r.live(ctx, key)
	if err != nil {
		return nil, err
	}
	desired, err := r.desired(def, inst, live)
	if err != nil {
		r.event(inst, "Warning", EventInvalidSpec, "Build", err.Error())
		return nil, err
	}
	var verdict ownership.Verdict
	if platform && Stale(live, inst) {
		return nil, r.replaceStale(ctx, live)
	}
	if platform {
		verdict, err = DecidePlatform(desired.GetKind(), live, inst)
	} else {
		verdict, err = ownership.Decide(desired.GetKind(), live, AdoptClaim(def, inst))
	}
	if verdict == ownership.Foreign {
		takeoverRefusalsTotal.WithLabelValues(r.Name, inst.GetKind()).Inc()
		r.event(inst, "Warning", EventTakeoverRefused, "Guard", err.Error())
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonBackingObjectNotOwned, err)
	}
	// Suspended: spec.suspend is the only field written (operations.go).
	if hold, err := r.applySuspend(ctx, inst, live, verdict); hold || err != nil {
		return live, err
	}
	var opts []ssa.Option
	if ll, ok := r.Backend.(LiveLabeling); ok {
		opts = append(opts, ssa.LiveLabels(ll.LiveLabels()...))
	}
	if verdict == ownership.Adopt {
		// The verdict holds for the version we read: if the object changed
		// since (deleted and recreated, claimed by a controller), the API
		// server refuses the apply and we decide again on a fresh read.
		opts = append(opts, ssa.IfUnchanged())
	}
	res, err := r.applier.Apply(ctx, desired, live, opts...)
	if err != nil {
		if apierrors.IsConflict(err) {
			// The object moved on since it was read (a label that follows
			// the live object, an adoption decided on that version).
			return nil, errConflict
		}
		if platform {
			err = r.applyErrNamespaceGone(err, ns)
		}
		r.event(inst, "Warning", EventApplyFailed, "Apply", err.Error())
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonApplyFailed, fmt.Errorf("the API server refused %s %s: %w", desired.GetKind(), desired.GetName(), err))
		}
		return nil, err
	}
	if verdict == ownership.Adopt {
		adoptionsTotal.WithLabelValues(r.Name, inst.GetKind()).Inc()
		writesTotal.WithLabelValues(r.Name, inst.GetKind(), "adopted").Inc()
		kept := "its spec was kept"
		if desired.GetGeneration() != live.GetGeneration() {
			kept = fmt.Sprintf("its spec was brought to the desired state (generation %d to %d)", live.GetGeneration(), desired.GetGeneration())
		}
		r.event(inst, "Normal", EventAdopted, "Adopt", fmt.Sprintf("adopted %s %s (uid %s) as the %s annotation allows; %s",
			desired.GetKind(), desired.GetName(), live.GetUID(), appsv1alpha1.AnnotationAdopt, kept))
		if err := r.takeOverFields(ctx, desired); err != nil {
			return nil, err
		}
		return desired, nil
	}
	kind, name := desired.GetKind(), desired.GetName()
	if res != ssa.Unchanged {
		writesTotal.WithLabelValues(r.Name, inst.GetKind(), res.String()).Inc()
		// Apply decoded the API server's answer into desired: the object as
		// it now is, so the status projected below is already current.
		live = desired
	}
	switch res {
	case ssa.Created:
		r.event(inst, "Normal", EventCreated, "Apply", fmt.Sprintf("created %s %s", kind, name))
	case ssa.Updated:
		r.event(inst, "Normal", EventUpdated, "Apply", fmt.Sprintf("updated %s %s to the desired state", kind, name))
	case ssa.Corrected:
		r.event(inst, "Normal", EventDriftCorrected, "Apply", fmt.Sprintf("%s %s was changed outside this instance; its managed fields were restored", kind, name))
	}
	return live, nil
}

// desired is the backend's object plus the common contract.
func (r *Reconciler) desired(def *Definition, inst, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, err := r.Backend.Build(def, inst, live)
	if err != nil {
		if _, ok := reconcileerr.AsStalled(err); ok {
			return nil, err
		}
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, err)
	}
	obj.SetGroupVersionKind(r.Backend.TargetGVK())
	obj.SetName(r.Backend.TargetName(def, inst))
	ns, platform := r.targetNamespace(inst)
	obj.SetNamespace(ns)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range CommonLabels(def, inst) {
		labels[k] = v
	}
	if platform {
		for k, v := range PlatformLabels(inst) {
			labels[k] = v
		}
	}
	if ll, ok := r.Backend.(LiveLabeling); ok {
		labels = FollowLive(labels, live, ll.LiveLabels())
	}
	obj.SetLabels(labels)
	if !platform {
		// An ownerReference cannot cross namespaces: a backing object in
		// a platform namespace is owned through its labels and the
		// backend's finalizer.
		obj.SetOwnerReferences([]metav1.OwnerReference{ownership.ControllerRef(ownerOf(inst))})
	}
	DesiredOperations(inst, obj)
	return obj, nil
}

func ownerOf(inst *unstructured.Unstructured) ownership.Owner {
	return ownership.Owner{GVK: inst.GroupVersionKind(), Name: inst.GetName(), UID: string(inst.GetUID())}
}

// live reads the backing object: from the (label-filtered) cache, and from
// the API server when the cache has none, so a foreign object without our
// labels is seen before anything is written.
func (r *Reconciler) live(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live, err := ssa.Get(ctx, r.Client, desired)
	if err != nil || live != nil {
		return live, err
	}
	return ssa.Get(ctx, r.APIReader, desired)
}

// summarize computes the instance status: the backend's projection when the
// backing object is in place, or the reason it is not. It is the one place
// that decides Ready.
func (r *Reconciler) summarize(def *Definition, inst, target *unstructured.Unstructured, err error, status *appsv1alpha1.ApplicationStatus) {
	status.ObservedGeneration = inst.GetGeneration()
	ProjectOperations(inst, target, status)
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	if err != nil {
		if s, ok := reconcileerr.AsStalled(err); ok {
			conditions.MarkStalled(h, s.Reason, s.Error())
			return
		}
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "retrying: "+err.Error())
		return
	}
	r.Backend.ProjectStatus(def, inst, SuspendedView(inst, target), status)
}

func readStatus(inst *unstructured.Unstructured) (*appsv1alpha1.ApplicationStatus, error) {
	st := &appsv1alpha1.ApplicationStatus{}
	m, ok, err := unstructured.NestedMap(inst.Object, "status")
	if err != nil || !ok {
		return st, nil //nolint:nilerr // a malformed status is rewritten from scratch
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, st); err != nil {
		return &appsv1alpha1.ApplicationStatus{}, nil //nolint:nilerr // as above
	}
	return st, nil
}

// writeStatus updates the status subresource when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, inst *unstructured.Unstructured, old, status *appsv1alpha1.ApplicationStatus) error {
	if equality.Semantic.DeepEqual(old, status) {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return err
	}
	u := inst.DeepCopy()
	u.Object["status"] = m
	if err := r.Client.Status().Update(ctx, u); err != nil {
		if apierrors.IsConflict(err) {
			return reconcileerr.Waiting("Conflict", 100*time.Millisecond, err)
		}
		return err
	}
	return nil
}

// reconcileDelete holds a finalizing instance until its backing object is
// gone, then lets it go.
func (r *Reconciler) reconcileDelete(ctx context.Context, def *Definition, inst *unstructured.Unstructured) (ctrl.Result, error) {
	if _, ok := r.Backend.(Finalizing); !ok {
		return ctrl.Result{}, nil
	}
	var ours []string
	for _, f := range inst.GetFinalizers() {
		if contains(r.ourFinalizers(def), f) {
			ours = append(ours, f)
		}
	}
	if len(ours) == 0 {
		return ctrl.Result{}, nil
	}
	// The backing object at the derived name in the instance's namespace
	// when the instance controls it, and every object it owns elsewhere
	// (platform.go).
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(r.Backend.TargetGVK())
	target.SetNamespace(inst.GetNamespace())
	target.SetName(r.Backend.TargetName(def, inst))
	live, err := ssa.Get(ctx, r.APIReader, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	if live != nil && ownership.Check(live.GetKind(), live, ownerOf(inst)) != nil {
		live = nil
	}
	left, err := r.deleteOwned(ctx, inst, live)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(left) > 0 {
		live = left[0]
		old, _ := readStatus(inst)
		status := *old.DeepCopy()
		h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
		conditions.MarkReconciling(h, appsv1alpha1.ReasonDeleting,
			fmt.Sprintf("waiting for %s %s/%s to be deleted (its resources are being destroyed)", live.GetKind(), live.GetNamespace(), live.GetName()))
		if err := r.writeStatus(ctx, inst, old, &status); err != nil && !apierrors.IsNotFound(err) {
			return reconcileerr.Result(err)
		}
		// The backing object's deletion event brings us back.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	patch := client.MergeFromWithOptions(inst.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for _, f := range ours {
		controllerutil.RemoveFinalizer(inst, f)
	}
	if err := r.Client.Patch(ctx, inst, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) event(inst *unstructured.Unstructured, eventType, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(inst, nil, eventType, reason, action, "%s", note)
}
