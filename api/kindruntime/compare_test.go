package kindruntime

import (
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type user struct {
	Password string `json:"password"`
	Admin    *bool  `json:"admin,omitempty"`
}

type sample struct {
	Replicas *int64                          `json:"replicas,omitempty"`
	Users    map[string]user                 `json:"users,omitzero"`
	Tags     []string                        `json:"tags,omitzero"`
	Port     intstr.IntOrString              `json:"port"`
	Config   apiextensionsv1.JSON            `json:"config"`
	Extra    map[string]apiextensionsv1.JSON `json:"-"`
}

func TestDiff(t *testing.T) {
	yes, three, four := true, int64(3), int64(4)
	base := func() *sample {
		return &sample{
			Replicas: &three,
			Users:    map[string]user{"app": {Password: "a"}},
			Tags:     []string{"x"},
			Port:     intstr.FromInt32(80),
			Config:   apiextensionsv1.JSON{Raw: []byte(`{"a":1,"b":2}`)},
			Extra:    map[string]apiextensionsv1.JSON{"kept": {Raw: []byte(`true`)}},
		}
	}
	tests := []struct {
		name   string
		change func(*sample)
		want   []string
	}{
		{name: "same", change: func(*sample) {}},
		{name: "pointer value", change: func(s *sample) { s.Replicas = &four }, want: []string{"replicas"}},
		{name: "pointer unset", change: func(s *sample) { s.Replicas = nil }, want: []string{"replicas"}},
		{name: "map value field", change: func(s *sample) { s.Users["app"] = user{Password: "b", Admin: &yes} },
			want: []string{"users[app].password", "users[app].admin"}},
		{name: "map key added, sorted", change: func(s *sample) { s.Users["zed"], s.Users["bob"] = user{}, user{} },
			want: []string{"users[bob]", "users[zed]"}},
		{name: "nil and empty list differ", change: func(s *sample) { s.Tags = []string{} }, want: []string{"tags"}},
		{name: "list element", change: func(s *sample) { s.Tags[0] = "y" }, want: []string{"tags[0]"}},
		{name: "int or string", change: func(s *sample) { s.Port = intstr.FromString("http") }, want: []string{"port"}},
		{name: "JSON keys in another order are equal", change: func(s *sample) { s.Config.Raw = []byte(`{"b":2, "a":1}`) }},
		{name: "JSON value", change: func(s *sample) { s.Config.Raw = []byte(`{"a":1}`) }, want: []string{"config"}},
		{name: "kept keys are named by their key", change: func(s *sample) {
			s.Extra["more"] = apiextensionsv1.JSON{Raw: []byte(`1`)}
		}, want: []string{"[more]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			tt.change(b)
			got := Diff(a, b)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
			if Equal(a, b) != (len(tt.want) == 0) {
				t.Errorf("Equal = %v, want %v", Equal(a, b), len(tt.want) == 0)
			}
		})
	}
	if got := Diff((*sample)(nil), base()); !reflect.DeepEqual(got, []string{""}) {
		t.Errorf("Diff(nil, set) = %q, want the whole value", got)
	}
}
