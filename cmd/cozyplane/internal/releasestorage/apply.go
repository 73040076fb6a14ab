package releasestorage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

// Resources read and written.
var (
	HelmReleases = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
	Secrets      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	Namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// attempts bounds how often one HelmRelease's move starts over because
// helm-controller wrote it meanwhile.
const attempts = 5

// Gather reads every HelmRelease of an instance in namespace ns ("" for
// all), its release records and its platform namespace, and decides.
func Gather(ctx context.Context, c dynamic.Interface, ns string) (Plan, error) {
	p := Plan{Namespace: ns}
	list, err := c.Resource(HelmReleases).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: appsv1alpha1.LabelApplicationKind})
	if err != nil {
		return p, fmt.Errorf("listing HelmReleases: %w", err)
	}
	for i := range list.Items {
		hr := &list.Items[i]
		if !IsBackingRelease(hr) {
			continue
		}
		records, err := Records(ctx, c, hr.GetNamespace(), hr.GetName())
		if err != nil {
			return p, err
		}
		platform, err := c.Resource(Namespaces).Get(ctx, StorageNamespaceOf(hr.GetNamespace()), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			platform, err = nil, nil
		}
		if err != nil {
			return p, fmt.Errorf("reading namespace %s: %w", StorageNamespaceOf(hr.GetNamespace()), err)
		}
		p.Entries = append(p.Entries, Decide(hr, records, platform))
	}
	return p, nil
}

// Records lists the release records of release in namespace ns.
func Records(ctx context.Context, c dynamic.Interface, ns, release string) ([]unstructured.Unstructured, error) {
	sel := labels.SelectorFromSet(labels.Set{"owner": "helm", "name": release}).String()
	list, err := c.Resource(Secrets).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the release records of %s in %s: %w", release, ns, err)
	}
	var out []unstructured.Unstructured
	for _, s := range list.Items {
		if RecordVersion(s.GetName()) >= 0 && strings.TrimSuffix(strings.TrimPrefix(s.GetName(), "sh.helm.release.v1."), fmt.Sprintf(".v%d", RecordVersion(s.GetName()))) == release {
			out = append(out, s)
		}
	}
	return out, nil
}

// Applier carries out a plan.
type Applier struct {
	Client       dynamic.Interface
	FieldManager string
	// Log receives one line per step; may be nil.
	Log io.Writer
}

// IncompleteError names the HelmReleases that did not move.
type IncompleteError struct{ Failed []string }

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%d HelmRelease(s) not moved:\n  - %s", len(e.Failed), strings.Join(e.Failed, "\n  - "))
}

// Results of Apply.
const (
	ResultMoved = "moved: helm-controller reads the records from %s from its next reconcile; the %d record(s) left in %s are no longer read " +
		"(delete them with: kubectl -n %s delete secret -l owner=helm,name=%s)"
	ResultAlready = "already in the platform namespace"
)

// Apply moves every ActionMove entry, one at a time. Entries get a Result.
func (a *Applier) Apply(ctx context.Context, p *Plan) error {
	var failed []string
	for i := range p.Entries {
		e := &p.Entries[i]
		switch e.Action {
		case ActionNone:
			e.Result = ResultAlready
			continue
		case ActionSkip:
			continue
		}
		if err := a.move(ctx, e); err != nil {
			e.Result = "not moved: " + err.Error()
			failed = append(failed, fmt.Sprintf("%s/%s: %v", e.Namespace, e.HelmRelease, err))
		}
	}
	if len(failed) > 0 {
		return &IncompleteError{Failed: failed}
	}
	return nil
}

var errStartOver = errors.New("helm-controller wrote the HelmRelease meanwhile")

func (a *Applier) move(ctx context.Context, e *Entry) error {
	if err := a.ensureNamespace(ctx, e); err != nil {
		return err
	}
	for i := 0; i < attempts; i++ {
		n, err := a.attempt(ctx, e)
		if errors.Is(err, errStartOver) {
			a.logf("%s/%s: %v; starting over", e.Namespace, e.HelmRelease, err)
			continue
		}
		if err != nil {
			return err
		}
		e.Result = fmt.Sprintf(ResultMoved, e.StorageNamespace, n, e.Namespace, e.Namespace, e.Release)
		return nil
	}
	return fmt.Errorf("helm-controller kept writing the HelmRelease during %d attempts; run this again when it is idle", attempts)
}

