package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// normalised returns the parsed schema as generic JSON, for comparison.
func normalised(t *testing.T, in string) (any, error) {
	t.Helper()
	props, err := ParseOpenAPISchema(in)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(props)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out, nil
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return out
}

func TestParseOpenAPISchema(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{{
		name: "additionalProperties true becomes preserve-unknown-fields",
		in:   `{"type":"object","properties":{"tags":{"type":"object","additionalProperties":true}}}`,
		want: `{"type":"object","properties":{"tags":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`,
	}, {
		name: "additionalProperties false is dropped: objects are closed",
		in:   `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`,
		want: `{"type":"object","properties":{"a":{"type":"string"}}}`,
	}, {
		name: "additionalProperties schema is a map",
		in:   `{"type":"object","properties":{"users":{"type":"object","additionalProperties":{"type":"object","properties":{"admin":{"type":"boolean","default":false}}}}}}`,
		want: `{"type":"object","properties":{"users":{"type":"object","additionalProperties":{"type":"object","properties":{"admin":{"type":"boolean","default":false}}}}}}`,
	}, {
		name: "properties and an additionalProperties schema: properties kept, other keys preserved",
		in:   `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		want: `{"type":"object","properties":{"a":{"type":"string"}},"x-kubernetes-preserve-unknown-fields":true}`,
	}, {
		name: "anyOf integer string gets int-or-string",
		in:   `{"type":"object","properties":{"size":{"anyOf":[{"type":"integer"},{"type":"string"}],"default":"10Gi"}}}`,
		want: `{"type":"object","properties":{"size":{"anyOf":[{"type":"integer"},{"type":"string"}],"default":"10Gi","x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "anyOf string integer is put in canonical order",
		in:   `{"type":"object","properties":{"cpu":{"anyOf":[{"type":"string"},{"type":"integer"}],"x-kubernetes-int-or-string":true}}}`,
		want: `{"type":"object","properties":{"cpu":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "oneOf integer string with a stray type",
		in:   `{"type":"object","properties":{"cpu":{"type":"string","oneOf":[{"type":"integer","description":"cores"},{"type":"string"}]}}}`,
		want: `{"type":"object","properties":{"cpu":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "type list integer string",
		in:   `{"type":"object","properties":{"n":{"type":["string","integer"]}}}`,
		want: `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "int-or-string alone gets its anyOf and loses its type",
		in:   `{"type":"object","properties":{"n":{"type":"string","x-kubernetes-int-or-string":true}}}`,
		want: `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "quantity with a pattern, as upstream writes it, is kept",
		in:   `{"type":"object","properties":{"size":{"default":"1Gi","anyOf":[{"type":"integer"},{"type":"string"}],"pattern":"^[0-9]+(Gi|Mi)?$","x-kubernetes-int-or-string":true}}}`,
		want: `{"type":"object","properties":{"size":{"default":"1Gi","anyOf":[{"type":"integer"},{"type":"string"}],"pattern":"^[0-9]+(Gi|Mi)?$","x-kubernetes-int-or-string":true}}}`,
	}, {
		name: "x-cozystack-options and other x- extensions are dropped, kubernetes ones kept",
		in:   `{"type":"object","x-ui":{"order":1},"properties":{"preset":{"type":"string","enum":["small","large"],"default":"small","x-cozystack-options":{"source":"presets"}},"list":{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}},"n":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0","message":"positive"}]}}}`,
		want: `{"type":"object","properties":{"preset":{"type":"string","enum":["small","large"],"default":"small"},"list":{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}},"n":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0","message":"positive"}]}}}`,
	}, {
		name: "anyOf with null is nullable",
		in:   `{"type":"object","properties":{"s":{"description":"d","anyOf":[{"type":"string","maxLength":3},{"type":"null"}]}}}`,
		want: `{"type":"object","properties":{"s":{"description":"d","type":"string","maxLength":3,"nullable":true}}}`,
	}, {
		name: "type list with null is nullable",
		in:   `{"type":"object","properties":{"s":{"type":["null","string"]}}}`,
		want: `{"type":"object","properties":{"s":{"type":"string","nullable":true}}}`,
	}, {
		name: "const becomes a one-value enum",
		in:   `{"type":"object","properties":{"v":{"type":"string","const":"x"}}}`,
		want: `{"type":"object","properties":{"v":{"type":"string","enum":["x"]}}}`,
	}, {
		name: "uniqueItems on scalars becomes a set, on objects it is dropped",
		in:   `{"type":"object","properties":{"a":{"type":"array","uniqueItems":true,"items":{"type":"string"}},"b":{"type":"array","uniqueItems":true,"items":{"type":"object","properties":{"x":{"type":"string"}}}}}}`,
		want: `{"type":"object","properties":{"a":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},"b":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}}}}}}`,
	}, {
		name: "local $ref are inlined, definitions dropped, siblings win",
		in:   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"res":{"type":"object","description":"base","properties":{"cpu":{"type":"string"}}}},"$defs":{"name":{"type":"string","minLength":1}},"properties":{"limits":{"$ref":"#/definitions/res","description":"Limits."},"owner":{"$ref":"#/$defs/name"}}}`,
		want: `{"type":"object","properties":{"limits":{"type":"object","description":"Limits.","properties":{"cpu":{"type":"string"}}},"owner":{"type":"string","minLength":1}}}`,
	}, {
		name: "type object without properties is free-form",
		in:   `{"type":"object","properties":{"extra":{"type":"object","description":"anything"}}}`,
		want: `{"type":"object","properties":{"extra":{"type":"object","description":"anything","x-kubernetes-preserve-unknown-fields":true}}}`,
	}, {
		name: "a property without a type accepts any value",
		in:   `{"type":"object","properties":{"any":{"description":"any value"},"yes":true}}`,
		want: `{"type":"object","properties":{"any":{"description":"any value","x-kubernetes-preserve-unknown-fields":true},"yes":{"x-kubernetes-preserve-unknown-fields":true}}}`,
	}, {
		name: "types are inferred from properties and items",
		in:   `{"properties":{"o":{"properties":{"a":{"type":"string"}}},"l":{"items":{"type":"string"}},"l2":{"type":"array"}}}`,
		want: `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}}},"l":{"type":"array","items":{"type":"string"}},"l2":{"type":"array","items":{"x-kubernetes-preserve-unknown-fields":true}}}}`,
	}, {
		name: "empty schema text is a free-form spec",
		in:   "  \n",
		want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`,
	}, {
		name: "upstream's plain object schema is a free-form spec",
		in:   `{"type":"object"}`,
		want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`,
	}, {
		name: "descriptions, titles, defaults, examples and formats are kept; annotations dropped",
		in:   `{"title":"Chart Values","type":"object","properties":{"replicas":{"description":"Number of replicas","title":"Replicas","type":"integer","format":"int32","default":2,"minimum":1,"example":3,"examples":[3],"readOnly":false,"$comment":"c","frobnicate":true}}}`,
		want: `{"title":"Chart Values","type":"object","properties":{"replicas":{"description":"Number of replicas","title":"Replicas","type":"integer","format":"int32","default":2,"minimum":1,"example":3}}}`,
	}, {
		name: "large integers keep their value",
		in:   `{"type":"object","properties":{"n":{"type":"integer","default":9007199254740993}}}`,
		want: `{"type":"object","properties":{"n":{"type":"integer","default":9007199254740993}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalised(t, tt.in)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := mustJSON(t, tt.want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

func TestParseOpenAPISchemaErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		reason   string
		field    string
		contains []string
	}{{
		name:     "syntax error names offset, line and column",
		in:       "{\n  \"type\": \"object\",\n  \"properties\": {,}\n}",
		reason:   cozyv1alpha1.ReasonInvalidJSON,
		field:    "openAPISchema",
		contains: []string{"not valid JSON", "offset 39", "line 3, column 18"},
	}, {
		name:     "truncated",
		in:       `{"type":"object"`,
		reason:   cozyv1alpha1.ReasonInvalidJSON,
		contains: []string{"unexpected end of JSON input", "offset 16"},
	}, {
		name:     "trailing data",
		in:       `{"type":"object"} {}`,
		reason:   cozyv1alpha1.ReasonInvalidJSON,
		contains: []string{"unexpected data after the top-level value"},
	}, {
		name:     "not an object",
		in:       `["type"]`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		contains: []string{"must be a JSON object", "got an array"},
	}, {
		name:     "root is not an object schema",
		in:       `{"type":"string"}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.type",
		contains: []string{"must be object"},
	}, {
		name:     "refused keyword names the field",
		in:       `{"type":"object","properties":{"labels":{"type":"object","patternProperties":{"^a":{"type":"string"}}}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[labels].patternProperties",
		contains: []string{"patternProperties is not supported"},
	}, {
		name:   "if then else",
		in:     `{"type":"object","if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]}}`,
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "openAPISchema.if",
	}, {
		name:     "tuple items",
		in:       `{"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[pair].items",
		contains: []string{"tuple"},
	}, {
		name:     "recursive reference",
		in:       `{"type":"object","definitions":{"node":{"type":"object","properties":{"child":{"$ref":"#/definitions/node"}}}},"properties":{"tree":{"$ref":"#/definitions/node"}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[tree].properties[child].$ref",
		contains: []string{"refers to itself"},
	}, {
		name:     "remote reference",
		in:       `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[a].$ref",
		contains: []string{"only local references"},
	}, {
		name:     "dangling reference",
		in:       `{"type":"object","properties":{"a":{"$ref":"#/definitions/nope"}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		contains: []string{"does not exist"},
	}, {
		name:     "a keyword of the wrong JSON type",
		in:       `{"type":"object","properties":{"replicas":{"type":"integer","minimum":"1"}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[replicas].minimum",
		contains: []string{"must be a number"},
	}, {
		name:     "several types",
		in:       `{"type":"object","properties":{"v":{"type":["string","boolean"]}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[v].type",
		contains: []string{"several types"},
	}, {
		name:   "null type",
		in:     `{"type":"object","properties":{"v":{"type":"null"}}}`,
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "openAPISchema.properties[v].type",
	}, {
		name:     "not structural: types inside anyOf",
		in:       `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"boolean"}]}}}`,
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[v].anyOf[0].type",
		contains: []string{"not a structural schema", "Forbidden"},
	}, {
		name:   "a false schema",
		in:     `{"type":"object","properties":{"never":false}}`,
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "openAPISchema.properties[never]",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOpenAPISchema(tt.in)
			if err == nil {
				t.Fatal("expected an error")
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if e.Reason != tt.reason {
				t.Errorf("reason %q, want %q (%v)", e.Reason, tt.reason, err)
			}
			if tt.field != "" && e.Field != tt.field {
				t.Errorf("field %q, want %q (%v)", e.Field, tt.field, err)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
			if reasonOf(err) != tt.reason {
				t.Errorf("ReasonOf = %q", reasonOf(err))
			}
		})
	}
}

func TestParseDoesNotModifySharedDefinitions(t *testing.T) {
	// One definition used twice, once nullable: the second use must not see
	// the first one's changes.
	in := `{"type":"object","definitions":{"s":{"type":"string"}},"properties":{"a":{"anyOf":[{"$ref":"#/definitions/s"},{"type":"null"}]},"b":{"$ref":"#/definitions/s"}}}`
	got, err := normalised(t, in)
	if err != nil {
		t.Fatal(err)
	}
	want := mustJSON(t, `{"type":"object","properties":{"a":{"type":"string","nullable":true},"b":{"type":"string"}}}`)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("got %s", g)
	}
}

func TestParseLimitsExponentialReferences(t *testing.T) {
	// Each level refers to the previous one twice: 2^30 nodes once inlined.
	var b strings.Builder
	b.WriteString(`{"type":"object","definitions":{"d0":{"type":"string"}`)
	for i := 1; i <= 30; i++ {
		b.WriteString(`,"d` + itoa(i) + `":{"type":"object","properties":{"a":{"$ref":"#/definitions/d` + itoa(i-1) + `"},"b":{"$ref":"#/definitions/d` + itoa(i-1) + `"}}}`)
	}
	b.WriteString(`},"properties":{"x":{"$ref":"#/definitions/d30"}}}`)
	_, err := ParseOpenAPISchema(b.String())
	if err == nil || !strings.Contains(err.Error(), "nodes") {
		t.Fatalf("want a size error, got %v", err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
