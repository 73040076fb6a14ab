package kindruntime

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// Object is what every generated instance type implements.
type Object interface {
	runtime.Object
	metav1.Object
	// ToUnstructured returns the instance as the API server serves it.
	ToUnstructured() (*unstructured.Unstructured, error)
}

// Kind is one generated kind, as a generated registry package lists it.
type Kind struct {
	GroupVersionKind schema.GroupVersionKind
	// Definition is the ApplicationDefinition the kind was generated from.
	Definition string
	// Backend is Helm (the instance has Values) or Terraform (Vars).
	Backend          string
	New              func() Object
	FromUnstructured func(*unstructured.Unstructured) (Object, error)
	AddToScheme      func(*runtime.Scheme) error
}

// Decoder adapts a generated package's FromUnstructured to Kind's.
func Decoder[T Object](from func(*unstructured.Unstructured) (T, error)) func(*unstructured.Unstructured) (Object, error) {
	return func(u *unstructured.Unstructured) (Object, error) {
		o, err := from(u)
		if err != nil {
			return nil, err
		}
		return o, nil
	}
}

type object interface {
	runtime.Object
	metav1.Object
}

// ToUnstructured returns in as the API server serves it: apiVersion and kind
// set to gvk, fields the spec leaves out omitted, numbers as int64 or
// float64. in is not modified.
func ToUnstructured(in object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	obj := in.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", gvk.Kind, in.GetNamespace(), in.GetName(), err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", gvk.Kind, in.GetNamespace(), in.GetName(), err)
	}
	return u, nil
}

// FromUnstructured decodes u into a T, which must be of kind gvk. Decoding is
// strict and case-sensitive: a field T does not know is an error (the
// generated types are older than the definition: regenerate them), never
// silently dropped.
func FromUnstructured[T any](u *unstructured.Unstructured, gvk schema.GroupVersionKind) (*T, error) {
	if got := u.GroupVersionKind(); got != gvk {
		return nil, fmt.Errorf("%s/%s is a %s, not a %s", u.GetNamespace(), u.GetName(), got, gvk)
	}
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := new(T)
	strict, err := sigsjson.UnmarshalStrict(b, out, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), errors.Join(strict...))
	}
	return out, nil
}

// NewSchemeBuilder registers objs (a kind and its list) under gv, with the
// meta types every group version needs.
func NewSchemeBuilder(gv schema.GroupVersion, objs ...runtime.Object) runtime.SchemeBuilder {
	return runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(gv, objs...)
		metav1.AddToGroupVersion(s, gv)
		return nil
	})
}
