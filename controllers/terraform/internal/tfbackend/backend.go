// Package tfbackend is the Terraform backend: each instance of a
// Terraform-backed kind becomes a tofu-controller Terraform object, and the
// Terraform's status (plans, applies, outputs) is projected back onto the
// instance.
//
// The Terraform object follows the common contract (name <prefix><name> in
// the instance's namespace, the application labels, a controller reference to
// the instance) and sets:
//
//	spec.vars                   one entry per top-level spec key, sorted by
//	                            name, values kept as JSON (strings, numbers,
//	                            bools, lists, objects)
//	spec.sourceRef, spec.path   from the definition
//	spec.interval               the definition's, 10m when unset
//	spec.approvePlan            "auto", or the plan id the tenant approved
//	spec.destroyResourcesOnDeletion, spec.runnerPodTemplate,
//	spec.serviceAccountName     from the definition
//	spec.writeOutputsToSecret   the definition's, its name a template over
//	                            {{ .name }}, {{ .namespace }} and {{ .kind }}
//	spec.storeReadablePlan      human: what a pending plan would change is
//	                            summarised for the tenant (plansummary.go)
//
// Plan approval goes through the instance, because tenants have no rights on
// Terraform objects: the annotation apps.cozystack.io/approve-plan carries
// the id of the plan the tenant approves (status.backend.pendingPlan). It is
// copied to spec.approvePlan only when it is exactly the pending plan's id
// (never a prefix: tofu-controller would read a prefix as approving every
// plan that starts with it); anything else is refused with
// PlanApproved=False, reason PlanNotPending.
package tfbackend

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/api/encoding"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// DefaultInterval between runs when the definition sets none.
const DefaultInterval = 10 * time.Minute

// Backend implements instance.Backend, and the components of Components.
type Backend struct {
	// Runner names the runner ServiceAccount and ClusterRole of every
	// platform namespace (runner.go); nil: tofu-controller's defaults.
	Runner *Runner
	// Outputs names the ClusterRoles the controller binds itself to for
	// tofu-controller's outputs Secrets (access.go); nil, or no Subject:
	// no RoleBinding is written.
	Outputs *OutputsAccess
}

var (
	_ instance.Backend   = Backend{}
	_ instance.Finalizer = Backend{}
)

// Components are how the Terraform backend differs from the common loop:
// its Terraform objects live in platform namespaces (namespace.go) with the
// runner's ServiceAccount and RoleBinding (runner.go), and every instance is
// held by a finalizer until its Terraform object is gone.
func (b Backend) Components() instance.Components {
	return instance.Components{
		Placement: instance.PlatformNamespaces{Namespaces: b, Provision: b},
		Finalizer: b,
	}
}

// Type implements instance.Backend.
func (Backend) Type() cozyv1alpha1.BackendType { return cozyv1alpha1.BackendTerraform }

// TargetGVK implements instance.Backend.
func (Backend) TargetGVK() schema.GroupVersionKind {
	return tfv1alpha2.GroupVersion.WithKind(tfv1alpha2.TerraformKind)
}

// TargetName implements instance.Backend.
func (Backend) TargetName(def *instance.Definition, inst *unstructured.Unstructured) string {
	return def.Prefix() + inst.GetName()
}

// Finalizer implements instance.Finalizer: an instance whose definition
// destroys its resources on deletion is held until tofu-controller has
// destroyed them and let the Terraform object go, so that its deletion
// waits for theirs. Any other instance goes at once, and the controller
// deletes its Terraform object (which no ownerReference can reach in the
// platform namespace) when it sees the instance go, or at its start if it
// was not running (collectOrphans): a finalizer would cost every such
// instance two writes of itself, and hold its namespace's deletion while
// this controller is down, for nothing the watch does not already give. A
// finalizer already on an instance stays until it is deleted. Earlier
// versions' FinalizerDestroy is swapped for this one.
func (Backend) Finalizer(def *instance.Definition) string {
	if def.DestroysOnDeletion() {
		return appsv1alpha1.FinalizerTerraform
	}
	return ""
}

