package tfbackend

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

// ConditionPendingPlan is the instance condition that says, while a plan
// waits for the tenant's approval, what that plan would do: True with reason
// PlanDestroys, PlanCorrectsDrift or PlanChanges, and a message naming the
// plan, the revision planned, once tofu-controller stored the plan in
// readable form what it would change (counts and resource addresses,
// plansummary.go) and tofu-controller's own Plan condition. It is what
// tofu-controller records on the Terraform object (status.plan, status.
// lastPlannedRevision, the Plan condition) and the summary the controller
// keeps there: no resource values reach the tenant through it. It is
// removed when no plan waits.
const ConditionPendingPlan = "PendingPlan"

// Reasons of ConditionPendingPlan.
const (
	ReasonPlanDestroys      = "PlanDestroys"
	ReasonPlanCorrectsDrift = "PlanCorrectsDrift"
	ReasonPlanChanges       = "PlanChanges"
	planConditionOfTofu     = "Plan"
	planDestroysDescription = "destroys every resource of the module"
	planDriftDescription    = "brings resources that drifted back to the module"
	planChangesDescription  = "creates, changes or destroys resources of the module"
	planUnknownRevision     = "an unknown revision"
)

// PendingPlanSummary is the reason and message of ConditionPendingPlan for
// the plan pending on tf, pending being its id (status.backend.pendingPlan).
// Pure.
func PendingPlanSummary(tf *tfv1alpha2.Terraform, pending string) (reason, message string) {
	st := tf.Status
	reason, what := ReasonPlanChanges, planChangesDescription
	switch {
	case st.Plan.IsDestroyPlan:
		reason, what = ReasonPlanDestroys, planDestroysDescription
	case st.Plan.IsDriftDetectionPlan:
		reason, what = ReasonPlanCorrectsDrift, planDriftDescription
	}
	rev := st.LastPlannedRevision
	if rev == "" {
		rev = planUnknownRevision
	}
	message = fmt.Sprintf("plan %s of %s %s", pending, rev, what)
	if sum, ok := PlanSummaryOf(tf.Annotations, pending); ok {
		message += ": " + sum.Describe()
	}
	if c := meta.FindStatusCondition(st.Conditions, planConditionOfTofu); c != nil && c.Status == metav1.ConditionTrue {
		message += fmt.Sprintf("; tofu-controller: %s (%s)", c.Message, c.Reason)
	}
	return reason, message
}
