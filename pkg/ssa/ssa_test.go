package ssa

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		have, want any
		ok         bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", "a", "b", false},
		{"numbers across types", int64(3), float64(3), true},
		{"different numbers", int64(3), float64(3.5), false},
		{"extra keys in have are fine", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"empty map wanted and absent", map[string]any{}, map[string]any{"a": map[string]any{}}, true},
		{"nested difference", map[string]any{"a": map[string]any{"x": true}}, map[string]any{"a": map[string]any{"x": false}}, false},
		{"lists are atomic: extra element", []any{"a", "b"}, []any{"a"}, false},
		{"lists compare in order", []any{"b", "a"}, []any{"a", "b"}, false},
		{"list of maps with extra server fields", []any{map[string]any{"k": "v", "d": 1}}, []any{map[string]any{"k": "v"}}, true},
		{"type mismatch", "1", int64(1), false},
		{"null wanted", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Contains(tt.have, tt.want); got != tt.ok {
				t.Fatalf("Contains(%v, %v) = %v, want %v", tt.have, tt.want, got, tt.ok)
			}
		})
	}
}

func obj(labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "y", "labels": labels},
		"data":     map[string]any{"k": "v"},
	}}
}

func TestIntentHash(t *testing.T) {
	a, err := IntentHash(obj(map[string]any{"a": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := IntentHash(obj(map[string]any{"a": "1", "b": "2"}))
	if a == b {
		t.Fatal("different intents hash the same")
	}
	withHash := obj(map[string]any{"a": "1"})
	withHash.SetAnnotations(map[string]string{AnnotationAppliedHashPrefix + "m": "whatever"})
	withHash.SetResourceVersion("42")
	c, _ := IntentHash(withHash)
	if a != c {
		t.Fatal("the hash annotation or resourceVersion changed the intent hash")
	}
}