// attempt runs steps 2 to 4 of the package doc once, and returns the number
// of records copied.
func (a *Applier) attempt(ctx context.Context, e *Entry) (int, error) {
	hrs := a.Client.Resource(HelmReleases).Namespace(e.Namespace)
	records, err := a.copyRecords(ctx, e)
	if err != nil {
		return 0, err
	}
	hr, err := hrs.Get(ctx, e.HelmRelease, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	if spec, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace"); spec == e.StorageNamespace {
		return records, nil // moved by an earlier run
	}
	if st, _, _ := unstructured.NestedString(hr.Object, "status", "storageNamespace"); st != "" {
		patch := mergePatch(hr.GetResourceVersion(), "status", map[string]any{"storageNamespace": nil})
		if _, err := hrs.Patch(ctx, e.HelmRelease, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.FieldManager}, "status"); err != nil {
			if apierrors.IsConflict(err) {
				return 0, errStartOver
			}
			return 0, fmt.Errorf("clearing status.storageNamespace: %w", err)
		}
		a.logf("%s/%s: cleared status.storageNamespace (was %s)", e.Namespace, e.HelmRelease, st)
		if hr, err = hrs.Get(ctx, e.HelmRelease, metav1.GetOptions{}); err != nil {
			return 0, err
		}
		if st, _, _ := unstructured.NestedString(hr.Object, "status", "storageNamespace"); st != "" {
			return 0, errStartOver
		}
	}
	// The records helm-controller may have written since the copy.
	if same, err := a.copied(ctx, e); err != nil || !same {
		if err == nil {
			err = errStartOver
		}
		return 0, err
	}
	patch := mergePatch(hr.GetResourceVersion(), "spec", map[string]any{"storageNamespace": e.StorageNamespace})
	if _, err := hrs.Patch(ctx, e.HelmRelease, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: a.FieldManager}); err != nil {
		if apierrors.IsConflict(err) {
			return 0, errStartOver
		}
		return 0, fmt.Errorf("setting spec.storageNamespace: %w", err)
	}
	a.logf("%s/%s: spec.storageNamespace is now %s", e.Namespace, e.HelmRelease, e.StorageNamespace)
	return records, nil
}

// mergePatch is a JSON merge patch of one top-level field, with the
// resourceVersion as precondition.
func mergePatch(rv, field string, value map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv}, field: value})
	return b
}

func (a *Applier) ensureNamespace(ctx context.Context, e *Entry) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(e.StorageNamespace)
	ns.SetLabels(StorageNamespaceLabels(e.Namespace))
	_, err := a.Client.Resource(Namespaces).Create(ctx, ns, metav1.CreateOptions{FieldManager: a.FieldManager})
	switch {
	case err == nil:
		a.logf("created namespace %s", e.StorageNamespace)
		return nil
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("creating namespace %s: %w", e.StorageNamespace, err)
	}
	live, err := a.Client.Resource(Namespaces).Get(ctx, e.StorageNamespace, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for k, v := range StorageNamespaceLabels(e.Namespace) {
		if live.GetLabels()[k] != v {
			return fmt.Errorf("namespace %s exists without the label %s=%s; an administrator removes or relabels it", e.StorageNamespace, k, v)
		}
	}
	if !live.GetDeletionTimestamp().IsZero() {
		return fmt.Errorf("namespace %s is being deleted; run this again once it is gone", e.StorageNamespace)
	}
	return nil
}

// record is what a copy keeps of a release record.
func record(s *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	out.SetNamespace(ns)
	out.SetName(s.GetName())
	out.SetLabels(s.GetLabels())
	if t, ok := s.Object["type"]; ok {
		out.Object["type"] = t
	}
	if d, ok := s.Object["data"]; ok {
		out.Object["data"] = d
	}
	return out
}

func sameRecord(a, b *unstructured.Unstructured) bool {
	return reflect.DeepEqual(a.GetLabels(), b.GetLabels()) && reflect.DeepEqual(a.Object["data"], b.Object["data"]) &&
		reflect.DeepEqual(a.Object["type"], b.Object["type"])
}

// copyRecords copies every record of the release to the platform namespace,
// bringing a differing copy to the original.
func (a *Applier) copyRecords(ctx context.Context, e *Entry) (int, error) {
	records, err := Records(ctx, a.Client, e.Namespace, e.Release)
	if err != nil {
		return 0, err
	}
	dst := a.Client.Resource(Secrets).Namespace(e.StorageNamespace)
	for i := range records {
		want := record(&records[i], e.StorageNamespace)
		live, err := dst.Get(ctx, want.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := dst.Create(ctx, want, metav1.CreateOptions{FieldManager: a.FieldManager}); err != nil {
				return 0, fmt.Errorf("copying %s to %s: %w", want.GetName(), e.StorageNamespace, err)
			}
			a.logf("%s/%s: copied %s to %s", e.Namespace, e.HelmRelease, want.GetName(), e.StorageNamespace)
		case err != nil:
			return 0, err
		case !sameRecord(live, want):
			want.SetResourceVersion(live.GetResourceVersion())
			if _, err := dst.Update(ctx, want, metav1.UpdateOptions{FieldManager: a.FieldManager}); err != nil {
				return 0, fmt.Errorf("updating the copy of %s in %s: %w", want.GetName(), e.StorageNamespace, err)
			}
			a.logf("%s/%s: brought the copy of %s in %s to the original", e.Namespace, e.HelmRelease, want.GetName(), e.StorageNamespace)
		}
	}
	return len(records), nil
}

// copied reports whether every record of the release has an identical copy
// in the platform namespace.
func (a *Applier) copied(ctx context.Context, e *Entry) (bool, error) {
	records, err := Records(ctx, a.Client, e.Namespace, e.Release)
	if err != nil {
		return false, err
	}
	dst := a.Client.Resource(Secrets).Namespace(e.StorageNamespace)
	for i := range records {
		live, err := dst.Get(ctx, records[i].GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !sameRecord(live, record(&records[i], e.StorageNamespace)) {
			return false, nil
		}
	}
	return true, nil
}

func (a *Applier) logf(format string, args ...any) {
	if a.Log != nil {
		fmt.Fprintf(a.Log, format+"\n", args...)
	}
}
