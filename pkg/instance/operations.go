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
// A spec.suspend=true that someone else set on a backing object the instance
// controls (upstream Cozystack's backup strategies suspend an application's
// HelmRelease for the length of a restore) is kept: the controller never
// writes spec.suspend then, and reports it (Suspended, reason
// SuspendedExternally) until whoever set it clears it. Who set it is read
// from the object's managed fields (SuspendedElsewhere).
//
// The decisions are pure; reconciler.go calls them at three points: when it
// builds the desired object, before it applies it, and when it summarizes
// the status.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
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
	// ResumeSet: not suspended, but the backing object has spec.suspend=true
	// that the controller set: set it to false, then apply the desired state
	// as usual (which corrects any drift made while it was suspended).
	ResumeSet
	// SuspendKeep: not suspended, and the backing object has
	// spec.suspend=true that someone else set: leave spec.suspend as it is
	// (the desired state does not carry it) and apply the rest of the
	// desired state as usual. The backing object's controller ignores a
	// suspended object, so what is applied meanwhile takes effect when the
	// other party resumes it: the instance's latest spec, not the one it had
	// when it was suspended. A restore relies on that: upstream's backup
	// strategies suspend the HelmRelease, change the application's spec and
	// resume only when the next render is safe, expecting that render to
	// carry the new spec.
	SuspendKeep
)

func (a SuspendAction) String() string {
	return [...]string{"apply", "hold", "suspend", "resume", "keep"}[a]
}

// DecideSuspend decides what happens to spec.suspend of the backing object.
// verdict is the ownership verdict on live: only a backing object the
// instance already controls is suspended or resumed by a patch; one that is
// being created or adopted gets the whole desired state, spec.suspend
// included (a suspend on an adopted object that the desired state does not
// carry is left as it is). external says that live's spec.suspend=true was
// set by someone other than the controller (SuspendedElsewhere): it is kept,
// whatever the instance says, and resumed only by whoever set it; the
// instance's annotation then holds the object as its own suspend does. Pure.
func DecideSuspend(suspended bool, live *unstructured.Unstructured, verdict ownership.Verdict, external bool) SuspendAction {
	if live == nil || verdict != ownership.Controlled {
		return SuspendApply
	}
	liveSuspended, _, _ := unstructured.NestedBool(live.Object, "spec", "suspend")
	switch {
	case suspended && liveSuspended:
		return SuspendHold
	case suspended:
		return SuspendSet
	case liveSuspended && external:
		return SuspendKeep
	case liveSuspended:
		return ResumeSet
	}
	return SuspendApply
}

// AsksWhoSuspended reports whether DecideSuspend needs to know who set the
// backing object's spec.suspend: the instance is not suspended and the
// controlled object is. The managed fields that tell are read from the API
// server then (the cache drops them). Pure.
func AsksWhoSuspended(suspended bool, live *unstructured.Unstructured, verdict ownership.Verdict) bool {
	if suspended || live == nil || verdict != ownership.Controlled {
		return false
	}
	s, _, _ := unstructured.NestedBool(live.Object, "spec", "suspend")
	return s
}

// ExternalSuspend is a spec.suspend=true on a backing object that its
// controller did not set.
type ExternalSuspend struct {
	Kind, Namespace, Name string
	// By are the field managers that own spec.suspend (empty when the
	// object's managed fields do not say).
	By []string
}

var suspendPath = fieldpath.MakePathOrDie("spec", "suspend")

// SuspendedElsewhere reports who, other than the controller whose field
// manager is manager, set spec.suspend=true on obj, read from its managed
// fields (obj must come from the API server, not from the cache, which drops
// them). The controller writes spec.suspend as manager (its suspend patch and
// its applies) and as the manager it creates objects with
// (ssa.CreateManager). A suspend that another manager also claims is theirs,
// and so is one that no manager claims (managed fields removed): it is kept
// rather than reverted on a guess. Nil when obj is not suspended or the
// controller alone set it. Pure.
func SuspendedElsewhere(obj *unstructured.Unstructured, manager string) *ExternalSuspend {
	if obj == nil {
		return nil
	}
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); !s {
		return nil
	}
	ours := false
	var by []string
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil || !set.Has(suspendPath) {
			continue
		}
		if e.Manager == manager || e.Manager == ssa.CreateManager(manager) {
			ours = true
			continue
		}
		if !contains(by, e.Manager) {
			by = append(by, e.Manager)
		}
	}
	if ours && len(by) == 0 {
		return nil
	}
	sort.Strings(by)
	return &ExternalSuspend{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), By: by}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Message is the Suspended condition's message for an external suspend: who
// set it, what it means, and who resumes it.
func (x *ExternalSuspend) Message() string {
	who := "someone other than this instance's controller (its managed fields do not say who)"
	if len(x.By) > 0 {
		who = "field manager " + strings.Join(x.By, ", ") + ", not by this instance's controller"
	}
	return fmt.Sprintf("spec.suspend=true on %s %s/%s was set by %s, and is kept: its controller does not act on it "+
		"until whoever set it clears it (upstream's backup strategies suspend an application's HelmRelease during a restore "+
		"and resume it when done). Changes to this instance are still written to it and take effect then. "+
		"Ask whoever suspended it; an administrator resumes it with "+
		"`kubectl patch %s %s -n %s --type=merge -p '{\"spec\":{\"suspend\":false}}'`",
		x.Kind, x.Namespace, x.Name, who, strings.ToLower(x.Kind), x.Name, x.Namespace)
}

