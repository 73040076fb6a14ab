package kindruntime

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var widgetGVK = schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Widget"}

type widgetSpec struct {
	Size *int64 `json:"size,omitempty"`
	Name string `json:"name"`
}

type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec"`
}

func (in *Widget) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Size != nil {
		v := *in.Spec.Size
		out.Spec.Size = &v
	}
	return &out
}

func (in *Widget) ToUnstructured() (*unstructured.Unstructured, error) {
	return ToUnstructured(in, widgetGVK)
}

func TestToAndFromUnstructured(t *testing.T) {
	size := int64(3)
	in := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}, Spec: widgetSpec{Size: &size, Name: "x"}}
	u, err := ToUnstructured(in, widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if u.GroupVersionKind() != widgetGVK || in.Kind != "" {
		t.Errorf("kind %v (want %v), and the input must keep its own (%q)", u.GroupVersionKind(), widgetGVK, in.Kind)
	}
	if got, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); got != 3 {
		t.Errorf("spec.size = %v, want int64 3", u.Object["spec"])
	}
	back, err := FromUnstructured[Widget](u, widgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != "w" || back.Spec.Name != "x" || *back.Spec.Size != 3 {
		t.Errorf("round trip = %+v", back)
	}

	other := u.DeepCopy()
	other.SetKind("Gadget")
	if _, err := FromUnstructured[Widget](other, widgetGVK); err == nil || !strings.Contains(err.Error(), "not a") {
		t.Errorf("another kind: err = %v", err)
	}
	unknown := u.DeepCopy()
	_ = unstructured.SetNestedField(unknown.Object, "x", "spec", "colour")
	if _, err := FromUnstructured[Widget](unknown, widgetGVK); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown field must be an error naming it: %v", err)
	}
	wrongCase := u.DeepCopy()
	_ = unstructured.SetNestedField(wrongCase.Object, "y", "spec", "Name")
	if _, err := FromUnstructured[Widget](wrongCase, widgetGVK); err == nil {
		t.Error("decoding must be case-sensitive")
	}
}

func TestNewSchemeBuilder(t *testing.T) {
	s := runtime.NewScheme()
	sb := NewSchemeBuilder(widgetGVK.GroupVersion(), &Widget{})
	if err := sb.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if !s.Recognizes(widgetGVK) {
		t.Error("the kind is not registered")
	}
	if !s.Recognizes(widgetGVK.GroupVersion().WithKind("ListOptions")) {
		t.Error("the group version lacks the meta types")
	}
}

func TestDecoder(t *testing.T) {
	dec := Decoder(func(*unstructured.Unstructured) (*Widget, error) { return nil, errTest })
	if o, err := dec(nil); o != nil || err != errTest {
		t.Errorf("a failed decode must be a nil Object (not a typed nil) and the error: %v, %v", o, err)
	}
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "test" }
