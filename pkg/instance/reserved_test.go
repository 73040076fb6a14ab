package instance

import (
	"strings"
	"testing"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

func TestCheckReservedKeys(t *testing.T) {
	tests := []struct {
		name string
		spec any
		want []string // substrings of the message; none: allowed
	}{
		{name: "no spec", spec: nil},
		{name: "not an object", spec: "x"},
		{name: "ordinary keys", spec: map[string]any{"replicas": 2, "size": "1Gi"}},
		{name: "a nested underscore key is the application's", spec: map[string]any{"config": map[string]any{"_namespace": map[string]any{"host": "x"}}}},
		{name: "an underscore inside a key", spec: map[string]any{"max_connections": 10}},
		{name: "the platform's namespace values", spec: map[string]any{"replicas": 1, "_namespace": map[string]any{"host": "victim.example.net"}},
			want: []string{`"_namespace"`, `{"op":"remove","path":"/spec/_namespace"}`, "nothing is written to the backing object"}},
		{name: "every reserved key, sorted", spec: map[string]any{"_cluster": map[string]any{}, "_": 1, "_namespace": map[string]any{}},
			want: []string{`"_", "_cluster", "_namespace"`}},
		{name: "a key needing JSON pointer escapes", spec: map[string]any{"_a/b~c": 1},
			want: []string{`"path":"/spec/_a~1b~0c"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReservedKeys(tc.spec)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("CheckReservedKeys() = %v, want nil", err)
				}
				return
			}
			s, ok := reconcileerr.AsStalled(err)
			if !ok || s.Reason != appsv1alpha1.ReasonReservedKey {
				t.Fatalf("CheckReservedKeys() = %v, want a Stalled error with reason %s", err, appsv1alpha1.ReasonReservedKey)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
		})
	}
}
