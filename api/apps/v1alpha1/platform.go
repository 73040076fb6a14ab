package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
)

// Backing objects in a platform namespace. A backend may keep its backing
// objects out of the tenant's namespace, in a namespace the platform owns per
// tenant namespace (the Terraform backend does: a tenant with edit in its
// namespace could otherwise rewrite the saved plan, the state, or exec into
// the runner). An ownerReference cannot cross namespaces, so such an object
// names its instance with labels (the application labels plus
// LabelApplicationNamespace and LabelApplicationUID) and the instance holds a
// finalizer until the object is gone.
const (
	// LabelApplicationNamespace on a backing object in a platform namespace
	// names its instance's namespace.
	LabelApplicationNamespace = "apps.cozystack.io/application.namespace"
	// LabelApplicationUID on a backing object in a platform namespace is
	// its instance's metadata.uid: what ownership is decided on (an
	// instance deleted and created again with the same name owns none of
	// the old one's objects).
	LabelApplicationUID = "apps.cozystack.io/application.uid"

	// LabelPlatformNamespace marks a namespace a backend controller created
	// for the backing objects of one tenant namespace; its value is the
	// backend type (e.g. Terraform). Tenants have no rights there.
	LabelPlatformNamespace = "apps.cozystack.io/platform-namespace"
	// LabelTenantNamespace on a platform namespace names the tenant
	// namespace whose instances' backing objects it holds.
	LabelTenantNamespace = "apps.cozystack.io/tenant-namespace"
)

// FinalizerTerraform holds an instance of a Terraform kind whose definition
// destroys resources on deletion until its Terraform object (in the platform
// namespace, so not reachable by the garbage collector) has been deleted,
// once tofu-controller has destroyed its resources. Instances of other
// Terraform kinds go at once; the terraform controller deletes their
// Terraform objects after them (instances that carry it from earlier
// versions keep it until they are deleted). The terraform controller
// removes it, also after the definition has moved to another backend.
const FinalizerTerraform = "apps.cozystack.io/terraform"

// ReasonLegacyBackingObject: a backing object written by an earlier version in
// the instance's own namespace exists; it is left untouched (not updated,
// not deleted) and no new one is created in the platform namespace until the
// platform team has moved it (docs/terraform-backend.md, "Migrating").
const ReasonLegacyBackingObject = "LegacyBackingObject"

// ReasonPlatformNamespaceNotOwned: the platform namespace the backing object
// belongs in exists but was not created by the backend controller (it lacks
// LabelPlatformNamespace or names another tenant namespace); nothing is
// written there.
const ReasonPlatformNamespaceNotOwned = "PlatformNamespaceNotOwned"

// ReasonPlatformObjectNotOwned: an object the backend creates in each
// platform namespace next to its backing objects (for the Terraform backend,
// the runner's ServiceAccount and RoleBinding) exists there already without
// the labels the backend gives its own, so it was left untouched and nothing
// is written in that namespace.
const ReasonPlatformObjectNotOwned = "PlatformObjectNotOwned"

// HelmStorageNamespacePrefix starts the name of the platform namespace that
// holds Helm's release records (the HelmReleases' spec.storageNamespace) of
// one tenant namespace: cozy-helm-<tenant namespace>, cut and hashed as
// pkg/instance's PlatformNamespaceName does when longer than 63 characters.
// The helm controller creates it, labelled LabelPlatformNamespace=Helm and
// LabelTenantNamespace; tenants hold no role there.
const HelmStorageNamespacePrefix = "cozy-helm-"

// ConditionLegacyReleaseStorage (Helm; abnormal-true) is True, reason
// ReasonReleaseStorageInTenantNamespace, while the instance's HelmRelease
// names no spec.storageNamespace (written by an earlier version or by
// upstream Cozystack's API), so Helm's release records are in the tenant's
// namespace, where the tenant can write them. The helm controller leaves them
// there (moving spec.storageNamespace alone makes helm-controller uninstall
// the release); `cozyplane migrate release-storage` moves them. The condition
// is removed once the HelmRelease names its platform namespace. It does not
// change Ready.
const ConditionLegacyReleaseStorage = "LegacyReleaseStorage"

// ReasonReleaseStorageInTenantNamespace: see ConditionLegacyReleaseStorage.
const ReasonReleaseStorageInTenantNamespace = "ReleaseStorageInTenantNamespace"

// maxNamespace is the longest namespace name (a DNS-1123 label).
const maxNamespace = 63

// PlatformNamespaceName is prefix followed by the tenant namespace ns, a valid
// namespace name for every valid ns and a prefix of at most 40 characters
// that starts with a letter and ends with "-": when prefix+ns is longer than
// 63 characters, ns is cut and the first 8 hex characters of sha256(ns) are
// appended after a "-", so two long namespaces sharing a beginning still get
// different names. The backend controllers (pkg/instance) and cozyplane's
// commands derive platform namespaces with it. Pure.
func PlatformNamespaceName(prefix, ns string) string {
	if len(prefix)+len(ns) <= maxNamespace {
		return prefix + ns
	}
	sum := sha256.Sum256([]byte(ns))
	keep := maxNamespace - len(prefix) - 1 - 8
	return prefix + ns[:keep] + "-" + hex.EncodeToString(sum[:])[:8]
}