// Build implements instance.Backend.
func (Backend) Build(def *instance.Definition, inst, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	tb := def.Backend.Terraform
	if tb == nil {
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, fmt.Errorf("definition %s has no Terraform backend", def.Name()))
	}
	// Fail closed: a module source a tenant could write, or reserved keys,
	// and nothing is written.
	if err := def.Object.CheckSources(); err != nil {
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonSourceNotPlatformOwned,
			fmt.Errorf("definition %s: %w; ask the platform team to fix the definition", def.Name(), err))
	}
	if err := instance.CheckReservedKeys(inst.Object["spec"]); err != nil {
		return nil, err
	}
	vars, err := Vars(inst.Object["spec"])
	if err != nil {
		return nil, err
	}
	spec := tfv1alpha2.TerraformSpec{
		SourceRef: tfv1alpha2.CrossNamespaceSourceReference{
			Kind: tb.SourceRef.Kind, Name: tb.SourceRef.Name, Namespace: tb.SourceRef.Namespace,
		},
		Path:                       tb.Path,
		Interval:                   metav1.Duration{Duration: DefaultInterval},
		Vars:                       vars,
		DestroyResourcesOnDeletion: tb.DestroyResourcesOnDeletion,
		ServiceAccountName:         tb.ServiceAccountName,
		ApprovePlan:                approvePlan(tb, inst, live),
		StoreReadablePlan:          tfv1alpha2.StoreReadablePlanHuman,
	}
	if tb.Interval != nil {
		spec.Interval = *tb.Interval
	}
	if tb.RunnerPodTemplate != nil {
		spec.RunnerPodTemplate = *tb.RunnerPodTemplate.DeepCopy()
	}
	if tb.WriteOutputsToSecret != nil {
		w := tb.WriteOutputsToSecret.DeepCopy()
		name, err := expand(w.Name, inst)
		if err != nil {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec,
				fmt.Errorf("definition %s: writeOutputsToSecret.name %q: %w", def.Name(), w.Name, err))
		}
		w.Name = name
		spec.WriteOutputsToSecret = w
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, err
	}
	instance.Prune(m, "vars")
	// destroyResourcesOnDeletion is owned explicitly, false included, so a
	// definition that stops destroying turns it off on every Terraform.
	m["destroyResourcesOnDeletion"] = tb.DestroyResourcesOnDeletion
	return &unstructured.Unstructured{Object: map[string]any{"spec": m}}, nil
}

// Vars encodes a spec as Terraform variables (encoding.Vars: one per
// top-level key, sorted, each value kept as its JSON type); a spec that
// cannot be encoded is the user's to fix.
func Vars(spec any) ([]tfv1alpha2.Variable, error) {
	vars, err := encoding.Vars(spec)
	if err != nil {
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, err)
	}
	return vars, nil
}

// expand renders a name template over the instance.
func expand(tmpl string, inst *unstructured.Unstructured) (string, error) {
	if !strings.Contains(tmpl, "{{") {
		return tmpl, nil
	}
	t, err := template.New("name").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	data := map[string]string{"name": inst.GetName(), "namespace": inst.GetNamespace(), "kind": strings.ToLower(inst.GetKind())}
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// approvePlan decides spec.approvePlan: "auto" when the definition says so;
// otherwise the plan the tenant approved, when it is exactly the pending one
// (or is already the approved one, so an applied plan stays approved);
// otherwise whatever was approved before, unless tofu-controller would read
// that earlier value as approving the plan now pending (it applies a pending
// plan whose id merely starts with spec.approvePlan): such a value is
// dropped, so only an id the tenant approved for this very plan applies it.
func approvePlan(tb *cozyv1alpha1.TerraformBackend, inst, live *unstructured.Unstructured) string {
	if tb.ApprovePlan == cozyv1alpha1.ApprovePlanAuto {
		return tfv1alpha2.ApprovePlanAutoValue
	}
	current, pending := liveApproval(live)
	if current == tfv1alpha2.ApprovePlanAutoValue {
		current = "" // the definition switched from auto to manual
	}
	if current != pending && strings.HasPrefix(pending, current) {
		current = "" // a stale or partial approval would apply a plan nobody approved
	}
	want := inst.GetAnnotations()[appsv1alpha1.AnnotationApprovePlan]
	if want != "" && (want == current || approves(want, pending)) {
		return want
	}
	return current
}

// approves reports whether an approval names the pending plan: exactly its
// id, as status.backend.pendingPlan shows it. tofu-controller itself also
// applies a pending plan when spec.approvePlan is a mere prefix of its id,
// so forwarding a prefix ("plan-", "plan-main-") would approve every later
// plan in advance; only the exact id is forwarded.
func approves(approval, pending string) bool {
	return pending != "" && approval == pending
}

func liveApproval(live *unstructured.Unstructured) (current, pending string) {
	if live == nil {
		return "", ""
	}
	current, _, _ = unstructured.NestedString(live.Object, "spec", "approvePlan")
	pending, _, _ = unstructured.NestedString(live.Object, "status", "plan", "pending")
	return current, pending
}

// ProjectStatus implements instance.Backend.
func (Backend) ProjectStatus(def *instance.Definition, inst, target *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) {
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	name := def.Prefix() + inst.GetName()
	if target != nil {
		name = target.GetName()
	}
	status.Backend = &appsv1alpha1.BackendStatus{
		Type: string(cozyv1alpha1.BackendTerraform), Kind: tfv1alpha2.TerraformKind,
		APIVersion: tfv1alpha2.GroupVersion.String(), Name: name,
	}
	if target == nil {
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "Terraform created; waiting for tofu-controller")
		return
	}
	// Project reads the name, the generation, the plan summary annotation,
	// spec.approvePlan and the status: the rest of the spec (vars and all)
	// is not converted.
	tf := &tfv1alpha2.Terraform{}
	tf.Name, tf.Generation = target.GetName(), target.GetGeneration()
	if v, ok := target.GetAnnotations()[AnnotationPlanSummary]; ok {
		tf.Annotations = map[string]string{AnnotationPlanSummary: v}
	}
	approve, _, err := unstructured.NestedString(target.Object, "spec", "approvePlan")
	if st, ok := target.Object["status"].(map[string]any); ok && err == nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(st, &tf.Status)
	}
	if err != nil {
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "cannot read the Terraform status: "+err.Error())
		return
	}
	tf.Spec.ApprovePlan = approve
	Project(tf, inst.GetAnnotations()[appsv1alpha1.AnnotationApprovePlan], h, status)
}

