package v1alpha2

// Values of spec.approvePlan.
const (
	// ApprovePlanAutoValue applies every plan.
	ApprovePlanAutoValue = "auto"
	// ApprovePlanDisableValue plans without ever applying.
	ApprovePlanDisableValue = "disable"
)

// Condition types tofu-controller writes besides Ready.
const (
	ConditionTypeApply       = "Apply"
	ConditionTypeHealthCheck = "HealthCheck"
	ConditionTypeOutput      = "Output"
	ConditionTypePlan        = "Plan"
	ConditionTypeStateLocked = "StateLocked"
)

// Reasons tofu-controller writes that the Terraform backend interprets.
const (
	// PlannedWithChangesReason: a plan with changes exists; with manual
	// approval, status.plan.pending holds its id and Ready's message says how
	// to approve it.
	PlannedWithChangesReason = "TerraformPlannedWithChanges"
	// PlannedNoChangesReason: the plan is empty; Ready is True.
	PlannedNoChangesReason = "TerraformPlannedNoChanges"
	// AppliedSucceedReason: the plan was applied.
	AppliedSucceedReason = "TerraformAppliedSucceed"
	// OutputsWrittenReason: outputs were written to the Secret; Ready is True.
	OutputsWrittenReason = "TerraformOutputsWritten"
	// OutputsAvailableReason: outputs are listed in status.availableOutputs.
	OutputsAvailableReason = "TerraformOutputsAvailable"
	// DriftDetectedReason: the real resources differ from the state.
	DriftDetectedReason = "DriftDetected"
	// NoDriftReason: drift detection found nothing.
	NoDriftReason = "NoDrift"
	// ApplyFailedReason: terraform apply failed.
	ApplyFailedReason = "TFExecApplyFailed"
	// PlanFailedReason: terraform plan failed.
	PlanFailedReason = "TFExecPlanFailed"
	// InitFailedReason: terraform init failed.
	InitFailedReason = "TFExecInitFailed"
	// ArtifactFailedReason: the source artifact could not be fetched.
	ArtifactFailedReason = "ArtifactFailed"
	// DependencyNotReadyReason: a dependency is not ready yet.
	DependencyNotReadyReason = "DependencyNotReady"
)
