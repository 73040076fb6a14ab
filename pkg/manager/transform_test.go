package manager

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
)

func TestStripManagedFields(t *testing.T) {
	entry := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: entry, Labels: map[string]string{"a": "b"}}}
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: entry}}
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "X", "metadata": map[string]any{
		"name": "u", "labels": map[string]any{"a": "b"},
		"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply"}}}}}
	for _, in := range []any{typed, meta, u} {
		out, err := StripManagedFields(in)
		if err != nil {
			t.Fatal(err)
		}
		obj := out.(metav1.Object)
		if obj.GetManagedFields() != nil {
			t.Errorf("%s: managedFields kept: %v", obj.GetName(), obj.GetManagedFields())
		}
	}
	if typed.Labels["a"] != "b" || u.GetLabels()["a"] != "b" {
		t.Error("labels lost with the managedFields")
	}
	// Objects without metadata, and tombstones, pass through unchanged.
	for _, in := range []any{
		&unstructured.Unstructured{Object: map[string]any{"kind": "X"}},
		&unstructured.Unstructured{Object: map[string]any{"kind": "X", "metadata": "not a map"}},
		toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: u},
		"not an object",
	} {
		if out, err := StripManagedFields(in); err != nil || out == nil {
			t.Errorf("StripManagedFields(%v) = %v, %v", in, out, err)
		}
	}
}
