package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkloadMonitorSpec names the workloads a monitor counts.
type WorkloadMonitorSpec struct {
	// Selector matches the labels of the monitored pods (and, upstream,
	// their volumes and services).
	// +required
	Selector map[string]string `json:"selector"`

	// Kind of the monitored workload, as the application's chart names it.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Type of the monitored workload, as the application's chart names it.
	// +optional
	Type string `json:"type,omitempty"`

	// Version of the monitored workload.
	// +optional
	Version string `json:"version,omitempty"`

	// MinReplicas below which the workload is not operational.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// Replicas the workload should have; the observed count when unset.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
}

// WorkloadMonitorStatus is what upstream's cozystack-controller observed.
type WorkloadMonitorStatus struct {
	// Operational is true when the workload has at least MinReplicas
	// available pods; unset until the monitor is first reconciled.
	// +optional
	Operational *bool `json:"operational,omitempty"`

	// AvailableReplicas counts the ready pods.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// ObservedReplicas counts the pods the selector matches.
	// +optional
	ObservedReplicas int32 `json:"observedReplicas"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type="string",JSONPath=".spec.kind"
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".spec.type"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="MinReplicas",type="integer",JSONPath=".spec.minReplicas"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas"
// +kubebuilder:printcolumn:name="Observed",type="integer",JSONPath=".status.observedReplicas"
// +kubebuilder:printcolumn:name="Operational",type="boolean",JSONPath=".status.operational"

// WorkloadMonitor counts the pods of one workload of an application.
type WorkloadMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkloadMonitorSpec   `json:"spec,omitempty"`
	Status WorkloadMonitorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadMonitorList is a list of WorkloadMonitors.
type WorkloadMonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadMonitor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WorkloadMonitor{}, &WorkloadMonitorList{})
}
