package releasestorage

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// Actions of an entry.
const (
	// ActionMove: the records are in the tenant namespace and can move.
	ActionMove = "move"
	// ActionNone: the HelmRelease already names its platform namespace.
	ActionNone = "none"
	// ActionSkip: not moved now; Reason and Message say why and what to do.
	ActionSkip = "skip"
)

// Reasons of a skip.
const (
	SkipOtherStorage      = "OtherStorageNamespace"
	SkipNotBackend        = "NotWrittenByTheHelmBackend"
	SkipDeleting          = "Deleting"
	SkipReleaseBusy       = "ReleaseInProgress"
	SkipNamespaceNotOwned = "PlatformNamespaceNotOwned"
)

// Entry is what happens to one HelmRelease.
type Entry struct {
	Namespace   string `json:"namespace"`
	HelmRelease string `json:"helmRelease"`
	// Release is the Helm release name (the HelmRelease's name, as the
	// helm backend writes it).
	Release string `json:"release"`
	// StorageNamespace is where the records go.
	StorageNamespace string   `json:"storageNamespace"`
	Records          []string `json:"records,omitempty"`
	Action           string   `json:"action"`
	Reason           string   `json:"reason,omitempty"`
	Message          string   `json:"message,omitempty"`
	Result           string   `json:"result,omitempty"`
}

// Plan is every HelmRelease of instances in scope.
type Plan struct {
	// Namespace is the scope; "" for all namespaces.
	Namespace string  `json:"namespace,omitempty"`
	Entries   []Entry `json:"entries"`
}

// Count is the number of entries with action a.
func (p *Plan) Count(a string) int {
	n := 0
	for i := range p.Entries {
		if p.Entries[i].Action == a {
			n++
		}
	}
	return n
}

// StorageNamespaceOf is the platform namespace of the release records of
// HelmReleases in namespace ns, as the helm controller names it.
func StorageNamespaceOf(ns string) string {
	return appsv1alpha1.PlatformNamespaceName(appsv1alpha1.HelmStorageNamespacePrefix, ns)
}

// StorageNamespaceLabels are the labels the helm controller gives the
// platform namespace of tenant namespace ns.
func StorageNamespaceLabels(ns string) map[string]string {
	return map[string]string{
		appsv1alpha1.LabelPlatformNamespace: string(cozyv1alpha1.BackendHelm),
		appsv1alpha1.LabelTenantNamespace:   ns,
	}
}

// IsBackingRelease reports whether hr is a HelmRelease of an instance: the
// application labels and a controller owner reference to apps.cozystack.io.
func IsBackingRelease(hr *unstructured.Unstructured) bool {
	if hr.GetLabels()[appsv1alpha1.LabelApplicationKind] == "" {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(hr)
	return ref != nil && len(ref.APIVersion) > len(appsv1alpha1.GroupVersion.Group) &&
		ref.APIVersion[:len(appsv1alpha1.GroupVersion.Group)+1] == appsv1alpha1.GroupVersion.Group+"/"
}

var recordName = regexp.MustCompile(`^sh\.helm\.release\.v1\.(.+)\.v([0-9]+)$`)

// RecordVersion is the release version a record's name carries, -1 when the
// name is not a release record's.
func RecordVersion(name string) int {
	m := recordName.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(m[2])
	if err != nil {
		return -1
	}
	return v
}

// busy are the release statuses of a Helm action under way.
var busy = map[string]bool{"pending-install": true, "pending-upgrade": true, "pending-rollback": true, "uninstalling": true}

// Decide says what happens to hr, given its release records in its own
// namespace (the Secrets labelled owner=helm, name=<release>) and the
// namespace at its platform namespace's name (nil when absent). Pure.
func Decide(hr *unstructured.Unstructured, records []unstructured.Unstructured, platform *unstructured.Unstructured) Entry {
	ns, name := hr.GetNamespace(), hr.GetName()
	e := Entry{Namespace: ns, HelmRelease: name, Release: name, StorageNamespace: StorageNamespaceOf(ns)}
	sorted := append([]unstructured.Unstructured(nil), records...)
	sort.Slice(sorted, func(i, j int) bool { return RecordVersion(sorted[i].GetName()) < RecordVersion(sorted[j].GetName()) })
	for i := range sorted {
		e.Records = append(e.Records, sorted[i].GetName())
	}
	skip := func(reason, format string, args ...any) Entry {
		e.Action, e.Reason, e.Message = ActionSkip, reason, fmt.Sprintf(format, args...)
		return e
	}
	spec, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace")
	switch {
	case spec == e.StorageNamespace:
		e.Action = ActionNone
		return e
	case spec != "" && spec != ns:
		return skip(SkipOtherStorage, "spec.storageNamespace is %s, set by an administrator; left as it is", spec)
	case !hr.GetDeletionTimestamp().IsZero():
		return skip(SkipDeleting, "the HelmRelease is being deleted")
	}
	for _, f := range []string{"releaseName", "targetNamespace"} {
		if v, _, _ := unstructured.NestedString(hr.Object, "spec", f); v != "" {
			return skip(SkipNotBackend, "spec.%s is set, which the helm backend never writes; an administrator moves its records by hand", f)
		}
	}
	if platform != nil {
		for k, v := range StorageNamespaceLabels(ns) {
			if platform.GetLabels()[k] != v {
				return skip(SkipNamespaceNotOwned, "namespace %s exists without the label %s=%s: it was not created for %s by the helm controller; "+
					"an administrator removes or relabels it, then runs this again", e.StorageNamespace, k, v, ns)
			}
		}
	}
	if n := len(sorted); n > 0 {
		latest := &sorted[n-1]
		if st := latest.GetLabels()["status"]; busy[st] {
			return skip(SkipReleaseBusy, "helm-controller is acting on the release (record %s is %s); run this again once it is done", latest.GetName(), st)
		}
	}
	e.Action = ActionMove
	return e
}
