package instance

// Operations a user asks of an instance through its annotations, as Flux
// users ask them of Flux objects:
//
//   - a reconcile request: the instance's reconcile.fluxcd.io/requestedAt is
//     copied verbatim to the backing object (DesiredOperations), whose
//     controller reconciles at once and reports the value it handled in
//     status.lastHandledReconcileAt; the instance mirrors that field
//     (ProjectOperations);
//   - suspend and resume: apps.cozystack.io/suspend=true sets spec.suspend on
//     the backing object and stops drift correction (DecideSuspend); the
//     instance shows the Suspended condition.
//
// The decisions are pure; reconciler.go calls them at three points: when it
// builds the desired object, before it applies it, and when it summarizes
// the status.

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

// Event reasons of operations.
const (
	EventSuspended = appsv1alpha1.ReasonSuspended
	EventResumed   = appsv1alpha1.ReasonResumed
)

// IsSuspended reports whether the instance asks to be suspended: its
// apps.cozystack.io/suspend annotation is exactly "true".
func IsSuspended(inst client.Object) bool {
	return inst.GetAnnotations()[appsv1alpha1.AnnotationSuspend] == "true"
}

// SuspendMessage is the Suspended condition's message: what it means and how
// to undo it.
const SuspendMessage = "suspended by the " + appsv1alpha1.AnnotationSuspend + "=true annotation: the backing object has " +
	"spec.suspend=true, changes to this instance are not applied and changes to the backing object are not reverted; " +
	"resume with `cozyplane resume` or `kubectl annotate <kind> <name> " + appsv1alpha1.AnnotationSuspend + "-`"

// SuspendAction is what the reconciler does about a backing object's
// spec.suspend before (or instead of) applying the desired state.
type SuspendAction int

const (
	// SuspendApply: nothing special; apply the desired state as usual
	// (which carries spec.suspend=true when a suspended instance's backing
	// object is created or adopted).
	SuspendApply SuspendAction = iota
	// SuspendHold: suspended and the backing object already has
	// spec.suspend=true: write nothing at all, whatever else changed.
	SuspendHold
	// SuspendSet: suspended and the backing object is not: set its
	// spec.suspend=true, and write nothing else.
	SuspendSet
	// ResumeSet: not suspended, but the backing object has spec.suspend=true:
	// set it to false, then apply the desired state as usual (which corrects
	// any drift made while it was suspended).
	ResumeSet
)

func (a SuspendAction) String() string {
	return [...]string{"apply", "hold", "suspend", "resume"}[a]
}

// DecideSuspend decides what happens to spec.suspend of the backing object.
// verdict is the ownership verdict on live: only a backing object the
// instance already controls is suspended or resumed by a patch; one that is
// being created or adopted gets the whole desired state, spec.suspend
// included. A spec.suspend=true set on a controlled backing object by anyone
// else is reverted while the instance is not suspended: the annotation is the
// one switch. Pure.
func DecideSuspend(suspended bool, live *unstructured.Unstructured, verdict ownership.Verdict) SuspendAction {
	if live == nil || verdict != ownership.Controlled {
		return SuspendApply
	}
	liveSuspended, _, _ := unstructured.NestedBool(live.Object, "spec", "suspend")
	switch {
	case suspended && liveSuspended:
		return SuspendHold
	case suspended:
		return SuspendSet
	case liveSuspended:
		return ResumeSet
	}
	return SuspendApply
}

// SuspendPatch is the JSON merge patch that sets spec.suspend. It touches no
// other field; being an update (not an apply) it takes the field without
// changing the set of fields the controller applies.
func SuspendPatch(suspend bool) []byte {
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}})
	return b
}

