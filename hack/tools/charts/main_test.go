package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestValuesTable(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"image": map[string]any{"properties": map[string]any{
			"pullPolicy": map[string]any{"type": "string", "enum": []any{"Always", "Never"}},
		}},
		"port":  map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}},
		"quiet": map[string]any{"type": "boolean", "description": "From the schema."},
	}}
	cases := []struct {
		name, values string
		want         []string
		wantErr      string
	}{{
		name: "groups recurse, commented mappings are one row, schema fills type and enum",
		values: `
image:
  # Pull policy.
  pullPolicy: Always
# Resources <of the pod>.
resources:
  requests: {cpu: 50m}
# A port | or a name.
port: 8080
quiet: false
`,
		want: []string{
			"| `image.pullPolicy` | string | `\"Always\"` | Pull policy. One of `Always`, `Never`. |",
			"| `resources` | object | `{\"requests\":{\"cpu\":\"50m\"}}` | Resources &lt;of the pod&gt;. |",
			"| `port` | integer or string | `8080` | A port \\| or a name. |",
			"| `quiet` | boolean | `false` | From the schema. |",
		},
	}, {
		name:    "a key without a description is an error",
		values:  "image:\n  tag: \"\"\nundocumented: 1\n",
		wantErr: "image.tag, undocumented",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := valuesTable(parse(t, c.values), schema)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(got), "\n")[2:]
			if strings.Join(lines, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestReplaceBlock(t *testing.T) {
	got, err := replaceBlock("# x\n<!-- values:begin -->\nold\n<!-- values:end -->\ntail\n", "new\n")
	if err != nil || got != "# x\n<!-- values:begin -->\nnew\n<!-- values:end -->\ntail\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := replaceBlock("no markers", "new\n"); err == nil {
		t.Fatal("a README without markers must be an error")
	}
}

func TestPackageChartIsReproducible(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", "name: lib\nversion: 0.1.0\ntype: library\n")
	write("templates/_b.tpl", "b")
	write("templates/_a.tpl", "a")
	write("schema/ignored.json", "{}")
	first, err := packageChart(dir, "lib")
	if err != nil {
		t.Fatal(err)
	}
	// A later modification time and other permissions change nothing.
	write("templates/_a.tpl", "a")
	if err := os.Chmod(filepath.Join(dir, "templates/_b.tpl"), 0o755); err != nil {
		t.Fatal(err)
	}
	second, err := packageChart(dir, "lib")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("packaging the same files twice gave different archives")
	}
	write("templates/_a.tpl", "changed")
	third, _ := packageChart(dir, "lib")
	if bytes.Equal(first, third) {
		t.Fatal("a changed template did not change the archive")
	}
}

func TestSwitchesSchemaRefusesNonBooleans(t *testing.T) {
	if _, err := switchesSchema(parse(t, "# On.\na: true\nb: 1\n"), "t", nil); err == nil || !strings.Contains(err.Error(), "b is not a boolean") {
		t.Fatalf("got %v", err)
	}
	out, err := switchesSchema(parse(t, "# On.\na: true\n"), "t", nil)
	if err != nil || !strings.Contains(string(out), `"a": {`) || !strings.Contains(string(out), `"additionalProperties": false`) {
		t.Fatalf("got %s, %v", out, err)
	}
	// A value the chart's own schema describes is taken from there.
	out, err = switchesSchema(parse(t, "# On.\na: true\nids: {x: 1}\n"), "t", map[string]any{"ids": map[string]any{"type": "object", "description": "Who."}})
	if err != nil || !strings.Contains(string(out), `"description": "Who."`) {
		t.Fatalf("got %s, %v", out, err)
	}
}

func TestComposeSchemaAddsTheChartsOwnValues(t *testing.T) {
	lib := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(lib, "controller.values.schema.json"), `{"type": "object", "properties": {"workers": {"type": "integer"}}, "required": ["workers"]}`)
	own := filepath.Join(t.TempDir(), "own.json")
	b, err := composeSchema(lib, false, own)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "quota") {
		t.Fatalf("no own file, yet %s", b)
	}
	write(own, `{"properties": {"quota": {"type": "integer", "minimum": 0}}, "required": ["quota"]}`)
	if b, err = composeSchema(lib, false, own); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"quota": {`) || !strings.Contains(string(b), `"quota"`+"\n") {
		t.Fatalf("own value missing from %s", b)
	}
	write(own, `{"properties": {"workers": {"type": "string"}}}`)
	if _, err := composeSchema(lib, false, own); err == nil || !strings.Contains(err.Error(), "already a value") {
		t.Fatalf("redefining a shared value: %v", err)
	}
}
