package controller

import (
	"maps"
	"testing"
)

func TestMissingLabels(t *testing.T) {
	want := map[string]string{"a": "1", "b": "2"}
	if d := missingLabels(map[string]string{"a": "1", "b": "2", "c": "3"}, want); len(d) != 0 {
		t.Fatalf("settled object: missingLabels = %v, want nothing", d)
	}
	if d := missingLabels(map[string]string{"a": "0"}, want); !maps.Equal(d, want) {
		t.Fatalf("missingLabels = %v, want %v", d, want)
	}
}
