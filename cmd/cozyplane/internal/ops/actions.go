package ops

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

// AnnotationPatch is the JSON merge patch that sets annotation key to value,
// or removes it when value is nil. Pure.
func AnnotationPatch(key string, value *string) []byte {
	var v any
	if value != nil {
		v = *value
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	return b
}

// AnnotationsPatch is the JSON merge patch that sets each annotation of
// set. Pure.
func AnnotationsPatch(set map[string]string) []byte {
	ann := map[string]any{}
	for k, v := range set {
		ann[k] = v
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	return b
}

// ReconcileRequest is what `cozyplane reconcile` writes on an instance: the
// reconcile request at, and with force or reset helm-controller's force and
// reset requests of the same value (as `flux reconcile hr --force
// --reset` writes them on a HelmRelease). Pure.
func ReconcileRequest(at string, force, reset bool) map[string]string {
	set := map[string]string{appsv1alpha1.AnnotationReconcileRequestedAt: at}
	if force {
		set[appsv1alpha1.AnnotationReconcileForceAt] = at
	}
	if reset {
		set[appsv1alpha1.AnnotationReconcileResetAt] = at
	}
	return set
}

// CheckForceable refuses a force or reset request for an instance whose
// backing object is not a HelmRelease: only helm-controller reads them.
// Pure.
func CheckForceable(inst *unstructured.Unstructured) error {
	kind := str(inst, "status", "backend", "kind")
	switch {
	case kind == "":
		return fmt.Errorf("%s reports no backend yet (status.backend is empty), so it is not known to be a HelmRelease, the only kind --force and --reset act on: wait for its controller", display(inst))
	case kind != "HelmRelease":
		return fmt.Errorf("%s is backed by a %s: --force and --reset are requests to helm-controller, which only a HelmRelease reads; reconcile without them", display(inst), kind)
	}
	return nil
}

// display is how messages name an instance: kind/name in namespace.
func display(inst *unstructured.Unstructured) string {
	return fmt.Sprintf("%s/%s in namespace %s", strings.ToLower(inst.GetKind()), inst.GetName(), inst.GetNamespace())
}

// IsSuspended reports an instance that asks to be suspended.
func IsSuspended(inst *unstructured.Unstructured) bool {
	return inst.GetAnnotations()[appsv1alpha1.AnnotationSuspend] == "true"
}

// CheckReconcilable refuses a reconcile request the controller would not
// forward: a suspended instance writes nothing to its backing object. Pure.
func CheckReconcilable(inst *unstructured.Unstructured) error {
	if IsSuspended(inst) {
		return fmt.Errorf("%s is suspended, so a reconcile request would not reach its backing object: resume it first (cozyplane resume %s/%s)",
			display(inst), strings.ToLower(inst.GetKind()), inst.GetName())
	}
	return nil
}

// ReconcileHandled reports whether the instance's backing object has handled
// the reconcile request requestedAt (the instance mirrors its
// lastHandledReconcileAt). Pure.
func ReconcileHandled(inst *unstructured.Unstructured, requestedAt string) bool {
	return str(inst, "status", "lastHandledReconcileAt") == requestedAt
}

// ReconcileOutcome is the result of a handled reconcile: the instance's
// Ready, and an error when Ready is False (as `flux reconcile` fails on a
// failed reconciliation). Pure.
func ReconcileOutcome(inst *unstructured.Unstructured) (Condition, error) {
	c, ok := FindCondition(inst, "Ready")
	if !ok {
		return Condition{Type: "Ready", Status: "Unknown"}, nil
	}
	if c.Status == "False" {
		return c, fmt.Errorf("%s reconciled but is not ready: %s: %s", display(inst), c.Reason, c.Message)
	}
	return c, nil
}

// SuspendSettled reports whether the controller shows the wanted state on
// the instance: the Suspended condition True after suspend, absent (or not
// True) after resume. Pure.
func SuspendSettled(inst *unstructured.Unstructured, suspend bool) bool {
	c, ok := FindCondition(inst, appsv1alpha1.ConditionSuspended)
	on := ok && c.Status == "True"
	return on == suspend
}

// ExternallySuspended returns an error saying who keeps the instance's
// backing object suspended when that is someone else (the Suspended
// condition's reason SuspendedExternally): removing the instance's
// annotation does not resume it. Nil otherwise. Pure.
func ExternallySuspended(inst *unstructured.Unstructured) error {
	c, ok := FindCondition(inst, appsv1alpha1.ConditionSuspended)
	if !ok || c.Status != "True" || c.Reason != appsv1alpha1.ReasonSuspendedExternally {
		return nil
	}
	return fmt.Errorf("%s is not suspended by its annotation, but its backing object is, by someone else, and stays so until they resume it: %s", display(inst), c.Message)
}

// PlanToApprove is the plan `cozyplane approve` approves: the instance's
// status.backend.pendingPlan. It fails, saying why, when the kind is not
// Terraform-backed, when the status does not say yet which backend serves it,
// or when no plan waits. Pure.
func PlanToApprove(inst *unstructured.Unstructured) (string, error) {
	kind := str(inst, "status", "backend", "kind")
	switch {
	case kind == "":
		return "", fmt.Errorf("%s reports no backend yet (status.backend is empty): wait for its controller", display(inst))
	case !IsTerraformBacked(inst):
		return "", fmt.Errorf("%s is backed by a %s, which has no plans to approve: only kinds with a Terraform backend do", display(inst), kind)
	}
	plan := str(inst, "status", "backend", "pendingPlan")
	if plan == "" {
		return "", fmt.Errorf("%s has no plan waiting for approval (status.backend.pendingPlan is empty)", display(inst))
	}
	return plan, nil
}

// ApprovalOutcome reads the controller's answer to an approval of plan:
// done when the PlanApproved condition is True for it, an error when the
// controller refused it (reason PlanNotPending). Pure.
func ApprovalOutcome(inst *unstructured.Unstructured, plan string) (bool, error) {
	if inst.GetAnnotations()[appsv1alpha1.AnnotationApprovePlan] != plan {
		return false, nil
	}
	c, ok := FindCondition(inst, appsv1alpha1.ConditionPlanApproved)
	switch {
	case !ok:
		return false, nil
	case c.Status == "True" && strings.Contains(c.Message, plan):
		return true, nil
	case c.Status == "False" && c.Reason == appsv1alpha1.ReasonPlanNotPending && strings.Contains(c.Message, plan):
		return true, fmt.Errorf("the approval of %s was not forwarded: %s", plan, c.Message)
	}
	return false, nil
}

// LastHandled is the instance's status.lastHandledReconcileAt. Pure.
func LastHandled(inst *unstructured.Unstructured) string {
	return str(inst, "status", "lastHandledReconcileAt")
}
