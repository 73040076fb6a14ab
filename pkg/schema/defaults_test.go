package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// TestExpandDefaults covers the default patterns of definitions written for
// upstream Cozystack. For each, the CRD must build, the named default must be
// stored expanded, and an instance must be defaulted exactly as with the
// schema as written (which the API server applies the same way, but would
// not accept in a CRD).
func TestExpandDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// path of property names (and "[]" for items, "{}" for
		// additionalProperties) to the node whose default is checked.
		path []string
		want string
		// instances to default both ways; {} is always tried.
		instances []string
	}{{
		name: "empty object default completed by its required members' defaults",
		in: `{"type":"object","properties":{"backup":{"type":"object","default":{},"required":["enabled","schedule"],"properties":{
			"enabled":{"type":"boolean","default":false},
			"schedule":{"type":"string","default":"0 2 * * *"},
			"bucket":{"type":"string"}}}}}`,
		path:      []string{"backup"},
		want:      `{"enabled":false,"schedule":"0 2 * * *"}`,
		instances: []string{`{"backup":{}}`, `{"backup":{"bucket":"b"}}`, `{"backup":{"enabled":true}}`},
	}, {
		name: "empty object defaults nested in empty object defaults",
		in: `{"type":"object","properties":{"addons":{"type":"object","default":{},"required":["certManager","gatewayAPI"],"properties":{
			"certManager":{"type":"object","default":{},"required":["enabled","valuesOverride"],"properties":{
				"enabled":{"type":"boolean","default":false},
				"valuesOverride":{"type":"object","default":{},"x-kubernetes-preserve-unknown-fields":true}}},
			"gatewayAPI":{"type":"object","default":{},"required":["enabled"],"properties":{
				"enabled":{"type":"boolean","default":false}}}}}}}`,
		path:      []string{"addons"},
		want:      `{"certManager":{"enabled":false,"valuesOverride":{}},"gatewayAPI":{"enabled":false}}`,
		instances: []string{`{"addons":{"certManager":{"enabled":true}}}`, `{"addons":{"gatewayAPI":{}}}`},
	}, {
		name: "the inner default is expanded too",
		in: `{"type":"object","properties":{"addons":{"type":"object","default":{},"required":["certManager"],"properties":{
			"certManager":{"type":"object","default":{},"required":["enabled"],"properties":{
				"enabled":{"type":"boolean","default":false}}}}}}}`,
		path: []string{"addons", "certManager"},
		want: `{"enabled":false}`,
	}, {
		name: "an object default with no required members still carries its members' defaults",
		in: `{"type":"object","properties":{"alerta":{"type":"object","default":{},"properties":{
			"alerts":{"type":"object","default":{},"properties":{
				"slack":{"type":"object","default":{},"required":["url"],"properties":{
					"url":{"type":"string","default":""},
					"disabledSeverity":{"type":"array","default":[],"items":{"type":"string"}}}}}}}}}}`,
		path:      []string{"alerta"},
		want:      `{"alerts":{"slack":{"disabledSeverity":[],"url":""}}}`,
		instances: []string{`{"alerta":{"alerts":{}}}`},
	}, {
		name: "a quantity member",
		in: `{"type":"object","properties":{"jetstream":{"type":"object","default":{},"required":["enabled","size"],"properties":{
			"enabled":{"type":"boolean","default":true},
			"size":{"default":"10Gi","anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}}}`,
		path: []string{"jetstream"},
		want: `{"enabled":true,"size":"10Gi"}`,
	}, {
		name: "members the default writes win over their own defaults",
		in: `{"type":"object","properties":{"db":{"type":"object","default":{"replicas":3},"required":["replicas","preset"],"properties":{
			"replicas":{"type":"integer","default":2},
			"preset":{"type":"string","enum":["small","large"],"default":"small"}}}}}`,
		path: []string{"db"},
		want: `{"preset":"small","replicas":3}`,
	}, {
		name: "an object member without a default is not created",
		in: `{"type":"object","properties":{"haproxy":{"type":"object","default":{},"required":["replicas"],"properties":{
			"replicas":{"type":"integer","default":2},
			"resources":{"type":"object","properties":{"cpu":{"type":"string","default":"1"}}}}}}}`,
		path:      []string{"haproxy"},
		want:      `{"replicas":2}`,
		instances: []string{`{"haproxy":{"resources":{}}}`},
	}, {
		name: "each item of an array default gets the item defaults",
		in: `{"type":"object","properties":{"logsStorages":{"type":"array","default":[{"name":"generic"},{"name":"long","storage":"50Gi"}],"items":{
			"type":"object","required":["name","storage"],"properties":{
				"name":{"type":"string"},
				"storage":{"type":"string","default":"10Gi"}}}}}}`,
		path:      []string{"logsStorages"},
		want:      `[{"name":"generic","storage":"10Gi"},{"name":"long","storage":"50Gi"}]`,
		instances: []string{`{"logsStorages":[{"name":"x"}]}`},
	}, {
		name: "map entries the default writes get the value defaults",
		in: `{"type":"object","properties":{"nodeGroups":{"type":"object","default":{"md0":{}},"additionalProperties":{
			"type":"object","required":["instanceType"],"properties":{
				"instanceType":{"type":"string","default":"u1.medium"}}}}}}`,
		path:      []string{"nodeGroups"},
		want:      `{"md0":{"instanceType":"u1.medium"}}`,
		instances: []string{`{"nodeGroups":{}}`, `{"nodeGroups":{"big":{}}}`},
	}, {
		name: "an empty map default stays empty",
		in: `{"type":"object","properties":{"nodeGroups":{"type":"object","default":{},"additionalProperties":{
			"type":"object","required":["instanceType"],"properties":{
				"instanceType":{"type":"string","default":"u1.medium"}}}}}}`,
		path: []string{"nodeGroups"},
		want: `{}`,
	}, {
		name: "defaults inside array items of a defaulted object",
		in: `{"type":"object","properties":{"sharding":{"type":"object","default":{},"required":["shards"],"properties":{
			"shards":{"type":"array","default":[{"name":"rs0"}],"items":{"type":"object","required":["name","replicas"],"properties":{
				"name":{"type":"string"},
				"replicas":{"type":"integer","default":3}}}}}}}}`,
		path: []string{"sharding"},
		want: `{"shards":[{"name":"rs0","replicas":3}]}`,
	}, {
		name: "a default that needs nothing keeps its value",
		in:   `{"type":"object","properties":{"externalLabels":{"type":"object","default":{"cluster":"cozystack"},"additionalProperties":{"type":"string"}}}}`,
		path: []string{"externalLabels"},
		want: `{"cluster":"cozystack"}`,
	}, {
		name: "scalar defaults are untouched",
		in:   `{"type":"object","properties":{"ratio":{"type":"number","default":1.50}}}`,
		path: []string{"ratio"},
		want: `1.50`,
	}, {
		name: "numbers keep their exact value",
		in: `{"type":"object","properties":{"limits":{"type":"object","default":{"max":9007199254740993},"properties":{
			"max":{"type":"integer"},
			"min":{"type":"integer","default":-9007199254740993},
			"ratio":{"type":"number","default":0.25}}}}}`,
		path: []string{"limits"},
		want: `{"max":9007199254740993,"min":-9007199254740993,"ratio":0.25}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := ParseOpenAPISchema(tt.in)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			node := props
			for _, step := range tt.path {
				switch step {
				case "[]":
					node = node.Items.Schema
				case "{}":
					node = node.AdditionalProperties.Schema
				default:
					child, ok := node.Properties[step]
					if !ok {
						t.Fatalf("no property %q", step)
					}
					node = &child
				}
			}
			if node.Default == nil {
				t.Fatalf("no default at %v", tt.path)
			}
			if got := string(node.Default.Raw); got != tt.want {
				t.Errorf("default at %v:\n got %s\nwant %s", tt.path, got, tt.want)
			}
			if _, err := Build(helmDef("a", "A", "as", "", tt.in)); err != nil {
				t.Fatalf("Build: %v", err)
			}

			// What an instance stores must not change.
			written := writtenStructural(t, tt.in)
			served := toStructural(t, props)
			for _, inst := range append([]string{`{}`}, tt.instances...) {
				want := defaultInstance(t, inst, written)
				got := defaultInstance(t, inst, served)
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("instance %s: stored %s, with the schema as written %s", inst, g, w)
				}
			}
		})
	}
}

// TestExpandDefaultsRefusals: a default that cannot satisfy its schema, even
// with the nested defaults applied, is refused naming the field.
func TestExpandDefaultsRefusals(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		field    string
		contains []string
	}{{
		name: "a required member without a default",
		in: `{"type":"object","properties":{"backup":{"type":"object","default":{},"required":["enabled","bucket"],"properties":{
			"enabled":{"type":"boolean","default":false},
			"bucket":{"type":"string"}}}}}`,
		field:    "openAPISchema.properties[backup].default.bucket",
		contains: []string{"openAPISchema.properties[backup].default.bucket: Required value"},
	}, {
		name: "a required member without a default, two levels down",
		in: `{"type":"object","properties":{"backup":{"type":"object","default":{},"required":["s3"],"properties":{
			"s3":{"type":"object","default":{},"required":["bucket","region"],"properties":{
				"bucket":{"type":"string"},
				"region":{"type":"string","default":"us-east-1"}}}}}}}`,
		field: "openAPISchema.properties[backup].default.s3.bucket",
		contains: []string{
			"openAPISchema.properties[backup].default.s3.bucket: Required value",
			"openAPISchema.properties[backup].properties[s3].default.bucket: Required value",
		},
	}, {
		name: "a member of the wrong type written in the default",
		in: `{"type":"object","properties":{"db":{"type":"object","default":{"replicas":"two"},"properties":{
			"replicas":{"type":"integer","default":2}}}}}`,
		field:    "openAPISchema.properties[db].default.replicas",
		contains: []string{"Invalid value"},
	}, {
		name: "a member default outside its enum",
		in: `{"type":"object","properties":{"db":{"type":"object","default":{},"required":["preset"],"properties":{
			"preset":{"type":"string","enum":["small","large"],"default":"huge"}}}}}`,
		field: "openAPISchema.properties[db].default.preset",
		contains: []string{
			"openAPISchema.properties[db].default.preset: Unsupported value",
			"openAPISchema.properties[db].properties[preset].default: Unsupported value",
		},
	}, {
		name:     "an object default that is not an object",
		in:       `{"type":"object","properties":{"db":{"type":"object","default":"yes","properties":{"replicas":{"type":"integer","default":2}}}}}`,
		field:    "openAPISchema.properties[db].default",
		contains: []string{"Invalid value"},
	}, {
		name: "an item missing a required member without a default",
		in: `{"type":"object","properties":{"storages":{"type":"array","default":[{"storage":"1Gi"}],"items":{
			"type":"object","required":["name"],"properties":{
				"name":{"type":"string"},
				"storage":{"type":"string","default":"10Gi"}}}}}}`,
		field:    "openAPISchema.properties[storages].default[0].name",
		contains: []string{"Required value"},
	}, {
		name: "the expanded default breaks a rule on the object",
		in: `{"type":"object","properties":{"quorum":{"type":"object","default":{},"x-kubernetes-validations":[{"rule":"self.min <= self.max","message":"min must not exceed max"}],"properties":{
			"min":{"type":"integer","default":2},
			"max":{"type":"integer","default":1}}}}}`,
		field:    "openAPISchema.properties[quorum].default",
		contains: []string{"min must not exceed max"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(helmDef("a", "A", "as", "", tt.in))
			if reasonOf(err) != cozyv1alpha1.ReasonInvalidSchema {
				t.Fatalf("reason %q, want InvalidSchema: %v", reasonOf(err), err)
			}
			if f := err.(*Error).Field; f != tt.field {
				t.Errorf("field %q, want %q: %v", f, tt.field, err)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("%q does not contain %q", err, c)
				}
			}
		})
	}
}

// writtenStructural reads a schema as upstream Cozystack does for its own
// defaulting: the JSON as written, with no normalisation or expansion.
func writtenStructural(t *testing.T, in string) *structuralschema.Structural {
	t.Helper()
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(in), &v1); err != nil {
		t.Fatalf("schema as written: %v", err)
	}
	return toStructural(t, &v1)
}

func toStructural(t *testing.T, p *apiextensionsv1.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(p, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// defaultInstance applies the API server's defaulting to an instance spec.
func defaultInstance(t *testing.T, spec string, s *structuralschema.Structural) any {
	t.Helper()
	var v any
	if err := utiljson.Unmarshal([]byte(spec), &v); err != nil {
		t.Fatal(err)
	}
	structuraldefaulting.Default(v, s)
	return v
}

// TestUpstreamPatternFixtures builds the definitions of the
// appdef/upstream-patterns scenario (each reproduces a default pattern of
// upstream Cozystack's definitions) and checks that an empty spec is stored
// as with the schema as written.
func TestUpstreamPatternFixtures(t *testing.T) {
	dir := filepath.Join("..", "..", "tests", "chainsaw", "appdef", "upstream-patterns")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(data, &meta); err != nil || meta.Kind != "ApplicationDefinition" {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			def := &cozyv1alpha1.ApplicationDefinition{}
			if err := yaml.UnmarshalStrict(data, def); err != nil {
				t.Fatal(err)
			}
			crd, err := BuildCRD(def)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			got := defaultInstance(t, `{}`, toStructural(t, &spec))
			want := defaultInstance(t, `{}`, writtenStructural(t, def.Spec.Application.OpenAPISchema))
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("spec {} is stored as %s, with the schema as written %s", g, w)
			}
		})
	}
	if n < 3 {
		t.Fatalf("found %d definitions under %s, want the scenario's three", n, dir)
	}
}
