package instance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/phase"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// target is what the phases of reconcileTarget learn and pass on.
type target struct {
	def  *Definition
	inst *unstructured.Unstructured
	// ns is the backing object's namespace (Components.Placement).
	ns      string
	live    *unstructured.Unstructured // nil: it does not exist
	desired *unstructured.Unstructured
	verdict ownership.Verdict
	// held: the instance is suspended, nothing is applied.
	held bool
	// external: the backing object's spec.suspend=true was set by someone
	// else (operations.go); nil otherwise.
	external *ExternalSuspend
	// result is the backing object as it now is, for the status (nil when
	// it could not be written).
	result *unstructured.Unstructured
}

// errExists: the create of a backing object the cache does not hold found
// one of that name.
var errExists = errors.New("the backing object exists but is not cached")

// targetPhases are the steps of reconcileTarget, in order.
func (r *Reconciler) targetPhases() []phase.Phase[*target] {
	return []phase.Phase[*target]{
		{Name: "place", Run: r.place},     // where the object lives, made ready to write in
		{Name: "read", Run: r.read},       // the live backing object
		{Name: "build", Run: r.build},     // the backend's object and the common contract
		{Name: "guard", Run: r.guard},     // ours, adoptable, stale, or someone else's
		{Name: "storage", Run: r.storage}, // the platform namespace the object names for its data
		{Name: "suspend", Run: r.suspend}, // spec.suspend is the only field written
		{Name: "apply", Run: r.apply},     // create or server-side apply, events
	}
}

// reconcileTarget builds, guards and applies the backing object. It returns
// what it learnt: t.result is the backing object as it now is (nil when it
// could not be written), t.external a suspend someone else set on it.
func (r *Reconciler) reconcileTarget(ctx context.Context, def *Definition, inst *unstructured.Unstructured) (*target, error) {
	t := &target{def: def, inst: inst}
	err := phase.Run(ctx, t, r.targetPhases()...)
	if errors.Is(err, errExists) {
		// Decide again on what the API server holds: ours, adoptable, or
		// someone else's.
		t = &target{def: def, inst: inst}
		err = phase.Run(ctx, t, r.targetPhases()...)
	}
	return t, err
}

// place decides the backing object's namespace and prepares it
// (Components.Placement: placement.go).
func (r *Reconciler) place(ctx context.Context, t *target) error {
	t.ns = r.Components.Placement.Namespace(t.inst)
	return r.Components.Placement.prepare(ctx, r, t)
}

// storage creates the platform namespace the desired backing object names
// for data its controller keeps (Components.Storage), before the object is
// written, and writes nothing when a namespace of that name is not the
// backend's.
func (r *Reconciler) storage(ctx context.Context, t *target) error {
	sn := r.Components.Storage
	ns := sn.StorageNamespace(t.desired)
	if ns == "" {
		return nil
	}
	tenant := t.inst.GetNamespace()
	return r.ensureNamespace(ctx, ns, tenant, sn.StorageNamespaceLabels(tenant), nil)
}

func (r *Reconciler) read(ctx context.Context, t *target) error {
	key := &unstructured.Unstructured{}
	key.SetGroupVersionKind(r.Backend.TargetGVK())
	key.SetNamespace(t.ns)
	key.SetName(r.Backend.TargetName(t.def, t.inst))
	var err error
	t.live, err = r.live(ctx, key)
	return err
}

func (r *Reconciler) build(_ context.Context, t *target) error {
	var err error
	if t.desired, err = r.desired(t.def, t.inst, t.live); err != nil {
		r.events().Warning(t.inst, nil, appsv1alpha1.EventInvalidSpec, "Build", err.Error())
	}
	return err
}

// guard decides what the instance may do with the live object
// (Components.Placement): one that is someone else's is refused and looked
// at again from time to time.
func (r *Reconciler) guard(ctx context.Context, t *target) error {
	var err error
	t.verdict, err = r.Components.Placement.decide(ctx, r, t)
	if t.verdict == ownership.Foreign {
		takeoverRefusalsTotal.WithLabelValues(r.Name, t.inst.GetKind()).Inc()
		r.events().Warning(t.inst, nil, appsv1alpha1.EventTakeoverRefused, "Guard", err.Error())
		// The foreign object carries none of our labels, so no event will
		// tell us when its owner removes it: look again from time to time.
		return reconcileerr.Foreign(appsv1alpha1.ReasonBackingObjectNotOwned, err)
	}
	// A stale object being replaced says so; otherwise nil.
	return err
}

// suspend writes spec.suspend when the instance's suspension changed
// (operations.go); a suspended instance's backing object is otherwise left
// as it is. A backing object suspended while the instance is not is read
// from the API server to learn who suspended it: a suspend someone else set
// is kept.
func (r *Reconciler) suspend(ctx context.Context, t *target) error {
	if AsksWhoSuspended(IsSuspended(t.inst), t.live, t.verdict) {
		fresh, err := ssa.Get(ctx, r.APIReader, t.live)
		if err != nil {
			return err
		}
		if fresh == nil || fresh.GetResourceVersion() != t.live.GetResourceVersion() {
			// The cache is behind: decide on the version it catches up with.
			return errConflict
		}
		t.external = SuspendedElsewhere(fresh, r.Name)
	}
	hold, err := r.applySuspend(ctx, t.inst, t.live, t.verdict, t.external)
	if hold || err != nil {
		t.held, t.result = true, t.live
	}
	return err
}

