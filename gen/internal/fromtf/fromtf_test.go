package fromtf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozyplane/cozyplane/pkg/schema"
)

func parseOne(t *testing.T, src string) *Variable {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "variables.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mod.Variables) != 1 {
		t.Fatalf("want one variable, got %d", len(mod.Variables))
	}
	return mod.Variables[0]
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestValidationTranslation(t *testing.T) {
	cases := []struct {
		name, typ, cond string
		// want: keyword=JSON pairs expected in the variable's schema
		want []string
		// translated: no "not enforced" note
		translated bool
	}{
		{"regex", "string", `can(regex("^a+$", var.x))`, []string{`pattern="^a+$"`}, true},
		{"contains", "string", `contains(["a", "b"], var.x)`, []string{`enum=["a","b"]`}, true},
		{"length string", "string", `length(var.x) <= 10`, []string{`maxLength=10`}, true},
		{"length reversed", "string", `3 < length(var.x)`, []string{`minLength=4`}, true},
		{"length list range", "list(string)", `length(var.x) > 0 && length(var.x) < 5`, []string{`minItems=1`, `maxItems=4`}, true},
		{"length map", "map(string)", `length(var.x) <= 3`, []string{`maxProperties=3`}, true},
		{"number range", "number", `var.x >= 1 && var.x < 10`, []string{`minimum=1`, `maximum=10`, `exclusiveMaximum=true`}, true},
		{"not empty", "string", `var.x != ""`, []string{`minLength=1`}, true},
		{"null or", "number", `var.x == null || var.x > 0`, []string{`minimum=0`, `exclusiveMinimum=true`}, true},
		{"cidr", "string", `can(cidrhost(var.x, 0))`, []string{`format="cidr"`}, true},
		{"items", "list(string)", `alltrue([for v in var.x : can(regex("^[a-z]+$", v))])`, []string{`items.pattern="^[a-z]+$"`}, true},
		{"object attr", "object({a = string})", `contains(["p", "q"], var.x.a)`, []string{`properties.a.enum=["p","q"]`}, true},
		{"partly", "string", `length(var.x) <= 5 && startswith(var.x, "a")`, []string{`maxLength=5`}, false},
		{"untranslated", "string", `startswith(var.x, "a")`, nil, false},
		{"or untranslated", "string", `var.x == "a" || var.x == "b"`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := parseOne(t, "variable \"x\" {\n  type = "+c.typ+"\n  validation {\n    condition     = "+c.cond+"\n    error_message = \"Bad x.\"\n  }\n}\n")
			for _, w := range c.want {
				k, val, _ := strings.Cut(w, "=")
				node := v.Schema
				parts := strings.Split(k, ".")
				for _, p := range parts[:len(parts)-1] {
					next, _ := node[p].(map[string]any)
					node = next
				}
				if got := js(node[parts[len(parts)-1]]); got != val {
					t.Errorf("%s = %s, want %s (schema %s)", k, got, val, js(v.Schema))
				}
			}
			desc, _ := v.Schema["description"].(string)
			noted := strings.Contains(desc, "enforced by the API server")
			if noted == c.translated {
				t.Errorf("translated=%v but description is %q", c.translated, desc)
			}
			if !c.translated && !strings.Contains(desc, "(Bad x.)") {
				t.Errorf("the note lacks the error message: %q", desc)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	v := parseOne(t, `variable "x" {
  type = object({
    a = string
    b = optional(number, 3)
    c = optional(list(object({ d = optional(bool, true) })), [])
  })
  default     = { a = "z" }
  description = "X."
  sensitive   = true
  nullable    = true
}
`)
	if v.Required {
		t.Error("a variable with a default is optional")
	}
	want := `{"default":{"a":"z","b":3,"c":[]},"description":"X.\n\nSensitive: Terraform redacts it in plans; it is stored in the instance's spec.",` +
		`"nullable":true,"properties":{"a":{"type":"string"},"b":{"default":3,"type":"number"},"c":{"default":[],"items":{"properties":{"d":{"default":true,"type":"boolean"}},"type":"object"},"type":"array"}},` +
		`"required":["a"],"type":"object","x-cozystack-sensitive":true}`
	if got := js(v.Schema); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	req := parseOne(t, "variable \"y\" {\n  type = set(string)\n}\n")
	if !req.Required || js(req.Schema) != `{"items":{"type":"string"},"type":"array","uniqueItems":true}` {
		t.Errorf("got required=%v %s", req.Required, js(req.Schema))
	}
}

// pkg/schema drops x- extensions other than x-kubernetes-*: the sensitive
// mark stays in the definition and is not in the CRD.
func TestSensitiveMarkIsNotInTheCRD(t *testing.T) {
	props, err := schema.ParseOpenAPISchema(`{"type": "object", "properties": {"p": {"type": "string", "format": "password", "x-cozystack-sensitive": true}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(props)
	if strings.Contains(string(b), ExtSensitive) || !strings.Contains(string(b), `"format":"password"`) {
		t.Errorf("got %s", b)
	}
}
