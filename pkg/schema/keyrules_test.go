package schema

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

func TestBuildTopLevelKeys(t *testing.T) {
	tests := []struct {
		name   string
		def    *cozyv1alpha1.ApplicationDefinition
		reason string
		field  string
		names  []string
	}{{
		name:   "reserved key in a Helm kind",
		def:    helmDef("a", "A", "as", "", `{"type":"object","properties":{"_internal":{"type":"string"},"ok":{"type":"string"}}}`),
		reason: cozyv1alpha1.ReasonReservedField,
		field:  "openAPISchema.properties[_internal]",
		names:  []string{`"_internal"`},
	}, {
		name:   "reserved key in required",
		def:    helmDef("a", "A", "as", "", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"required":["_x"]}`),
		reason: cozyv1alpha1.ReasonReservedField,
		names:  []string{`"_x"`},
	}, {
		name:   "Terraform: keys that are not HCL identifiers, all named",
		def:    terraformDef("v", "V", "vs", "", `{"type":"object","properties":{"Bad-Key":{"type":"string"},"9lives":{"type":"string"},"good_key":{"type":"string"}}}`),
		reason: cozyv1alpha1.ReasonInvalidVariableName,
		field:  "openAPISchema.properties[9lives]",
		names:  []string{`"9lives"`, `"Bad-Key"`, HCLIdentifierPattern},
	}, {
		name:   "Terraform: reserved wins over HCL",
		def:    terraformDef("v", "V", "vs", "", `{"type":"object","properties":{"_x":{"type":"string"}}}`),
		reason: cozyv1alpha1.ReasonReservedField,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.def)
			if reasonOf(err) != tt.reason {
				t.Fatalf("reason %q, want %q: %v", reasonOf(err), tt.reason, err)
			}
			if tt.field != "" && err.(*Error).Field != tt.field {
				t.Errorf("field %q, want %q", err.(*Error).Field, tt.field)
			}
			for _, n := range tt.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("%q does not name %s", err, n)
				}
			}
		})
	}
	// Helm values keys need not be HCL identifiers.
	if _, err := Build(helmDef("a", "A", "as", "", `{"type":"object","properties":{"Bad-Key":{"type":"string"}}}`)); err != nil {
		t.Errorf("Helm kind refused: %v", err)
	}
}

func TestBuildFreeFormSpecs(t *testing.T) {
	t.Run("map with typed values gets CEL rules on spec", func(t *testing.T) {
		o, err := Build(terraformDef("v", "V", "vs", "", `{"type":"object","additionalProperties":{"type":"string"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Policy != nil {
			t.Errorf("policy not needed")
		}
		rules := o.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations
		if len(rules) != 2 || !strings.Contains(rules[1].Message, HCLIdentifierPattern) {
			t.Errorf("rules %+v", rules)
		}
	})
	t.Run("preserve-unknown spec gets an admission policy", func(t *testing.T) {
		o, err := Build(terraformDef("v", "V", "vs", "", `{"type":"object","additionalProperties":true,"properties":{"region":{"type":"string"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Policy == nil || o.Binding == nil {
			t.Fatal("no policy")
		}
		if o.Policy.Name != "vs.apps.cozystack.io" || o.Binding.Spec.PolicyName != o.Policy.Name {
			t.Errorf("names %s %s", o.Policy.Name, o.Binding.Spec.PolicyName)
		}
		if len(o.Policy.Spec.Validations) != 2 || o.Policy.Spec.MatchConstraints.ResourceRules[0].Resources[0] != "vs" {
			t.Errorf("policy %+v", o.Policy.Spec)
		}
		if o.Policy.Labels[LabelDefinition] != "v" {
			t.Errorf("labels %v", o.Policy.Labels)
		}
	})
	t.Run("Helm free-form spec checks only reserved keys", func(t *testing.T) {
		o, err := Build(helmDef("h", "H", "hs", "", `{"type":"object"}`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Policy == nil || len(o.Policy.Spec.Validations) != 1 {
			t.Fatalf("policy %+v", o.Policy)
		}
	})
	t.Run("map whose values CEL cannot see gets a policy", func(t *testing.T) {
		o, err := Build(helmDef("h", "H", "hs", "", `{"type":"object","additionalProperties":{"description":"anything"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Policy == nil {
			t.Fatal("no policy")
		}
	})
}

// celErrors evaluates the root CEL rules of crd against an instance.
func celErrors(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, obj, old map[string]any) field.ErrorList {
	t.Helper()
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	v := cel.NewValidator(ss, true, celconfig.PerCallLimit)
	var oldObj any
	if old != nil {
		oldObj = old
	}
	errs, _ := v.Validate(context.Background(), nil, ss, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return errs
}

func instance(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1",
		"kind":       "X",
		"metadata":   map[string]any{"name": name, "namespace": "tenant-a"},
		"spec":       spec,
	}
}
func TestMapKeyRules(t *testing.T) {
	crd, err := BuildCRD(terraformDef("v", "V", "vs", "", `{"type":"object","additionalProperties":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		spec    map[string]any
		wantErr string
	}{
		{spec: map[string]any{"region": "eu", "_x": "y"}, wantErr: `starting with "_" are reserved`},
		{spec: map[string]any{"Region": "eu"}, wantErr: HCLIdentifierPattern},
		{spec: map[string]any{"region": "eu", "zone_id": "1"}},
	} {
		errs := celErrors(t, crd, instance("a", tt.spec), nil)
		switch {
		case tt.wantErr == "" && len(errs) > 0:
			t.Errorf("%v: unexpected %v", tt.spec, errs)
		case tt.wantErr != "" && !strings.Contains(errs.ToAggregate().Error(), tt.wantErr):
			t.Errorf("%v: got %v, want %q", tt.spec, errs, tt.wantErr)
		}
	}
}
