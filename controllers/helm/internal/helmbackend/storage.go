package helmbackend

// Helm's release records out of the tenant's reach. helm-controller keeps
// each release's records (Secrets sh.helm.release.v1.<release>.v<N>,
// labelled owner=helm and name=<release>) in the HelmRelease's
// spec.storageNamespace, by default the HelmRelease's own namespace, where a
// tenant holding edit writes Secrets. The latest record is what Helm
// uninstalls (pre-delete hooks and all) and what an upgrade compares with, so
// a forged one acts with helm-controller's identity. A HelmRelease written
// here names the platform namespace cozy-helm-<tenant namespace> instead
// (instance.PlatformNamespaceName cuts and hashes long names), which the
// reconciler creates, labelled apps.cozystack.io/platform-namespace=Helm and
// apps.cozystack.io/tenant-namespace=<tenant namespace>, and where tenants
// hold no role. The HelmRelease itself stays in the tenant's namespace
// (upstream's lineage and dashboard read it there).
//
// helm-controller uninstalls a release whose storage namespace changes
// (ReleaseTargetChanged in its internal/action/verify.go: once
// status.storageNamespace is set and a release is in the history, a
// spec.storageNamespace, or the HelmRelease's namespace when unset, that
// differs from it uninstalls the old release before installing anew). So an
// existing HelmRelease keeps the storage namespace it has: one written by an
// earlier version (or upstream's API) names none and keeps its records in
// the tenant's namespace; the instance reports ConditionLegacyReleaseStorage
// until a platform administrator moves them (`cozyplane migrate
// release-storage`, docs/helm-backend.md "Release storage").

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

// StorageNamespacePrefix starts the name of the platform namespace that
// holds the Helm release records of one tenant namespace.
const StorageNamespacePrefix = appsv1alpha1.HelmStorageNamespacePrefix

var _ instance.Storage = Backend{}

// StorageNamespaceOf is the platform namespace of the release records of
// HelmReleases in tenant namespace ns. Pure.
func StorageNamespaceOf(ns string) string {
	return instance.PlatformNamespaceName(StorageNamespacePrefix, ns)
}

// DesiredStorageNamespace is the spec.storageNamespace of the HelmRelease of
// an instance in namespace ns, given live, the HelmRelease as it is (nil when
// absent): a new HelmRelease gets the platform namespace; an existing one
// keeps what it has, "" (unset) included, because helm-controller uninstalls
// a release whose storage namespace changes. Pure.
func DesiredStorageNamespace(ns string, live *unstructured.Unstructured) string {
	if live == nil {
		return StorageNamespaceOf(ns)
	}
	s, _, _ := unstructured.NestedString(live.Object, "spec", "storageNamespace")
	return s
}

// StorageNamespace implements instance.Storage: the platform
// namespace the desired HelmRelease names, "" when it keeps its records in
// its own namespace (or names any namespace but its platform one, which only
// an administrator can have set).
func (Backend) StorageNamespace(desired *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(desired.Object, "spec", "storageNamespace")
	if s == "" || s != StorageNamespaceOf(desired.GetNamespace()) {
		return ""
	}
	return s
}

// StorageNamespaceLabels implements instance.Storage: the
// namespace is marked as the Helm backend's and names its tenant namespace.
func (Backend) StorageNamespaceLabels(ns string) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelPlatformNamespace: string(cozyv1alpha1.BackendHelm),
		appsv1alpha1.LabelTenantNamespace:   ns,
	}
}

// LegacyStorageMessage is the message of ConditionLegacyReleaseStorage for
// HelmRelease ns/name.
func LegacyStorageMessage(ns, name string) string {
	return fmt.Sprintf("HelmRelease %s/%s names no spec.storageNamespace (written by an earlier version or by upstream Cozystack's API), "+
		"so Helm's release records stay in %s, where the tenant can write them and so choose what helm-controller uninstalls or upgrades from; "+
		"they are left there because changing spec.storageNamespace alone makes helm-controller uninstall the release. "+
		"A platform administrator moves them to %s with `cozyplane migrate release-storage -n %s --apply` (docs/helm-backend.md, \"Release storage\")",
		ns, name, ns, StorageNamespaceOf(ns), ns)
}

// projectStorage sets ConditionLegacyReleaseStorage while target, the
// HelmRelease as it is, keeps its records in the tenant's namespace, and
// removes it otherwise; a target read without its spec changes nothing.
// Pure.
func projectStorage(h conditions.Holder, target *unstructured.Unstructured) {
	if _, ok := target.Object["spec"]; !ok {
		return
	}
	s, _, _ := unstructured.NestedString(target.Object, "spec", "storageNamespace")
	if s != "" && s != target.GetNamespace() {
		conditions.Delete(h, appsv1alpha1.ConditionLegacyReleaseStorage)
		return
	}
	conditions.Set(h, appsv1alpha1.ConditionLegacyReleaseStorage, "True", appsv1alpha1.ReasonReleaseStorageInTenantNamespace,
		LegacyStorageMessage(target.GetNamespace(), target.GetName()))
}
