package instance

import (
	"reflect"
	"testing"
)

func TestPrune(t *testing.T) {
	m := map[string]any{
		"a": "", "b": nil, "c": false, "d": true, "e": []any{}, "f": []any{map[string]any{"x": ""}},
		"g": map[string]any{"h": "", "i": map[string]any{}}, "j": map[string]any{"k": "v", "l": 0},
		"values": map[string]any{"empty": "", "off": false, "none": map[string]any{}},
	}
	Prune(m, "values")
	want := map[string]any{
		"d": true, "f": []any{map[string]any{"x": ""}}, "j": map[string]any{"k": "v", "l": 0},
		"values": map[string]any{"empty": "", "off": false, "none": map[string]any{}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Prune = %#v\nwant    %#v", m, want)
	}
}
