package instance

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/ownwrite"
	"github.com/cozyplane/cozyplane/pkg/readymetric"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/record"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/statusapply"
)

// errConflict: the backing object changed between our read and our
// write; the reconcile starts over on a fresh read.
var errConflict = errors.New("the backing object changed while it was being written")

// errNamespaceTerminating: the backing object could not be created because
// the instance's own namespace is being deleted, and the instance with it.
var errNamespaceTerminating = errors.New("the instance's namespace is being deleted")

// terminatingMemo is how long a create refused because its namespace is
// being deleted keeps the creates of other instances there from being sent:
// a namespace deletion takes seconds to remove a thousand instances, and a
// namespace of that name made again meanwhile waits no longer than this.
const terminatingMemo = 10 * time.Second

// namespaceTerminatingError is errNamespaceTerminating for a create not
// sent: retry is when to look at the instance again.
type namespaceTerminatingError struct{ retry time.Duration }

func (e *namespaceTerminatingError) Error() string {
	return errNamespaceTerminating.Error() + " (a create there was refused a moment ago)"
}

func (e *namespaceTerminatingError) Unwrap() error { return errNamespaceTerminating }

// refusedTerminating remembers that a create in ns was refused because ns
// is being deleted, and forgets the namespaces whose time has passed.
func (r *Reconciler) refusedTerminating(ns string) {
	now := time.Now()
	r.terminating.Range(func(k, v any) bool {
		if now.After(v.(time.Time)) {
			r.terminating.CompareAndDelete(k, v)
		}
		return true
	})
	r.terminating.Store(ns, now.Add(terminatingMemo))
}

// namespaceTerminating returns a namespaceTerminatingError when a create in
// ns was refused because ns is being deleted, less than terminatingMemo ago;
// nil otherwise. The retry is spread over a second past that time, so that
// the instances held do not all send their create at once.
func (r *Reconciler) namespaceTerminating(ns string) error {
	v, ok := r.terminating.Load(ns)
	if !ok {
		return nil
	}
	left := time.Until(v.(time.Time))
	if left <= 0 {
		r.terminating.CompareAndDelete(ns, v)
		return nil
	}
	return &namespaceTerminatingError{retry: left + time.Duration(rand.Int64N(int64(time.Second)))}
}

const conflictRetry = 200 * time.Millisecond

// Reconciler is the generic instance reconciler of one backend.
type Reconciler struct {
	// Name names the controller and its field manager, e.g. cozystack-helm.
	Name    string
	Backend Backend
	// Components are the backend's differences from the common loop;
	// SetupWithManager fills in the defaults of those left out.
	Components Components
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: an object with a backing
	// object's name but none of our labels is not in the label-filtered
	// cache; the create that finds it sends the reconcile there (live).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Workers   int
	// ForeignRecheck is how often an instance blocked by a foreign object
	// with its backing object's name looks again (default 30s).
	ForeignRecheck time.Duration
	// Sharded: the instances are watched through a shard's label selector
	// (--watch-label-selector), so a deletion the watch shows may be an
	// instance relabelled into another shard; without one, it is the
	// instance's deletion (collectOrphans).
	Sharded bool

	applier ssa.Applier
	defs    *registry
	watches *dynamicwatch.Set
	// owned is the index of the backing objects by instance (indexOwned),
	// when the backend finds them by owner.
	owned *ownerIndex

	// Platform namespaces known to exist (PlatformNamespaces, Storage),
	// and kinds watched only to release instances (Finalizer), by
	// definition name: platform.go, releasing.go.
	namespaces sync.Map
	// terminating holds the tenant namespaces a create was refused in
	// because they are being deleted, each until a time (time.Time): the
	// creates of other instances there are not sent meanwhile
	// (namespaceTerminating).
	terminating sync.Map
	// uncached holds the backing objects (by namespace/name) that exist but
	// are not in the cache (someone else's, or just created): read from the
	// API server until the cache holds them or they are gone.
	uncached sync.Map
	// deleted holds the uid of each instance the watch saw deleted
	// (dynamicwatch.Request to types.UID), until its reconcile has run
	// (collectTarget).
	deleted sync.Map
	// finalized holds, for each instance whose finalizers this controller
	// removed, the version it removed them from, until the cache shows
	// another version or none (behindFinalized).
	finalized ownwrite.Writes[dynamicwatch.Request, struct{}]
	// targetWrites holds this controller's writes of backing objects being
	// sent, and the last of each until its watch event shows it
	// (writingTarget, wroteTarget, targetEcho).
	targetWrites ownwrite.Writes[types.NamespacedName, struct{}]
	releasedMu   sync.Mutex
	released     map[schema.GroupVersionKind]string
	// monitors: WorkloadMonitors are served and watched (workloads.go).
	monitors bool
}