// SuspendPatch is the JSON merge patch that sets spec.suspend. It touches no
// other field; being an update (not an apply) it takes the field without
// changing the set of fields the controller applies.
func SuspendPatch(suspend bool) []byte {
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"suspend": suspend}})
	return b
}

// ForwardedAnnotations are Flux's request annotations, copied from the
// instance to its backing object verbatim (Flux controllers read them under
// these exact keys): the reconcile request, and helm-controller's force and
// reset requests, which take effect only together with a reconcile request
// of the same value (`flux reconcile hr --force` / `--reset`).
var ForwardedAnnotations = []string{
	appsv1alpha1.AnnotationReconcileRequestedAt,
	appsv1alpha1.AnnotationReconcileForceAt,
	appsv1alpha1.AnnotationReconcileResetAt,
}

// DesiredOperations adds the instance's operations to the desired backing
// object: the ForwardedAnnotations, verbatim, and spec.suspend=true
// when the instance is suspended (applied only when the backing object is
// created or adopted; see DecideSuspend). desired is modified. Pure.
func DesiredOperations(inst client.Object, desired *unstructured.Unstructured) {
	for _, key := range ForwardedAnnotations {
		v, ok := inst.GetAnnotations()[key]
		if !ok {
			continue
		}
		ann := desired.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[key] = v
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
// controller. While the instance is suspended (by its annotation, or its
// backing object by someone else: suspended is true) and the backing object
// is, the view carries the generation the backing object's controller last
// observed, so the instance reports that controller's last word (as `flux
// get` does for a suspended object). target itself is not modified. Pure.
func SuspendedView(suspended bool, target *unstructured.Unstructured) *unstructured.Unstructured {
	if target == nil || !suspended {
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
// backing object to read) and the Suspended condition: reason Suspended
// while the annotation asks for it, SuspendedExternally while external (a
// suspend someone else set on the backing object) is not nil. With no
// backing object to read (target nil: the reconcile failed before) an
// external suspend already reported stays as it is. Pure.
func ProjectOperations(inst client.Object, target *unstructured.Unstructured, external *ExternalSuspend, status *appsv1alpha1.ApplicationStatus) {
	if target != nil {
		status.LastHandledReconcileAt, _, _ = unstructured.NestedString(target.Object, "status", "lastHandledReconcileAt")
	}
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	switch {
	case IsSuspended(inst):
		conditions.Set(h, appsv1alpha1.ConditionSuspended, metav1.ConditionTrue, appsv1alpha1.ReasonSuspended, SuspendMessage)
	case external != nil:
		conditions.Set(h, appsv1alpha1.ConditionSuspended, metav1.ConditionTrue, appsv1alpha1.ReasonSuspendedExternally, external.Message())
	case target == nil:
		if c := conditions.Get(h, appsv1alpha1.ConditionSuspended); c != nil && c.Reason == appsv1alpha1.ReasonSuspendedExternally {
			return
		}
		conditions.Delete(h, appsv1alpha1.ConditionSuspended)
	default:
		conditions.Delete(h, appsv1alpha1.ConditionSuspended)
	}
}

// applySuspend carries out DecideSuspend's verdict on a controlled backing
// object. It returns true when the reconciler must stop there (the instance
// is suspended: nothing else is written).
func (r *Reconciler) applySuspend(ctx context.Context, inst, live *unstructured.Unstructured, verdict ownership.Verdict, external *ExternalSuspend) (bool, error) {
	action := DecideSuspend(IsSuspended(inst), live, verdict, external != nil)
	switch action {
	case SuspendHold:
		return true, nil
	case SuspendApply:
		return false, nil
	case SuspendKeep:
		log.FromContext(ctx).V(1).Info("backing object suspended by someone else: spec.suspend kept", "instance", client.ObjectKeyFromObject(inst),
			"kind", live.GetKind(), "name", live.GetName(), "by", external.By)
		return false, nil
	}
	suspend := action == SuspendSet
	patch := client.RawPatch(types.MergePatchType, SuspendPatch(suspend))
	if err := r.Client.Patch(ctx, live, patch, client.FieldOwner(r.Name)); err != nil {
		return false, fmt.Errorf("setting spec.suspend=%t on %s %s: %w", suspend, live.GetKind(), live.GetName(), err)
	}
	outcome := map[bool]string{true: writemetric.Suspended, false: writemetric.Resumed}[suspend]
	log.FromContext(ctx).Info("backing object "+outcome, "instance", client.ObjectKeyFromObject(inst), "kind", live.GetKind(), "name", live.GetName(),
		"why", "the instance's "+appsv1alpha1.AnnotationSuspend+" annotation")
	writemetric.Count(r.Name, inst.GetKind(), outcome)
	if suspend {
		r.events().Normal(inst, nil, appsv1alpha1.EventSuspended, "Suspend", fmt.Sprintf("set spec.suspend=true on %s %s; its drift is no longer corrected", live.GetKind(), live.GetName()))
		return true, nil
	}
	r.events().Normal(inst, nil, appsv1alpha1.EventResumed, "Resume", fmt.Sprintf("set spec.suspend=false on %s %s; its drift is corrected again", live.GetKind(), live.GetName()))
	return false, nil
}
