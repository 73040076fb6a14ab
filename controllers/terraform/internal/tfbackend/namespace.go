package tfbackend

import (
	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

// NamespacePrefix starts the name of the platform namespace that holds the
// Terraform objects of one tenant namespace: cozy-tf-<tenant namespace>
// (instance.PlatformNamespaceName cuts and hashes names that would be longer
// than 63 characters). tofu-controller runs each Terraform's runner Pod and
// writes its plan Secret tfplan-default-<name> and state Secret
// tfstate-default-<name> in the Terraform's namespace, so all of them live
// there, out of the tenant's reach: tenants are bound to roles in their own
// namespace only, and nothing here grants them any right in a cozy-tf-*
// namespace.
const NamespacePrefix = "cozy-tf-"

var _ instance.TargetNamespacing = Backend{}

// TargetNamespace implements instance.TargetNamespacing.
func (Backend) TargetNamespace(ns string) string {
	return instance.PlatformNamespaceName(NamespacePrefix, ns)
}

// TargetNamespaceLabels implements instance.TargetNamespacing: the namespace
// is marked as the Terraform backend's and names its tenant namespace.
func (Backend) TargetNamespaceLabels(ns string) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelPlatformNamespace: string(cozyv1alpha1.BackendTerraform),
		appsv1alpha1.LabelTenantNamespace:   ns,
	}
}

// Finalizers implements instance.Finalizer: the finalizer of instances that
// destroy on deletion (which earlier versions put on every instance), and
// the one still earlier versions put on those that destroy.
func (Backend) Finalizers() []string {
	return []string{appsv1alpha1.FinalizerTerraform, appsv1alpha1.FinalizerDestroy}
}
