package migrate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ownerref"
)

// InstanceObject is the instance --apply creates for an ActionCreate entry:
// the kind and name the plan decided, in the HelmRelease's namespace, with
// the entry's spec, labels and annotations (the adoption proof among them).
// Pure.
func InstanceObject(e *Entry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(appsv1alpha1.GroupVersion.String())
	u.SetKind(e.Kind)
	u.SetNamespace(e.HelmRelease.Namespace)
	u.SetName(e.Instance)
	if len(e.Labels) > 0 {
		u.SetLabels(e.Labels)
	}
	if len(e.Annotations) > 0 {
		u.SetAnnotations(e.Annotations)
	}
	if e.Spec != nil {
		u.Object["spec"] = runtime.DeepCopyJSONValue(e.Spec)
	}
	return u
}

// InstanceFrom reads what matters of an instance. Pure.
func InstanceFrom(u *unstructured.Unstructured) Instance {
	x := Instance{
		Kind:      u.GetKind(),
		Namespace: u.GetNamespace(),
		Name:      u.GetName(),
		UID:       u.GetUID(),
		Adopt:     u.GetAnnotations()[appsv1alpha1.AnnotationAdopt],
		Deleting:  u.GetDeletionTimestamp() != nil,
	}
	x.Ready = readyCondition(u)
	return x
}

// ReleaseFrom reads what matters of a HelmRelease. Pure.
func ReleaseFrom(u *unstructured.Unstructured) Release {
	r := Release{
		Namespace:   u.GetNamespace(),
		Name:        u.GetName(),
		UID:         u.GetUID(),
		Generation:  u.GetGeneration(),
		Labels:      u.GetLabels(),
		Annotations: u.GetAnnotations(),
		Deleting:    u.GetDeletionTimestamp() != nil,
	}
	if ref := metav1.GetControllerOfNoCopy(u); ref != nil {
		c := *ref
		r.Controller = &c
	}
	r.Suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "values"); found && v != nil {
		if m, ok := v.(map[string]any); ok {
			r.Values = m
		} else {
			r.ValuesError = "is not an object"
		}
	}
	return r
}

// readyCondition reads status.conditions[type=Ready] of any object.
func readyCondition(u *unstructured.Unstructured) *metav1.Condition {
	raw, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if !found || err != nil {
		return nil
	}
	var conds []metav1.Condition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conds = append(conds, c)
		}
	}
	if c := meta.FindStatusCondition(conds, appsv1alpha1.ConditionReady); c != nil {
		out := *c
		return &out
	}
	return nil
}

func isInstanceRef(ref *metav1.OwnerReference, kind, name string) bool {
	return ownerref.Points(*ref, appsv1alpha1.GroupVersion.WithKind(kind), name)
}

// SpecFromValues is the instance spec read back from HelmRelease values the
// way upstream's API reads it: the top-level keys starting with "_" are the
// platform's, not the tenant's, and are dropped. Nil stays nil.
func SpecFromValues(values map[string]any) map[string]any {
	if values == nil {
		return nil
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		if !strings.HasPrefix(k, "_") {
			out[k] = v
		}
	}
	return out
}

// Unprefixed returns the entries of m whose key starts with prefix, with the
// prefix removed; nil when there is none.
func Unprefixed(m map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[rest] = v
		}
	}
	return out
}

// Adopted reports whether the HelmRelease is controlled by the instance
// (same API group, kind, name and uid). Pure.
func Adopted(controller *metav1.OwnerReference, kind, name string, instanceUID types.UID) bool {
	return controller != nil && ownerref.Names(*controller, appsv1alpha1.GroupVersion.WithKind(kind), name, instanceUID)
}

// ExistingInstanceVerdict decides about an instance found where --apply
// meant to create one (it appeared since the plan, or a previous run
// created it): nil when it carries the proof for this HelmRelease, else why
// it is left alone.
func ExistingInstanceVerdict(x *Instance, releaseUID types.UID) error {
	switch {
	case x.Deleting:
		return fmt.Errorf("%s %s/%s is being deleted: run migrate again once it is gone", x.Kind, x.Namespace, x.Name)
	case x.Adopt == "":
		return fmt.Errorf("%s %s/%s exists without the adoption proof (annotation %s): not overwritten", x.Kind, x.Namespace, x.Name, appsv1alpha1.AnnotationAdopt)
	case x.Adopt != string(releaseUID):
		return fmt.Errorf("%s %s/%s exists with an adoption proof for another object (uid %s): not overwritten", x.Kind, x.Namespace, x.Name, x.Adopt)
	}
	return nil
}
