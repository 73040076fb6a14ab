package v1alpha1

// Condition types of an ApplicationDefinition. The appdef controller owns all
// of them; Ready is computed in exactly one place (its summarize step).
const (
	// ConditionReady (positive polarity) is True when the kind is served: its
	// CRD exists, matches the definition and is Established.
	ConditionReady = "Ready"

	// ConditionReconciling (abnormal-true, kstatus) is True while the
	// controller is bringing the CRD in line with a new generation.
	ConditionReconciling = "Reconciling"

	// ConditionStalled (abnormal-true, kstatus) is True when the definition
	// cannot be served until someone changes it; the reason says what to fix.
	ConditionStalled = "Stalled"
)

// Reasons of ApplicationDefinition conditions.
const (
	// ReasonServed: the CRD is Established and matches the definition.
	ReasonServed = "Served"
	// ReasonProgressing: the CRD was written and the API server has not yet
	// established it.
	ReasonProgressing = "Progressing"
	// ReasonInvalidJSON: application.openAPISchema is not valid JSON.
	ReasonInvalidJSON = "InvalidJSON"
	// ReasonInvalidSchema: the schema cannot be made structural or uses a
	// construct the API server cannot serve; the message names the field.
	ReasonInvalidSchema = "InvalidSchema"
	// ReasonInvalidVariableName: a Terraform kind's schema names a top-level
	// key that is not an HCL identifier.
	ReasonInvalidVariableName = "InvalidVariableName"
	// ReasonReservedField: the schema names a top-level key starting with "_".
	ReasonReservedField = "ReservedField"
	// ReasonNameClash: another definition already serves this kind, plural or
	// singular.
	ReasonNameClash = "NameClash"
	// ReasonForeignCRD: a CRD with the derived name exists and was not created
	// for this definition; it is left untouched.
	ReasonForeignCRD = "ForeignCRD"
	// ReasonKindRenamed: the kind or plural changed while the CRD serves the
	// old names; delete and recreate the definition to rename a kind.
	ReasonKindRenamed = "KindRenamed"
	// ReasonCRDRejected: the API server refused the generated CRD; the
	// message carries its answer.
	ReasonCRDRejected = "CRDRejected"
	// ReasonCRDNotEstablished: the API server has not established the CRD,
	// e.g. because of a names conflict it reports.
	ReasonCRDNotEstablished = "CRDNotEstablished"
	// ReasonInstancesRemain: the definition is being deleted and instances of
	// its kind still exist; it is held until they are gone.
	ReasonInstancesRemain = "InstancesRemain"
	// ReasonGroupShadowed: the CRD is established, but an APIService
	// (v1alpha1.apps.cozystack.io) sends every request for the group to a
	// Service, such as upstream Cozystack's aggregated API server, so the
	// API server never reaches the CRD. Ready is False (Stalled) until the
	// APIService is deleted or becomes local (no spec.service, as the one
	// kube-apiserver manages itself for CRD groups); the message names the
	// APIService and its Service. See docs/migration.md.
	ReasonGroupShadowed = "GroupShadowed"
	// ReasonSourceNotPlatformOwned: the definition names a chart, module or
	// values source a tenant could write (SourceProblems, sources.go): a
	// valuesFrom entry outside the cozystack-values family, a chartRef
	// without a namespace or in a tenant namespace, a Terraform sourceRef in
	// a tenant namespace. The CRD refuses such definitions when they are
	// written, so this one was stored before the rule. The kind stays
	// served; Ready is False (Stalled) and the backends write nothing for its
	// instances until the definition is fixed.
	ReasonSourceNotPlatformOwned = "SourceNotPlatformOwned"
)

// Annotations on an ApplicationDefinition, honoured as upstream Cozystack does.
const (
	// AnnotationHelmInstallTimeout sets the HelmRelease's spec.install.timeout.
	AnnotationHelmInstallTimeout = "release.cozystack.io/helm-install-timeout"
	// AnnotationHelmUpgradeTimeout sets the HelmRelease's spec.upgrade.timeout.
	AnnotationHelmUpgradeTimeout = "release.cozystack.io/helm-upgrade-timeout"
	// AnnotationHelmInstallDisableWait ("true") disables the install and
	// upgrade wait of the HelmRelease.
	AnnotationHelmInstallDisableWait = "release.cozystack.io/helm-install-disable-wait"
)

// FinalizerInstances holds a definition while instances of its kind exist.
const FinalizerInstances = "cozystack.io/instances"
