package instance

// Deleting an instance: the finalizer holds it until its backing object is
// gone; without one, the backing object goes as soon as the instance has.

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// reconcileDelete holds a finalizing instance until its backing object is
// gone, then lets it go.
func (r *Reconciler) reconcileDelete(ctx context.Context, def *Definition, inst *unstructured.Unstructured) (ctrl.Result, error) {
	var ours []string
	for _, f := range inst.GetFinalizers() {
		if slices.Contains(r.ourFinalizers(def), f) {
			ours = append(ours, f)
		}
	}
	if len(ours) == 0 {
		return ctrl.Result{}, nil
	}
	// The backing objects at the derived name, in the instance's namespace
	// (when the instance controls it) and where the placement puts it, and
	// every object it owns elsewhere (platform.go), read from the cache: a
	// delete sends no read to the API server but for an object created a
	// moment ago, which the cache may not hold yet (see live).
	namespaces := []string{inst.GetNamespace()}
	if ns := r.Components.Placement.Namespace(inst); ns != inst.GetNamespace() {
		namespaces = append(namespaces, ns)
	}
	var known []*unstructured.Unstructured
	for _, ns := range namespaces {
		target := &unstructured.Unstructured{}
		target.SetGroupVersionKind(r.Backend.TargetGVK())
		target.SetNamespace(ns)
		target.SetName(r.Backend.TargetName(def, inst))
		live, err := r.live(ctx, target)
		if err != nil {
			return ctrl.Result{}, err
		}
		known = append(known, live)
	}
	left, err := r.deleteOwned(ctx, inst, known...)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(left) > 0 {
		live := left[0]
		old, _ := readStatus(inst)
		status := *old.DeepCopy()
		h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
		conditions.MarkReconciling(h, appsv1alpha1.ReasonDeleting,
			fmt.Sprintf("waiting for %s %s/%s to be deleted (its resources are being destroyed)", live.GetKind(), live.GetNamespace(), live.GetName()))
		if err := r.writeStatus(ctx, inst, &status); err != nil && !apierrors.IsNotFound(err) {
			return reconcileerr.Result(err, r.foreignRecheck())
		}
		// The backing object's deletion event brings us back.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	return ctrl.Result{}, r.removeFinalizers(ctx, inst, ours)
}

// removeFinalizers takes finalizers off inst, on the condition that it is
// still the version read, and remembers that version: the events of the
// backing objects just deleted may reconcile the instance again before the
// cache has seen it go, and that reconcile has nothing to do
// (behindFinalized).
func (r *Reconciler) removeFinalizers(ctx context.Context, inst client.Object, finalizers []string) error {
	rv := inst.GetResourceVersion()
	patch := client.MergeFromWithOptions(inst.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	for _, f := range finalizers {
		controllerutil.RemoveFinalizer(inst, f)
	}
	if err := r.Client.Patch(ctx, inst, patch); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	req := dynamicwatch.Request{GVK: inst.GetObjectKind().GroupVersionKind(), NamespacedName: client.ObjectKeyFromObject(inst)}
	r.finalized.Wrote(req, rv, "", struct{}{})
	return nil
}

// behindFinalized reports whether the cached inst is the version whose
// finalizers this controller removed: the cache has not seen the instance
// go yet. Any other version ends the wait (an instance whose patch failed
// against a newer version is reconciled afresh).
func (r *Reconciler) behindFinalized(req dynamicwatch.Request, inst client.Object) bool {
	_, behind := r.finalized.Behind(req, inst.GetResourceVersion())
	return behind
}

// rememberDeleted is the instance watch's Deleted hook: it keeps the uid of
// each instance the watch saw deleted until the reconcile of its request has
// run (collectTarget).
func (r *Reconciler) rememberDeleted(gvk schema.GroupVersionKind) func(client.Object) {
	return func(o client.Object) {
		req := dynamicwatch.Request{GVK: gvk, NamespacedName: client.ObjectKeyFromObject(o)}
		r.deleted.Store(req, o.GetUID())
	}
}

// forgetEarlier drops the deletion the watch saw of an earlier instance of
// req's name, now that the cache holds one with the given uid. The deletion
// of the instance with that uid is kept: a reconcile that read the instance
// just before the watch saw it go is followed by the one the deletion
// enqueued, which must still find it.
func (r *Reconciler) forgetEarlier(req dynamicwatch.Request, uid types.UID) {
	if v, ok := r.deleted.Load(req); ok && v.(types.UID) != uid {
		r.deleted.CompareAndDelete(req, v)
	}
}

// collectTarget deletes the backing object of an instance the watch saw
// deleted when the cache shows it still controlled by that instance, rather
// than waiting for the garbage collector (whose queue, behind
// kube-controller-manager's client limit, can hold thousands of dependents
// after a tenant deletes many instances). It deletes only what the
// collector would: the object at the instance's backing name whose
// controller reference names the instance's uid. The delete is conditional
// on the version the cache holds, so an object that changed since (an
// administrator's orphaning deletion takes the reference off before the
// instance goes) is left to the collector, which decides with the current
// object. Background propagation, as the collector deletes.
func (r *Reconciler) collectTarget(ctx context.Context, req dynamicwatch.Request) error {
	v, ok := r.deleted.Load(req)
	if !ok {
		return nil
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(req.GVK)
	inst.SetNamespace(req.Namespace)
	inst.SetName(req.Name)
	inst.SetUID(v.(types.UID))
	def := r.defs.forKind(req.GVK)
	if def == nil {
		return nil
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(r.Backend.TargetGVK())
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: r.Backend.TargetName(def, inst)}, target)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && Collectible(target, inst) {
		err := r.Client.Delete(ctx, target, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(target.GetUID()), ResourceVersion: ptr.To(target.GetResourceVersion())})
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Gone already, or changed since the cache saw it: the
			// garbage collector decides.
		case err != nil:
			return err
		default:
			log.FromContext(ctx).V(1).Info("deleted the backing object of a deleted instance",
				"kind", target.GetKind(), "namespace", target.GetNamespace(), "name", target.GetName())
		}
	}
	return nil
}

// Collectible reports whether the garbage collector would delete o, a
// backing object in its instance's namespace, now that inst (its last state,
// uid included) is gone: o is not being deleted, and its one owner reference
// is a controller reference naming inst. An object with another owner is
// left to the collector, which keeps it while that owner exists. Pure.
func Collectible(o, inst client.Object) bool {
	return o.GetDeletionTimestamp().IsZero() && o.GetNamespace() == inst.GetNamespace() && len(o.GetOwnerReferences()) == 1 &&
		ownership.IsControlledBy(o, ownership.Owner{GVK: inst.GetObjectKind().GroupVersionKind(), Name: inst.GetName(), UID: string(inst.GetUID())})
}
