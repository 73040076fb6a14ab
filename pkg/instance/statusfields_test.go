package instance

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

// TestStatusFields: the backend owns every field of an instance's status, so
// the part it applies names them all; a field added to ApplicationStatus
// and left out here would never be written.
func TestStatusFields(t *testing.T) {
	typ := reflect.TypeOf(appsv1alpha1.ApplicationStatus{})
	var want []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "conditions" {
			want = append(want, name)
		}
	}
	got := slices.Clone(statusFields)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("statusFields %v, want every field of ApplicationStatus but conditions: %v", got, want)
	}
}