func (r *Reconciler) apply(ctx context.Context, t *target) error {
	if t.held {
		return nil
	}
	inst, desired, live := t.inst, t.desired, t.live
	opts := []ssa.Option{ssa.LiveLabels(r.Components.LiveLabels...)}
	if t.verdict == ownership.Adopt {
		// The verdict holds for the version we read: if the object changed
		// since (deleted and recreated, claimed by a controller), the API
		// server refuses the apply and we decide again on a fresh read.
		opts = append(opts, ssa.IfUnchanged())
	}
	key := client.ObjectKeyFromObject(desired)
	inTenant := desired.GetNamespace() == inst.GetNamespace()
	if live == nil {
		if inTenant {
			if err := r.namespaceTerminating(inst.GetNamespace()); err != nil {
				return err
			}
		}
		// A create: until the cache holds the object, it is read from the
		// API server (the status written below triggers a reconcile that
		// may come first). Remembered before the create is sent, since the
		// object's watch event, which forgets it (observeTarget), may come
		// before the answer.
		r.uncached.Store(key, struct{}{})
	}
	r.writingTarget(desired)
	res, err := r.applier.Apply(ctx, desired, live, opts...)
	r.wroteTarget(desired, live, err == nil && res != ssa.Unchanged)
	if err != nil {
		if live == nil && apierrors.IsAlreadyExists(err) {
			// Not in the cache, yet there: decide again on what the
			// API server holds (it stays remembered as uncached).
			return errExists
		}
		if live == nil {
			r.uncached.Delete(key) // nothing was created
		}
		if apierrors.IsConflict(err) {
			// The object moved on since it was read (a label that follows
			// the live object, an adoption decided on that version).
			return errConflict
		}
		if live == nil && inTenant && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			r.refusedTerminating(inst.GetNamespace())
			return errNamespaceTerminating
		}
		err = r.Components.Placement.applyFailed(r, err, t.ns)
		r.events().Warning(inst, nil, appsv1alpha1.EventApplyFailed, "Apply", err.Error())
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return reconcileerr.Stalled(appsv1alpha1.ReasonApplyFailed, fmt.Errorf("the API server refused %s %s: %w", desired.GetKind(), desired.GetName(), err))
		}
		return err
	}
	if t.verdict == ownership.Adopt {
		adoptionsTotal.WithLabelValues(r.Name, inst.GetKind()).Inc()
		writemetric.Count(r.Name, inst.GetKind(), writemetric.Adopted)
		kept := "its spec was kept"
		if desired.GetGeneration() != live.GetGeneration() {
			kept = fmt.Sprintf("its spec was brought to the desired state (generation %d to %d)", live.GetGeneration(), desired.GetGeneration())
		}
		r.events().Normal(inst, nil, appsv1alpha1.EventAdopted, "Adopt", fmt.Sprintf("adopted %s %s (uid %s) as the %s annotation allows; %s",
			desired.GetKind(), desired.GetName(), live.GetUID(), appsv1alpha1.AnnotationAdopt, kept))
		if err := r.takeOverFields(ctx, desired); err != nil {
			return err
		}
		t.result = desired
		return nil
	}
	kind, name := desired.GetKind(), desired.GetName()
	t.result = live
	if res != ssa.Unchanged {
		writemetric.Applied(r.Name, inst.GetKind(), res)
		// desired is now the object as it is, so the status projected
		// below is already current: an apply decodes the API server's
		// answer into it; a create's answer carries the metadata only (the
		// manager's metadata answers), and a new object has no status.
		t.result = desired
	}
	switch res {
	case ssa.Created:
		r.events().Normal(inst, nil, appsv1alpha1.EventCreated, "Apply", fmt.Sprintf("created %s %s", kind, name))
	case ssa.Updated:
		r.recordUpdated(t, kind, name)
	case ssa.Corrected:
		r.events().Normal(inst, nil, appsv1alpha1.EventDriftCorrected, "Apply", fmt.Sprintf("%s %s was changed outside this instance; its managed fields were restored", kind, name))
	}
	return nil
}

// recordUpdated records that the backing object was brought to the desired
// state. A change that follows the instance's own spec is the tenant's and
// is recorded on the instance. A change that comes from outside an instance
// already settled at its generation (the definition's backend, or a new
// controller version) reaches every instance of the kind at once: it is
// recorded on the definition, where the recorder folds the events of all
// instances into one series whose count is the number updated. A chart bump
// under 10,000 instances is then one Event and a write of its series, not
// 10,000 Events, and a tenant's own events are not drowned by the
// platform's. The instance's status still shows the new version once the
// backend reports it.
func (r *Reconciler) recordUpdated(t *target, kind, name string) {
	if settledAtGeneration(t.inst) {
		r.events().Normal(t.def.Object, nil, cozyv1alpha1.EventInstancesUpdated, "Apply",
			fmt.Sprintf("updated the %s of instances of %s after a change outside them (this definition, or the controller); the count is how many", kind, t.def.GVK.Kind))
		return
	}
	r.events().Normal(t.inst, nil, appsv1alpha1.EventUpdated, "Apply", fmt.Sprintf("updated %s %s to the desired state", kind, name))
}

// settledAtGeneration reports whether inst's status says the controller
// already acted on its current generation without failing: observed at this
// generation, not stalled, and not waiting to retry an error of its own. A
// write to its backing object then follows no change of the instance.
// (Reconciling=True alone does not count: it also means the backend has not
// reported on the object yet.)
func settledAtGeneration(inst *unstructured.Unstructured) bool {
	st, _ := readStatus(inst)
	if st.ObservedGeneration == 0 || st.ObservedGeneration != inst.GetGeneration() {
		return false
	}
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &st.Conditions}
	if conditions.IsTrue(h, conditions.Stalled) {
		return false
	}
	if c := conditions.Get(h, conditions.Reconciling); c != nil && c.Status == metav1.ConditionTrue && strings.HasPrefix(c.Message, retryingPrefix) {
		return false
	}
	return true
}
