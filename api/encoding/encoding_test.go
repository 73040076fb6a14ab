package encoding

import (
	"strings"
	"testing"
)

type spec struct {
	Region  string         `json:"region"`
	Count   *int64         `json:"count,omitempty"`
	Tags    map[string]any `json:"tags,omitzero"`
	Subnets []string       `json:"subnets,omitzero"`
}

func TestIsHCLIdentifier(t *testing.T) {
	for name, want := range map[string]bool{
		"region": true, "_private": true, "a1_b2": true,
		"": false, "9lives": false, "Bad-Key": false, "Region": false, "with-dash": false, "a.b": false,
	} {
		if got := IsHCLIdentifier(name); got != want {
			t.Errorf("IsHCLIdentifier(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestVars(t *testing.T) {
	three := int64(3)
	tests := []struct {
		name    string
		spec    any
		want    string // name=value lines
		wantErr string
	}{
		{name: "nil spec", spec: nil, want: ""},
		{name: "empty object", spec: map[string]any{}, want: ""},
		{name: "sorted, JSON types kept", spec: map[string]any{"zone": "a", "count": int64(2), "on": true, "list": []any{"x"}, "obj": map[string]any{"k": 1.5}},
			want: `count=2;list=["x"];obj={"k":1.5};on=true;zone="a";`},
		{name: "typed spec, omitted fields left out", spec: &spec{Region: "eu", Count: &three},
			want: `count=3;region="eu";`},
		{name: "typed spec, empty list kept", spec: &spec{Region: "eu", Subnets: []string{}},
			want: `region="eu";subnets=[];`},
		{name: "key that is no variable name", spec: map[string]any{"Bad-Key": 1}, wantErr: `spec key "Bad-Key" is not a Terraform variable name (must match ^[a-z_][a-z0-9_]*$)`},
		{name: "not an object", spec: "text", wantErr: "spec is a string, not an object"},
		{name: "a list is not an object", spec: []any{1}, wantErr: "spec is a []interface {}, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, err := Vars(tt.spec)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, v := range vars {
				b.WriteString(v.Name + "=" + string(v.Value.Raw) + ";")
			}
			if b.String() != tt.want {
				t.Errorf("Vars = %s, want %s", b.String(), tt.want)
			}
			if tt.spec == nil && vars != nil {
				t.Errorf("a nil spec has no variables, got %#v", vars)
			}
		})
	}
}

func TestValues(t *testing.T) {
	three := int64(3)
	got, err := Values(&spec{Region: "eu", Count: &three})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["region"] != "eu" || got["count"] != int64(3) {
		t.Errorf("Values = %#v: want region and count, count as int64", got)
	}
	var none *spec
	got, err = Values(none)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Values(nil pointer) = %#v, %v: want an empty object", got, err)
	}
	b, err := ValuesJSON(map[string]any{"b": 1, "a": "x"})
	if err != nil || string(b) != `{"a":"x","b":1}` {
		t.Errorf("ValuesJSON = %s, %v", b, err)
	}
}
