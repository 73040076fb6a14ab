package v1alpha1

// Condition types on instances. The generic instance reconciler (pkg/instance)
// owns Ready, Reconciling and Stalled; backends add their own.
const (
	// ConditionReady (positive polarity) mirrors the backing object's Ready,
	// or is False with a reason from this file when the backing object cannot
	// be written.
	ConditionReady = "Ready"
	// ConditionReconciling (abnormal-true, kstatus) is True while the backing
	// object has not caught up with the instance's latest generation.
	ConditionReconciling = "Reconciling"
	// ConditionStalled (abnormal-true, kstatus) is True when the instance
	// cannot progress until someone changes it or its definition.
	ConditionStalled = "Stalled"
	// ConditionReleased (Helm; positive) mirrors the HelmRelease's Released.
	ConditionReleased = "Released"
	// ConditionPlanApproved (Terraform; positive) reports the last approval
	// request made through the approve-plan annotation.
	ConditionPlanApproved = "PlanApproved"
	// ConditionSuspended (abnormal-true) is True, reason ReasonSuspended,
	// while the instance carries AnnotationSuspend=true: its backing object
	// has spec.suspend=true and the controller corrects no drift on it. It is
	// also True, reason ReasonSuspendedExternally, while someone else keeps
	// the backing object suspended. The condition is removed (not set to
	// False) when neither holds, so an instance that was never suspended and
	// one that was resumed read the same; the ReasonResumed event records a
	// resumption by the annotation.
	ConditionSuspended = "Suspended"
	// ConditionWorkloadsReady (positive) reports the WorkloadMonitors
	// (cozystack.io/v1alpha1) labelled with the instance's kind, group and
	// name, as upstream Cozystack's API reports them on an application: in
	// the instance's namespace, or for a Tenant in the tenant's own
	// namespace (TenantNamespace). True, reason ReasonWorkloadMonitorCheck,
	// when every monitor's status.operational is true; False, same reason,
	// when any is false (a failure wins over a monitor not yet reconciled);
	// Unknown, reason ReasonWorkloadsPending, while any has no
	// status.operational yet. It is absent when no monitor is labelled for
	// the instance. Ready does not follow it: Ready mirrors the backing
	// object only, as upstream's does. The decision is
	// pkg/instance/workloads.go, WorkloadsReady.
	ConditionWorkloadsReady = "WorkloadsReady"
)

// Reasons of ConditionWorkloadsReady, upstream Cozystack's own.
const (
	// ReasonWorkloadMonitorCheck: WorkloadsReady is True or False from the
	// monitors' status.operational.
	ReasonWorkloadMonitorCheck = "WorkloadMonitorCheck"
	// ReasonWorkloadsPending: a monitor has no status.operational yet (its
	// controller has not reconciled it).
	ReasonWorkloadsPending = "Pending"
)

// Reasons of instance conditions set by our controllers (a mirrored Ready
// carries the backing object's own reason).
const (
	// ReasonBackingObjectNotOwned: an object with the derived name exists and
	// is not controlled by this instance; it is left untouched.
	ReasonBackingObjectNotOwned = "BackingObjectNotOwned"
	// ReasonInvalidSpec: the spec cannot be encoded for the backend (e.g. a
	// variable name that is not an HCL identifier).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonApplyFailed: the API server refused the backing object.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonProgressing: the backing object was written and reports no
	// status for the latest generation yet.
	ReasonProgressing = "Progressing"
	// ReasonDeleting: the instance is being deleted and waits for its
	// backing object (and, for Terraform, its destroy run) to finish.
	ReasonDeleting = "Deleting"
	// ReasonPlanNotPending: the approve-plan annotation names a plan that is
	// not the pending one; nothing was forwarded.
	ReasonPlanNotPending = "PlanNotPending"
	// ReasonPlanApprovalForwarded: the approval was copied to the backing
	// Terraform object.
	ReasonPlanApprovalForwarded = "ApprovalForwarded"
	// ReasonSuspended: the Suspended condition's reason while the instance
	// is suspended.
	ReasonSuspended = "Suspended"
	// ReasonSuspendedExternally: the Suspended condition's reason while the
	// backing object carries spec.suspend=true that someone other than its
	// backend controller set (upstream Cozystack's backup strategies suspend
	// an application's HelmRelease for the length of a restore), and the
	// instance is not suspended itself. The suspend is kept, never reverted;
	// the rest of the instance's spec is still applied and takes effect when
	// whoever set it clears it. The message names the field manager that
	// set it and how an administrator resumes the object.
	ReasonSuspendedExternally = "SuspendedExternally"
	// ReasonResumed: the reason of the event recorded when the suspend
	// annotation is removed and the backing object is resumed.
	ReasonResumed = "Resumed"
	// ReasonInvalidTimeoutAnnotation (helm, Stalled): a
	// release.cozystack.io/helm-*-timeout annotation on the definition is
	// not a duration helm-controller accepts.
	ReasonInvalidTimeoutAnnotation = "InvalidTimeoutAnnotation"
	// ReasonInvalidDisableWaitAnnotation (helm, Stalled):
	// release.cozystack.io/helm-install-disable-wait is neither "true" nor
	// "false".
	ReasonInvalidDisableWaitAnnotation = "InvalidDisableWaitAnnotation"
	// ReasonReservedKey (Stalled): the instance's spec has top-level keys
	// starting with ReservedKeyPrefix, which are the platform's (the
	// _namespace and _cluster values every chart reads). Admission refuses
	// them, so such an instance was stored before the rule or while it was
	// not enforced; the backend writes nothing for it until the keys are
	// removed (pkg/instance CheckReservedKeys).
	ReasonReservedKey = "ReservedKey"
	// ReasonSourceNotPlatformOwned (Stalled): the definition names a chart,
	// module or values source a tenant could write (cozystack.io/v1alpha1
	// ApplicationDefinition.SourceProblems); the backend writes nothing for
	// any instance of it until the definition is fixed.
	ReasonSourceNotPlatformOwned = "SourceNotPlatformOwned"
)

