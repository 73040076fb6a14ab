// Package instancetest holds fixtures for tests of Backend implementations.
package instancetest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

// Definition parses an ApplicationDefinition (strictly) and resolves it.
func Definition(t *testing.T, y string) *instance.Definition {
	t.Helper()
	obj := &cozyv1alpha1.ApplicationDefinition{}
	if err := yaml.UnmarshalStrict([]byte(y), obj); err != nil {
		t.Fatal(err)
	}
	def, err := instance.Resolve(obj)
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// Object parses YAML into an unstructured object.
func Object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Normalise round-trips through YAML so numbers and durations compare as
// the API server would store them.
func Normalise(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