// Project maps a Terraform's status onto an instance status. approval is
// the instance's approve-plan annotation. Pure.
func Project(tf *tfv1alpha2.Terraform, approval string, h conditions.Holder, status *appsv1alpha1.ApplicationStatus) {
	st := tf.Status
	status.Version = st.LastAppliedRevision
	be := status.Backend
	be.LastAppliedRevision = st.LastAppliedRevision
	be.LastPlannedRevision = st.LastPlannedRevision
	be.Outputs = append([]string(nil), st.AvailableOutputs...)
	manual := tf.Spec.ApprovePlan != tfv1alpha2.ApprovePlanAutoValue
	be.PendingPlan = ""
	be.PendingApproval = false
	if st.Plan.Pending != "" && manual && !approves(tf.Spec.ApprovePlan, st.Plan.Pending) {
		be.PendingApproval = true
		be.PendingPlan = st.Plan.Pending
	}
	if be.PendingApproval {
		reason, msg := PendingPlanSummary(tf, be.PendingPlan)
		conditions.Set(h, ConditionPendingPlan, metav1.ConditionTrue, reason, msg)
	} else {
		conditions.Delete(h, ConditionPendingPlan)
	}

	switch {
	case approval == "":
		conditions.Delete(h, appsv1alpha1.ConditionPlanApproved)
	case approval == tf.Spec.ApprovePlan:
		conditions.Set(h, appsv1alpha1.ConditionPlanApproved, metav1.ConditionTrue, appsv1alpha1.ReasonPlanApprovalForwarded,
			fmt.Sprintf("plan %s is approved on Terraform %s", approval, tf.Name))
	case st.Plan.Pending == "":
		conditions.Set(h, appsv1alpha1.ConditionPlanApproved, metav1.ConditionFalse, appsv1alpha1.ReasonPlanNotPending,
			fmt.Sprintf("plan %s was not forwarded: no plan is waiting for approval", approval))
	default:
		conditions.Set(h, appsv1alpha1.ConditionPlanApproved, metav1.ConditionFalse, appsv1alpha1.ReasonPlanNotPending,
			fmt.Sprintf("plan %s was not forwarded: the pending plan is %s", approval, st.Plan.Pending))
	}

	ready := meta.FindStatusCondition(st.Conditions, "Ready")
	switch {
	case ready == nil:
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "waiting for tofu-controller to report on Terraform "+tf.Name)
	case st.ObservedGeneration < tf.Generation:
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing,
			fmt.Sprintf("tofu-controller has not yet processed generation %d of Terraform %s", tf.Generation, tf.Name))
	case be.PendingApproval:
		msg := fmt.Sprintf("plan %s waits for approval: annotate this instance with %s=%s",
			be.PendingPlan, appsv1alpha1.AnnotationApprovePlan, be.PendingPlan)
		conditions.MarkReconciling(h, ready.Reason, msg)
	case ready.Status == metav1.ConditionTrue:
		conditions.MarkReady(h, ready.Reason, ready.Message)
	case ready.Status == metav1.ConditionFalse:
		conditions.MarkNotReady(h, ready.Reason, ready.Message)
	default:
		conditions.MarkReconciling(h, ready.Reason, ready.Message)
	}
}
