package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ApplicationStatus is the status envelope of every instance, whatever its
// backend. The generic instance reconciler writes observedGeneration and
// conditions; each backend fills version and backend.
type ApplicationStatus struct {
	// ObservedGeneration is the instance generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready mirrors the backing object's Ready; see conditions.go.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Version is the version the backend last attempted: the chart version
	// for Helm, the source revision for Terraform.
	// +optional
	Version string `json:"version,omitempty"`

	// DisplayVersion is what the VERSION column shows, as upstream
	// Cozystack's table prints version: the part after its last '+' (a
	// chart version 0.1.4+abcdef shows abcdef), the whole version when it
	// has none, <unknown> before there is one.
	// +optional
	DisplayVersion string `json:"displayVersion,omitempty"`

	// Namespace is, on a Tenant, the namespace the tenant owns (tenant-root
	// for the root tenant, tenant-<name> below it, <namespace>-<name>
	// further down), as upstream Cozystack computes it.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Backend holds per-backend details.
	// +optional
	Backend *BackendStatus `json:"backend,omitempty"`

	// LastHandledReconcileAt mirrors the backing object's
	// status.lastHandledReconcileAt: the last value of the
	// reconcile.fluxcd.io/requestedAt annotation its controller handled.
	// When it equals the instance's own annotation, the requested reconcile
	// has happened and the conditions report its result.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// BackendStatus holds the details a backend projects from its backing object.
type BackendStatus struct {
	// Type is the backend: Helm or Terraform.
	// +optional
	Type string `json:"type,omitempty"`

	// Kind, APIVersion and Name identify the backing object.
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`

	// LastAppliedRevision is the source revision last applied (Terraform).
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// LastPlannedRevision is the source revision last planned (Terraform).
	// +optional
	LastPlannedRevision string `json:"lastPlannedRevision,omitempty"`

	// PendingApproval is true while a plan waits for the tenant's approval.
	// +optional
	PendingApproval bool `json:"pendingApproval,omitempty"`

	// PendingPlan is the id of the plan that waits for approval, e.g.
	// plan-main-6e1fb1aea8. Approve it with the approve-plan annotation.
	// +optional
	PendingPlan string `json:"pendingPlan,omitempty"`

	// Outputs lists the module outputs available (Terraform).
	// +optional
	Outputs []string `json:"outputs,omitempty"`
}