// Reconcile brings one instance's backing object to its desired state and
// projects its status back.
func (r *Reconciler) Reconcile(ctx context.Context, req dynamicwatch.Request) (ctrl.Result, error) {
	def := r.defs.forKind(req.GVK)
	if def == nil {
		if r.isReleased(req.GVK) {
			return r.reconcileReleased(ctx, req)
		}
		r.deleted.Delete(req)
		return ctrl.Result{}, nil
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(req.GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, inst); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.gone(ctx, req)
		}
		return ctrl.Result{}, err
	}
	r.forgetEarlier(req, inst.GetUID())
	if r.behindOwnWrite(inst) || r.behindFinalized(req, inst) {
		return ctrl.Result{}, nil
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
	t, rerr := r.reconcileTarget(ctx, def, inst)
	if errors.Is(rerr, errConflict) {
		// Not worth a status change: read again and retry shortly.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if errors.Is(rerr, errNamespaceTerminating) {
		// The namespace's deletion removed the backing object before the
		// instance: nothing can be created there, and nothing needs to be,
		// since the instance goes next. No event, no status; no retry
		// after a refused create. A create not sent because another was
		// refused there a moment ago is looked at again once that stops
		// standing, in case the namespace was made again since.
		log.FromContext(ctx).V(1).Info("not creating the backing object again", "why", rerr.Error())
		var skipped *namespaceTerminatingError
		if errors.As(rerr, &skipped) {
			return ctrl.Result{RequeueAfter: skipped.retry}, nil
		}
		return ctrl.Result{}, nil
	}
	r.summarize(def, inst, t.result, t.external, rerr, &status)
	if err := r.projectUpstreamView(ctx, inst, &status); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, inst, &status); err != nil {
		return ctrl.Result{}, err
	}
	recordReadiness(req.GVK.Kind, req.Namespace, req.Name, &status)
	return reconcileerr.Result(rerr, r.foreignRecheck())
}

// gone handles a request whose instance the cache no longer holds: the
// placement removes its backing objects (with the garbage collector, when
// the instance controls them by ownerReference), and what was kept for the
// instance is forgotten.
func (r *Reconciler) gone(ctx context.Context, req dynamicwatch.Request) error {
	readymetric.Forget(req.GVK.Kind, req.Namespace, req.Name)
	r.statusWriter().Forget(req.GVK, req.NamespacedName)
	if err := r.Components.Placement.gone(ctx, r, req); err != nil {
		return err
	}
	r.deleted.Delete(req)
	r.finalized.Forget(req)
	return nil
}

func (r *Reconciler) foreignRecheck() time.Duration {
	if r.ForeignRecheck > 0 {
		return r.ForeignRecheck
	}
	return 30 * time.Second
}

