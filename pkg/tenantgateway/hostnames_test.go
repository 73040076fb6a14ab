package tenantgateway

import (
	"reflect"
	"testing"
)

func TestNormalizeHostnames(t *testing.T) {
	if got := NormalizeHostname(" App.Example.ORG "); got != "app.example.org" {
		t.Errorf("NormalizeHostname = %q", got)
	}
	got := NormalizeHostnames([]string{"b.example.org", "", "A.example.org", "a.example.org", " "})
	if want := []string{"a.example.org", "b.example.org"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NormalizeHostnames = %q, want %q", got, want)
	}
}
