package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TerraformKind is the kind of the mirrored object.
const TerraformKind = "Terraform"

// Terraform runs a Terraform/OpenTofu module from a Flux source.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tf
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Terraform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TerraformSpec   `json:"spec,omitempty"`
	Status TerraformStatus `json:"status,omitempty"`
}

// TerraformList is a list of Terraform objects.
//
// +kubebuilder:object:root=true
type TerraformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Terraform `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Terraform{}, &TerraformList{})
}

// TerraformSpec is the desired state of a Terraform object (mirrored fields).
type TerraformSpec struct {
	// ApprovePlan names the plan to apply, or "auto" to apply every plan.
	// +optional
	ApprovePlan string `json:"approvePlan,omitempty"`

	// Vars are the module's input variables.
	// +optional
	Vars []Variable `json:"vars,omitempty"`

	// VarsFrom reads variables from Secrets and ConfigMaps.
	// +optional
	VarsFrom []VarsReference `json:"varsFrom,omitempty"`

	// Interval between reconciliations.
	// +required
	Interval metav1.Duration `json:"interval"`

	// Path of the module in the source; the source root when empty.
	// +optional
	Path string `json:"path,omitempty"`

	// SourceRef is the Flux source holding the module.
	// +required
	SourceRef CrossNamespaceSourceReference `json:"sourceRef"`

	// Suspend stops further runs.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// WriteOutputsToSecret writes the module's outputs to a Secret.
	// +optional
	WriteOutputsToSecret *WriteOutputsToSecretSpec `json:"writeOutputsToSecret,omitempty"`

	// DestroyResourcesOnDeletion destroys the managed resources when the
	// object is deleted.
	// +kubebuilder:default:=false
	// +optional
	DestroyResourcesOnDeletion bool `json:"destroyResourcesOnDeletion,omitempty"`

	// ServiceAccountName of the runner pods.
	// +kubebuilder:default:=tf-runner
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// RunnerPodTemplate customises the runner pods.
	// +optional
	RunnerPodTemplate RunnerPodTemplate `json:"runnerPodTemplate,omitempty"`

	// StoreReadablePlan makes the runner store each plan in a readable
	// form too: "human" (terraform show, in ConfigMaps
	// tfplan-<workspace>-<name>[-<chunk>] labelled
	// infra.contrib.fluxcd.io/plan-name and plan-workspace), "json" (in
	// Secrets), or "none".
	// +kubebuilder:validation:Enum=none;json;human
	// +optional
	StoreReadablePlan string `json:"storeReadablePlan,omitempty"`
}

// StoreReadablePlanHuman is the StoreReadablePlan value that stores
// terraform show's output in ConfigMaps.
const StoreReadablePlanHuman = "human"

// CrossNamespaceSourceReference locates a Flux source.
type CrossNamespaceSourceReference struct {
	// APIVersion of the source.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source.
	// +kubebuilder:validation:Enum=GitRepository;Bucket;OCIRepository
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	Name string `json:"name"`

	// Namespace of the source; the object's namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Variable is one input variable: a JSON value, or a reference.
type Variable struct {
	// Name of the variable.
	// +required
	Name string `json:"name"`

	// Value of any JSON type.
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`

	// ValueFrom reads the value from a Secret or ConfigMap key.
	// +optional
	ValueFrom *corev1.EnvVarSource `json:"valueFrom,omitempty"`
}

// VarsReference reads variables from a Secret or ConfigMap.
type VarsReference struct {
	// Kind of the referent.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	// +required
	Kind string `json:"kind"`

	// Name of the referent, in the object's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// VarsKeys selects keys; all keys when empty.
	// +optional
	VarsKeys []string `json:"varsKeys,omitempty"`

	// Optional ignores a missing referent.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// WriteOutputsToSecretSpec names the Secret outputs are written to.
type WriteOutputsToSecretSpec struct {
	// Name of the Secret.
	// +required
	Name string `json:"name"`

	// Labels of the Secret.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations of the Secret.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Outputs to write; all when empty.
	// +optional
	Outputs []string `json:"outputs,omitempty"`
}

// RunnerPodTemplate customises runner pods.
type RunnerPodTemplate struct {
	// +optional
	Metadata RunnerPodMetadata `json:"metadata,omitempty"`

	// +optional
	Spec RunnerPodSpec `json:"spec,omitempty"`
}

// RunnerPodMetadata is added to runner pods.
type RunnerPodMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RunnerPodSpec customises the runner container and pod. There is no
// serviceAccountName here: it is TerraformSpec.ServiceAccountName.
type RunnerPodSpec struct {
	// +optional
	Image string `json:"image,omitempty"`

	// +optional
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`

	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`

	// +optional
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`

	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// TerraformStatus is the observed state tofu-controller writes (mirrored
// fields).
type TerraformStatus struct {
	// LastHandledReconcileAt is Flux's reconcile-request marker.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastAppliedRevision is the source revision last applied, e.g.
	// main/6e1fb1aea8....
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// +optional
	LastPlannedRevision string `json:"lastPlannedRevision,omitempty"`

	// +optional
	LastDriftDetectedAt *metav1.Time `json:"lastDriftDetectedAt,omitempty"`

	// +optional
	LastAppliedByDriftDetectionAt *metav1.Time `json:"lastAppliedByDriftDetectionAt,omitempty"`

	// +optional
	AvailableOutputs []string `json:"availableOutputs,omitempty"`

	// +optional
	Plan PlanStatus `json:"plan,omitempty"`
}

// PlanStatus tracks plans.
type PlanStatus struct {
	// LastApplied is the id of the plan applied last.
	// +optional
	LastApplied string `json:"lastApplied,omitempty"`

	// Pending is the id of the plan that waits for approval, e.g.
	// plan-main-6e1fb1aea8; empty when none waits.
	// +optional
	Pending string `json:"pending,omitempty"`

	// +optional
	IsDestroyPlan bool `json:"isDestroyPlan,omitempty"`

	// +optional
	IsDriftDetectionPlan bool `json:"isDriftDetectionPlan,omitempty"`
}
