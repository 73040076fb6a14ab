package typegen

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/gen/internal/source"
)

// FuzzGenerate feeds random schemas through the schema → Go path: it must
// never panic, and whatever it accepts must render to Go that parses.
// `go test` runs the seeds; `go test -fuzz FuzzGenerate ./internal/typegen`
// explores.
func FuzzGenerate(f *testing.F) {
	seeds := []string{
		``,
		`{}`,
		`{"type": "object"}`,
		`{"type": "object", "additionalProperties": {"type": "string"}}`,
		`{"type": "object", "additionalProperties": true}`,
		`{"type": "object", "properties": {"a": {"type": "array", "items": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": ["integer", "null"]}}}}}}`,
		`{"type": "object", "properties": {"": {"type": "string"}}}`,
		`{"type": "object", "properties": {"a": {"type": "string", "enum": ["", "A", "a", "1", "a-b", "a_b", "ä"]}}}`,
		`{"type": "object", "properties": {"A": {"type": "string"}, "a": {"type": "string"}, "_a": {"type": "integer"}, "DeepCopy": {}}}`,
		`{"type": "object", "properties": {"x": {"type": "object", "properties": {"y": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}`,
		`{"type": "object", "properties": {"q": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true}}}`,
		`{"type": "object", "properties": {"r": {"$ref": "#/definitions/r"}}, "definitions": {"r": {"type": "object", "properties": {"s": {"type": "boolean"}}}}}`,
		`{"type": "object", "properties": {"d": {"description": "*/ // go:generate rm -rf /\n\u0000\u2028line", "type": "string"}}}`,
		`{"type": "object", "properties": {"o": {"oneOf": [{"type": "object"}, {"type": "object"}]}}}`,
		`{"type": "object", "properties": {"Kind": {"type": "object", "properties": {"Kind": {"type": "object", "properties": {"x": {"type": "string"}}}}}, "kind": {"type": "string", "enum": ["Kind"]}}}`,
	}
	for _, file := range []string{"testdata/features.yaml", "testdata/terraform.yaml", "../../../examples/helm/backend-form/postgres.yaml", "../../../examples/helm/backend-form/bucket.yaml"} {
		defs, err := source.ReadDefinitions(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, d := range defs {
			seeds = append(seeds, d.Def.Spec.Application.OpenAPISchema)
		}
	}
	for _, s := range seeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, schemaText string, terraform bool) {
		def := &cozyv1alpha1.ApplicationDefinition{}
		def.Name = "fuzz"
		def.Spec.Application = cozyv1alpha1.ApplicationDefinitionApplication{Kind: "Fuzz", Plural: "fuzzes", Singular: "fuzz", OpenAPISchema: schemaText}
		if terraform {
			def.Spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendTerraform, Terraform: &cozyv1alpha1.TerraformBackend{}}
		} else {
			def.Spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendHelm, Helm: &cozyv1alpha1.HelmBackend{}}
		}
		m, err := Build(def, nil)
		if err != nil {
			return // refused with an error: fine
		}
		files, err := Generate(m, "example.com/fuzz")
		if err != nil {
			t.Fatalf("accepted schema renders invalid Go: %v\n%s", err, schemaText)
		}
		for _, file := range files {
			if _, err := parser.ParseFile(token.NewFileSet(), file.Name, file.Content, parser.ParseComments); err != nil {
				t.Fatalf("%s does not parse: %v\nschema: %s\n%s", file.Name, err, schemaText, file.Content)
			}
		}
		if os.Getenv("FUZZ_KEEP") != "" {
			_ = WritePackage(filepath.Join(os.Getenv("FUZZ_KEEP"), m.Package), files)
		}
	})
}
