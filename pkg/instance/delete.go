package instance

// Deleting an instance: the finalizer holds it until its backing object is gone.

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
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
	patch := client.MergeFromWithOptions(inst.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for _, f := range ours {
		controllerutil.RemoveFinalizer(inst, f)
	}
	if err := r.Client.Patch(ctx, inst, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