// ensureFinalizer keeps the backend's finalizer on instances whose
// definition needs one (swapping a former one for it). An instance whose
// definition needs none is left as it is.
func (r *Reconciler) ensureFinalizer(ctx context.Context, def *Definition, inst *unstructured.Unstructured) error {
	want := r.Components.Finalizer.Finalizer(def)
	if want == "" {
		// One already there stays until the instance is deleted
		// (reconcileDelete takes it off then): taking it off now would
		// cost a write per instance, and gain nothing.
		return nil
	}
	patch := client.MergeFromWithOptions(inst.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := false
	if !controllerutil.ContainsFinalizer(inst, want) {
		changed = controllerutil.AddFinalizer(inst, want)
	}
	// A former finalizer is swapped for the current one.
	for _, f := range r.Components.Finalizer.Finalizers() {
		if f != want && controllerutil.ContainsFinalizer(inst, f) {
			changed = controllerutil.RemoveFinalizer(inst, f) || changed
		}
	}
	if !changed {
		return nil
	}
	return r.Client.Patch(ctx, inst, patch)
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
	obj.SetNamespace(r.Components.Placement.Namespace(inst))
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range CommonLabels(def, inst) {
		labels[k] = v
	}
	obj.SetLabels(FollowLive(labels, live, r.Components.LiveLabels))
	r.Components.Placement.own(obj, inst)
	DesiredOperations(inst, obj)
	return obj, nil
}

func ownerOf(inst *unstructured.Unstructured) ownership.Owner {
	return ownership.Owner{GVK: inst.GroupVersionKind(), Name: inst.GetName(), UID: string(inst.GetUID())}
}

// live reads the backing object from the (label-filtered) cache. That is
// enough to write: a backing object the cache does not hold is created, not
// applied, and the create fails when one of that name exists after all
// (someone else's, without our labels; or ours, not in the cache yet), so
// nothing is overwritten unseen. Such a name is then read from the API server
// (see uncached) until the cache holds it or it is gone.
func (r *Reconciler) live(ctx context.Context, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live, err := ssa.Get(ctx, r.Client, desired)
	key := client.ObjectKeyFromObject(desired)
	if err != nil || live != nil {
		r.uncached.Delete(key)
		return live, err
	}
	if _, ok := r.uncached.Load(key); !ok {
		return nil, nil
	}
	if live, err = ssa.Get(ctx, r.APIReader, desired); err == nil && live == nil {
		r.uncached.Delete(key)
	}
	return live, err
}

// retryingPrefix begins the Reconciling message of an instance whose last
// reconcile failed and is retried (summarize; settledAtGeneration).
const retryingPrefix = "retrying: "

// summarize computes the instance status: the backend's projection when the
// backing object is in place, or the reason it is not. It is the one place
// that decides Ready. external is a suspend someone else set on the backing
// object (nil: none).
func (r *Reconciler) summarize(def *Definition, inst, target *unstructured.Unstructured, external *ExternalSuspend, err error, status *appsv1alpha1.ApplicationStatus) {
	status.ObservedGeneration = inst.GetGeneration()
	defer func() { status.DisplayVersion = VersionColumn(status.Version) }()
	ProjectOperations(inst, target, external, status)
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	if err != nil {
		if s, ok := reconcileerr.AsStalled(err); ok {
			conditions.MarkStalled(h, s.Reason, s.Error())
			return
		}
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, retryingPrefix+err.Error())
		return
	}
	r.Backend.ProjectStatus(def, inst, SuspendedView(IsSuspended(inst) || external != nil, target), status)
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

// statusFields are the fields of an instance's status besides its
// conditions (appsv1alpha1.ApplicationStatus): the backend owns them all.
var statusFields = statusapply.FieldsOf(appsv1alpha1.ApplicationStatus{})

// statusWriter writes instances' status as the controller's field manager
// (pkg/statusapply): a merge patch of what changed, since the backend owns
// the whole status, at the version the status was decided on.
func (r *Reconciler) statusWriter() statusapply.Writer {
	return statusapply.Writer{Client: r.Client, FieldManager: r.Name, Precondition: true, Patch: true, Held: r.enqueueInstance}
}

// writeStatus writes the status when it changed: the backend owns all of
// it. The instance changed since it was read: a Conflict, read again.
func (r *Reconciler) writeStatus(ctx context.Context, inst *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) error {
	fields, err := statusapply.ToFields(status, statusFields...)
	if err != nil {
		return err
	}
	_, err = r.statusWriter().Write(ctx, inst, statusapply.Of(inst),
		statusapply.Part{Conditions: status.Conditions, AllConditions: true, Fields: fields})
	if apierrors.IsConflict(err) {
		return reconcileerr.Waiting("Conflict", 100*time.Millisecond, err)
	}
	return err
}

// behindOwnWrite reports whether the cached inst is the version our last
// status write replaced: the cache has not caught up with that write yet (a
// backing object's event came first). Nothing is decided on it; the write's
// own event reconciles the instance again. Any other version ends the wait.
func (r *Reconciler) behindOwnWrite(inst *unstructured.Unstructured) bool {
	return r.statusWriter().Await(inst)
}

// enqueueInstance reconciles inst again: an event of it was held while its
// status was being written, and showed another version than the write's.
func (r *Reconciler) enqueueInstance(inst client.Object) {
	r.watches.Enqueue(dynamicwatch.Request{GVK: inst.GetObjectKind().GroupVersionKind(), NamespacedName: client.ObjectKeyFromObject(inst)})
}

// writingTarget tells the backing objects' watch that a write of desired
// is being sent: until it is answered (wroteTarget), events of the object
// are held, since the one the write makes may come before the answer.
func (r *Reconciler) writingTarget(desired *unstructured.Unstructured) {
	r.targetWrites.Writing(client.ObjectKeyFromObject(desired))
}

// wroteTarget ends the write writingTarget began, over live's version (none
// for a create): desired carries the version the API server answered with,
// unless nothing was written. The event of that version is the write's echo
// (targetEcho); an event held meanwhile that showed another version is
// enqueued now.
func (r *Reconciler) wroteTarget(desired, live *unstructured.Unstructured, written bool) {
	key := client.ObjectKeyFromObject(desired)
	var enqueue bool
	if written {
		replaced := ""
		if live != nil {
			replaced = live.GetResourceVersion()
		}
		enqueue = r.targetWrites.Wrote(key, replaced, desired.GetResourceVersion(), struct{}{})
	} else {
		enqueue = r.targetWrites.Unsent(key)
	}
	if enqueue {
		r.watches.Enqueue(mapTarget(desired)...)
	}
}

// targetEcho is the backing objects' watch's Echo: the event of the version
// this controller's last write of the object made, or one that came while a
// write was being sent (held, see wroteTarget). The reconcile that wrote it
// projected the instance's status from the API server's answer, which is
// what the event shows, so it needs no reconcile.
func (r *Reconciler) targetEcho(o client.Object) bool {
	return r.targetWrites.Echo(client.ObjectKeyFromObject(o), o.GetResourceVersion())
}

// observeTarget is told of every event of a backing object: once the cache
// holds an object, or has seen it go, it is read from there, not from the
// API server (see uncached); once it is gone, its writes are forgotten.
func (r *Reconciler) observeTarget(old, o client.Object) {
	if o == nil {
		key := client.ObjectKeyFromObject(old)
		r.targetWrites.Forget(key)
		r.uncached.Delete(key)
		return
	}
	r.uncached.Delete(client.ObjectKeyFromObject(o))
}

// events records on behalf of the controller (nil Recorder: nothing).
func (r *Reconciler) events() record.Events { return record.For(r.Recorder, r.Client) }
