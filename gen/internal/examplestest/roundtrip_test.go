package examplestest

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

type tfVariable = tfv1alpha2.Variable

// TestRoundTripExampleInstances: unstructured → typed → unstructured gives
// the input back, for every example instance; the backend encoding is the
// spec as the backend controllers encode it.
func TestRoundTripExampleInstances(t *testing.T) {
	for _, in := range exampleInstances(t) {
		in := in
		t.Run(in.obj.GetKind()+"/"+in.obj.GetName(), func(t *testing.T) {
			k := kindOf(t, in.obj.GetKind())
			typed, err := k.FromUnstructured(in.obj)
			if err != nil {
				t.Fatalf("%s: %v", in.file, err)
			}
			back, err := typed.ToUnstructured()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in.obj.Object, back.Object) {
				t.Fatalf("%s: the round trip changed the object\n--- in\n%s\n--- out\n%s", in.file, toJSON(t, in.obj.Object), toJSON(t, back.Object))
			}
			// A deep copy is equal and independent.
			cp := typed.DeepCopyObject()
			cu, err := cp.(interface {
				ToUnstructured() (*unstructured.Unstructured, error)
			}).ToUnstructured()
			if err != nil || !reflect.DeepEqual(cu.Object, back.Object) {
				t.Fatalf("the deep copy differs: %v", err)
			}
			checkEncoding(t, typed, in.obj)
		})
	}
}

// checkEncoding compares the generated backend encoding with the
// controllers' encoding of the same spec.
func checkEncoding(t *testing.T, typed runtime.Object, u *unstructured.Unstructured) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	switch o := typed.(type) {
	case interface {
		Values() (map[string]any, error)
	}:
		vals, err := o.Values()
		if err != nil {
			t.Fatal(err)
		}
		if spec == nil {
			spec = map[string]any{}
		}
		if !reflect.DeepEqual(vals, spec) {
			t.Errorf("Values() differ from the spec\n--- values\n%s\n--- spec\n%s", toJSON(t, vals), toJSON(t, spec))
		}
	case interface {
		Vars() ([]tfVariable, error)
	}:
		vars, err := o.Vars()
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceVars(t, spec); !reflect.DeepEqual(vars, want) {
			t.Errorf("Vars() differ from the controller's encoding\n--- got\n%s\n--- want\n%s", toJSON(t, vars), toJSON(t, want))
		}
	default:
		t.Fatalf("%T has neither Values nor Vars", typed)
	}
}