// DesiredOperations adds the instance's operations to the desired backing
// object: the reconcile request annotation, verbatim
// (Flux controllers read it under this exact key), and spec.suspend=true
// when the instance is suspended (applied only when the backing object is
// created or adopted; see DecideSuspend). desired is modified. Pure.
func DesiredOperations(inst client.Object, desired *unstructured.Unstructured) {
	if v, ok := inst.GetAnnotations()[appsv1alpha1.AnnotationReconcileRequestedAt]; ok {
		ann := desired.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[appsv1alpha1.AnnotationReconcileRequestedAt] = v
		desired.SetAnnotations(ann)
	}
	if IsSuspended(inst) {
		_ = unstructured.SetNestedField(desired.Object, true, "spec", "suspend")
	}
}

// SuspendedView is the backing object as the backend's status projection
// should read it. Setting spec.suspend bumps the backing object's generation,
// and a suspended object's controller never catches up with it: read as is,
// every suspended instance would say it waits for the backing object's
// controller. While the instance is suspended and the backing object is, the
// view carries the generation the backing object's controller last
// observed, so the instance reports that controller's last word (as `flux
// get` does for a suspended object). target itself is not modified. Pure.
func SuspendedView(inst client.Object, target *unstructured.Unstructured) *unstructured.Unstructured {
	if target == nil || !IsSuspended(inst) {
		return target
	}
	if s, _, _ := unstructured.NestedBool(target.Object, "spec", "suspend"); !s {
		return target
	}
	observed, ok, _ := unstructured.NestedInt64(target.Object, "status", "observedGeneration")
	if !ok || observed <= 0 || observed >= target.GetGeneration() {
		return target
	}
	view := target.DeepCopy()
	view.SetGeneration(observed)
	return view
}

// ProjectOperations writes the operations' part of the instance status: the
// backing object's lastHandledReconcileAt (kept as it was while there is no
// backing object to read) and the Suspended condition. Pure.
func ProjectOperations(inst client.Object, target *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) {
	if target != nil {
		status.LastHandledReconcileAt, _, _ = unstructured.NestedString(target.Object, "status", "lastHandledReconcileAt")
	}
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	if IsSuspended(inst) {
		conditions.Set(h, appsv1alpha1.ConditionSuspended, metav1.ConditionTrue, appsv1alpha1.ReasonSuspended, SuspendMessage)
		return
	}
	conditions.Delete(h, appsv1alpha1.ConditionSuspended)
}

// applySuspend carries out DecideSuspend's verdict on a controlled backing
// object. It returns true when the reconciler must stop there (the instance
// is suspended: nothing else is written).
func (r *Reconciler) applySuspend(ctx context.Context, inst, live *unstructured.Unstructured, verdict ownership.Verdict) (bool, error) {
	action := DecideSuspend(IsSuspended(inst), live, verdict)
	switch action {
	case SuspendHold:
		return true, nil
	case SuspendApply:
		return false, nil
	}
	suspend := action == SuspendSet
	patch := client.RawPatch(types.MergePatchType, SuspendPatch(suspend))
	if err := r.Client.Patch(ctx, live, patch, client.FieldOwner(r.Name)); err != nil {
		return false, fmt.Errorf("setting spec.suspend=%t on %s %s: %w", suspend, live.GetKind(), live.GetName(), err)
	}
	outcome := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	log.FromContext(ctx).Info("backing object "+outcome, "instance", client.ObjectKeyFromObject(inst), "kind", live.GetKind(), "name", live.GetName(),
		"why", "the instance's "+appsv1alpha1.AnnotationSuspend+" annotation")
	writesTotal.WithLabelValues(r.Name, inst.GetKind(), outcome).Inc()
	if suspend {
		r.event(inst, "Normal", EventSuspended, "Suspend", fmt.Sprintf("set spec.suspend=true on %s %s; its drift is no longer corrected", live.GetKind(), live.GetName()))
		return true, nil
	}
	r.event(inst, "Normal", EventResumed, "Resume", fmt.Sprintf("set spec.suspend=false on %s %s; its drift is corrected again", live.GetKind(), live.GetName()))
	return false, nil
}