// ReservedKeyPrefix starts the top-level spec keys no instance may use: the
// platform's values (_namespace, _cluster) share the chart's values with the
// instance's spec.
const ReservedKeyPrefix = "_"

// Labels on backing objects (the contract kept from upstream Cozystack).
const (
	LabelApplicationKind  = "apps.cozystack.io/application.kind"
	LabelApplicationGroup = "apps.cozystack.io/application.group"
	LabelApplicationName  = "apps.cozystack.io/application.name"
	// InstanceLabelPrefix prefixes an instance's own label keys on its
	// backing object: label team=a becomes apps.cozystack.io-team=a.
	InstanceLabelPrefix = "apps.cozystack.io-"
)

// AnnotationApprovePlan on a Terraform-kind instance carries the id of the
// plan the tenant approves (status.backend.pendingPlan); the terraform
// controller copies it to the Terraform object's spec.approvePlan.
const AnnotationApprovePlan = "apps.cozystack.io/approve-plan"

// AnnotationSuspend on an instance, set to "true", suspends it as `flux
// suspend` suspends a Flux object: the controller sets spec.suspend=true on
// the backing object (HelmRelease or Terraform, whose own controller then
// stops reconciling it), writes nothing else to it, does not revert changes
// made to it by hand, and reports ConditionSuspended. Any other value, or no
// annotation, means not suspended: the controller sets spec.suspend=false
// (when it is true and the controller set it) and corrects drift again; a
// spec.suspend=true someone else set is kept (ReasonSuspendedExternally). `cozyplane suspend` and
// `cozyplane resume` set and remove it. The decision is
// pkg/instance/operations.go, DecideSuspend.
const AnnotationSuspend = "apps.cozystack.io/suspend"

// AnnotationReconcileRequestedAt is Flux's reconcile request annotation. On
// an instance its value (any string; `cozyplane reconcile` and `flux
// reconcile` write the current time in RFC 3339) is copied verbatim to the
// backing object, whose controller reconciles it at once and reports the
// value it handled in status.lastHandledReconcileAt; the instance mirrors
// that field in ApplicationStatus.LastHandledReconcileAt. The request is not
// forwarded while the instance is suspended.
const AnnotationReconcileRequestedAt = "reconcile.fluxcd.io/requestedAt"

// AnnotationReconcileForceAt is Flux's force request annotation (`flux
// reconcile hr --force`): helm-controller runs a Helm upgrade even when
// nothing changed, once, when its value equals the requestedAt value of the
// same object. On an instance it is copied verbatim to the backing object
// with AnnotationReconcileRequestedAt (`cozyplane reconcile --force` writes
// both with one value); a Terraform object's controller ignores it.
const AnnotationReconcileForceAt = "reconcile.fluxcd.io/forceAt"

// AnnotationReconcileResetAt is Flux's reset request annotation (`flux
// reconcile hr --reset`): helm-controller resets the HelmRelease's failure
// counts (so the remediation retries start over), once, when its value
// equals the requestedAt value of the same object. Forwarded like
// AnnotationReconcileForceAt.
const AnnotationReconcileResetAt = "reconcile.fluxcd.io/resetAt"

// FinalizerDestroy holds an instance whose definition destroys resources on
// deletion until its Terraform object is gone.
const FinalizerDestroy = "apps.cozystack.io/destroy-resources"

// InstanceAnnotationPrefix prefixes an instance's own annotation keys on its
// backing HelmRelease, as upstream Cozystack's API does: annotation
// team/owner=a becomes apps.cozystack.io-team/owner=a. Reading a HelmRelease
// back (cozyplane migrate) strips it again.
const InstanceAnnotationPrefix = "apps.cozystack.io-"

// AnnotationAdopt on an instance is the proof that lets a backend controller
// take over one existing backing object that it did not create: its value is
// that object's metadata.uid. cozyplane migrate writes it when it turns a
// HelmRelease written by upstream Cozystack's aggregated API into an
// instance. A controller adopts only the object with the derived name whose
// uid equals this value, that carries the application labels naming this
// instance's kind and name, and that has no controller ownerReference; any
// other object with the derived name is still reported as not owned and left
// untouched. Control annotations such as this one are not copied to the
// backing object.
const AnnotationAdopt = "apps.cozystack.io/adopt"
