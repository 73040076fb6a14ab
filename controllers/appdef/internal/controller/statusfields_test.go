package controller

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// TestStatusFields: appdef owns every field of a definition's status, so
// the part it applies names them all; a field added to
// ApplicationDefinitionStatus and left out here would never be written.
func TestStatusFields(t *testing.T) {
	typ := reflect.TypeOf(cozyv1alpha1.ApplicationDefinitionStatus{})
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
		t.Errorf("statusFields %v, want every field of ApplicationDefinitionStatus but conditions: %v", got, want)
	}
}
