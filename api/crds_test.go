package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCELRulesAreASCII guards against gofmt's doc-comment formatting, which
// turns a pair of single quotes (”) in a marker comment into a typographic
// quote and so breaks the CEL rule generated from it.
func TestCELRulesAreASCII(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			walk(v.Schema.OpenAPIV3Schema, func(r apiextensionsv1.ValidationRule) {
				if i := strings.IndexFunc(r.Rule, func(c rune) bool { return c > unicode.MaxASCII }); i >= 0 {
					t.Errorf("%s: rule %q has a non-ASCII character at %d", f, r.Rule, i)
				}
			})
		}
	}
}

func walk(s *apiextensionsv1.JSONSchemaProps, visit func(apiextensionsv1.ValidationRule)) {
	if s == nil {
		return
	}
	for _, r := range s.XValidations {
		visit(r)
	}
	for _, p := range s.Properties {
		walk(&p, visit)
	}
	if s.Items != nil {
		walk(s.Items.Schema, visit)
	}
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.Schema, visit)
	}
}
