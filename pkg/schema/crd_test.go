package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

func helmDef(name, kind, plural, prefix, schema string) *cozyv1alpha1.ApplicationDefinition {
	return &cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{
				Kind: kind, Plural: plural, Singular: strings.ToLower(kind), OpenAPISchema: schema,
			},
			Backend: &cozyv1alpha1.ApplicationBackend{
				Type: cozyv1alpha1.BackendHelm,
				Helm: &cozyv1alpha1.HelmBackend{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
					ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "chart", Namespace: "cozy-system"},
					Prefix:   prefix,
				}},
			},
		},
	}
}

func legacyDef(name, kind, plural, prefix, schema string) *cozyv1alpha1.ApplicationDefinition {
	d := helmDef(name, kind, plural, prefix, schema)
	d.Spec.Release = &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: d.Spec.Backend.Helm.HelmReleaseTemplate}
	d.Spec.Backend = nil
	return d
}

func terraformDef(name, kind, plural, prefix, schema string) *cozyv1alpha1.ApplicationDefinition {
	d := helmDef(name, kind, plural, prefix, schema)
	d.Spec.Backend = &cozyv1alpha1.ApplicationBackend{
		Type: cozyv1alpha1.BackendTerraform,
		Terraform: &cozyv1alpha1.TerraformBackend{
			SourceRef: cozyv1alpha1.TerraformSourceReference{Kind: "OCIRepository", Name: "module", Namespace: "cozy-system"},
			Prefix:    prefix,
		},
	}
	return d
}

// postgresSchema looks like what upstream Cozystack's values schema
// generator writes: UI hints, quantities, enums, nested objects and maps.
const postgresSchema = `{
  "title": "Chart Values",
  "type": "object",
  "required": ["version"],
  "properties": {
    "version": {"description": "Major version.", "type": "string", "enum": ["v15", "v16", "v17"], "default": "v17"},
    "replicas": {"description": "Number of instances.", "type": "integer", "minimum": 1, "maximum": 9, "default": 2},
    "size": {"description": "Volume size.", "default": "10Gi", "anyOf": [{"type": "integer"}, {"type": "string"}],
      "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
      "x-kubernetes-int-or-string": true},
    "storageClass": {"description": "StorageClass.", "type": "string", "default": "", "x-cozystack-options": {"source": "storageclass"}},
    "resources": {"type": "object", "properties": {
      "cpu": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
      "memory": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true}}},
    "resourcesPreset": {"type": "string", "enum": ["nano", "micro", "small"], "default": "small"},
    "users": {"type": "object", "additionalProperties": {"type": "object", "properties": {
      "password": {"type": "string"}, "replication": {"type": "boolean", "default": false}}}},
    "values": {"type": "object", "additionalProperties": true},
    "backup": {"type": "object", "required": ["enabled"], "properties": {
      "enabled": {"type": "boolean", "default": false},
      "schedule": {"type": "string", "default": "0 2 * * *"}}}
  }
}`

func TestBuildCRD(t *testing.T) {
	crd, err := BuildCRD(legacyDef("postgres", "Postgres", "postgreses", "postgres-", postgresSchema))
	if err != nil {
		t.Fatal(err)
	}
	if crd.Name != "postgreses.apps.cozystack.io" || crd.Spec.Group != "apps.cozystack.io" {
		t.Errorf("name %q group %q", crd.Name, crd.Spec.Group)
	}
	if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
		t.Errorf("type meta %v", crd.TypeMeta)
	}
	wantNames := apiextensionsv1.CustomResourceDefinitionNames{
		Kind: "Postgres", ListKind: "PostgresList", Plural: "postgreses", Singular: "postgres",
		Categories: []string{"cozystack"},
	}
	if !reflect.DeepEqual(crd.Spec.Names, wantNames) {
		t.Errorf("names %+v", crd.Spec.Names)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("scope %s", crd.Spec.Scope)
	}
	if want := map[string]string{LabelDefinition: "postgres", LabelBackend: "Helm"}; !reflect.DeepEqual(crd.Labels, want) {
		t.Errorf("labels %v", crd.Labels)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions %v", crd.Spec.Versions)
	}
	v := crd.Spec.Versions[0]
	if v.Name != "v1alpha1" || !v.Served || !v.Storage {
		t.Errorf("version %s served %t storage %t", v.Name, v.Served, v.Storage)
	}
	if v.Subresources == nil || v.Subresources.Status == nil || v.Subresources.Scale != nil {
		t.Errorf("subresources %+v", v.Subresources)
	}
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if want := []string{"Ready", "Version", "Suspended", "Age"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
	root := v.Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	if spec.Properties["version"].Default == nil || string(spec.Properties["version"].Default.Raw) != `"v17"` {
		t.Errorf("default lost: %+v", spec.Properties["version"])
	}
	if spec.Properties["replicas"].Description != "Number of instances." {
		t.Errorf("description lost")
	}
	if _, ok := root.Properties["status"].Properties["conditions"]; !ok {
		t.Errorf("no status conditions")
	}
	// A closed spec needs no admission policy.
	o, err := Build(legacyDef("postgres", "Postgres", "postgreses", "postgres-", postgresSchema))
	if err != nil {
		t.Fatal(err)
	}
	if o.Policy != nil || o.Binding != nil {
		t.Errorf("unexpected policy for a closed spec")
	}
}

func TestBuildCRDTerraformColumns(t *testing.T) {
	crd, err := BuildCRD(terraformDef("vpc", "VPC", "vpcs", "vpc-", `{"type":"object","properties":{"cidr":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if c.Priority == 0 {
			cols = append(cols, c.Name+"="+c.JSONPath)
		}
	}
	want := []string{`Ready=.status.conditions[?(@.type=="Ready")].status`, "Version=.status.displayVersion", "Pending Plan=.status.backend.pendingPlan",
		`Suspended=.status.conditions[?(@.type=="Suspended")].status`, "Age=.metadata.creationTimestamp"}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %v", cols)
	}
	if crd.Labels[LabelBackend] != "Terraform" {
		t.Errorf("labels %v", crd.Labels)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	def := terraformDef("vpc", "VPC", "vpcs", "vpc-", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"b":{"type":"string"},"a":{"type":"object","properties":{"z":{"type":"string"},"y":{"type":"integer"}}}}}`)
	first, err := Build(def)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(first)
	for i := 0; i < 20; i++ {
		o, err := Build(def)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(o)
		if !bytes.Equal(a, b) {
			t.Fatalf("run %d differs:\n%s\n%s", i, a, b)
		}
	}
}

func TestNameRules(t *testing.T) {
	postgres, err := BuildCRD(helmDef("postgres", "Postgres", "postgreses", "postgres-", `{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	noPrefix, err := BuildCRD(helmDef("bare", "Bare", "bares", "", `{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	tenant, err := BuildCRD(legacyDef("tenant", "Tenant", "tenants", "tenant-", `{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	vpc, err := BuildCRD(terraformDef("vpc", "VPC", "vpcs", "vpc-", `{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	long := func(n int) string { return "a" + strings.Repeat("b", n-1) }
	tests := []struct {
		name     string
		crd      *apiextensionsv1.CustomResourceDefinition
		instance string
		update   bool
		wantErr  string
	}{
		{name: "short name", crd: postgres, instance: "db"},
		{name: "prefix + name = 53", crd: postgres, instance: long(53 - len("postgres-"))},
		{name: "prefix + name = 54", crd: postgres, instance: long(54 - len("postgres-")), wantErr: `metadata.name must be at most 44 characters: the HelmRelease is named "postgres-" + metadata.name`},
		{name: "prefix + name = 54 on update is allowed (names are immutable)", crd: postgres, instance: long(54 - len("postgres-")), update: true},
		{name: "no prefix: 53", crd: noPrefix, instance: long(53)},
		{name: "no prefix: 54", crd: noPrefix, instance: long(54), wantErr: "at most 53 characters"},
		{name: "not DNS-1035: dot", crd: noPrefix, instance: "a.b", wantErr: "DNS-1035"},
		{name: "not DNS-1035: leading digit", crd: noPrefix, instance: "1ab", wantErr: "DNS-1035"},
		{name: "not DNS-1035: trailing dash", crd: vpc, instance: "ab-", wantErr: "DNS-1035"},
		{name: "Terraform kinds have no Helm limit", crd: vpc, instance: long(63)},
		{name: "Terraform: 64 is too long", crd: vpc, instance: long(64), wantErr: "DNS-1035"},
		{name: "Tenant", crd: tenant, instance: "acme"},
		{name: "Tenant with a dash", crd: tenant, instance: "ac-me", wantErr: "Tenant names must match ^[a-z][a-z0-9]*$"},
		{name: "dash allowed elsewhere", crd: postgres, instance: "ac-me"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := instance(tt.instance, map[string]any{})
			var old map[string]any
			if tt.update {
				old = instance(tt.instance, map[string]any{"a": "old"})
			}
			errs := celErrors(t, tt.crd, obj, old)
			if tt.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected: %v", errs)
				}
				return
			}
			if !strings.Contains(errs.ToAggregate().Error(), tt.wantErr) {
				t.Fatalf("got %v, want %q", errs, tt.wantErr)
			}
			for _, e := range errs {
				if e.Field != "metadata.name" {
					t.Errorf("error on %q, want metadata.name", e.Field)
				}
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name     string
		def      *cozyv1alpha1.ApplicationDefinition
		reason   string
		field    string
		contains string
	}{{
		name:   "invalid JSON",
		def:    helmDef("a", "A", "as", "", `{"type":`),
		reason: cozyv1alpha1.ReasonInvalidJSON,
	}, {
		name:     "default of the wrong type",
		def:      helmDef("a", "A", "as", "", `{"type":"object","properties":{"replicas":{"type":"integer","default":"two"}}}`),
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[replicas].default",
		contains: "the API server would refuse the CRD",
	}, {
		name:   "default not in the enum",
		def:    helmDef("a", "A", "as", "", `{"type":"object","properties":{"preset":{"type":"string","enum":["a","b"],"default":"c"}}}`),
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "openAPISchema.properties[preset].default",
	}, {
		name:     "a CEL rule that does not compile",
		def:      helmDef("a", "A", "as", "", `{"type":"object","properties":{"n":{"type":"integer","x-kubernetes-validations":[{"rule":"self >"}]}}}`),
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		field:    "openAPISchema.properties[n].x-kubernetes-validations[0].rule",
		contains: "compilation failed",
	}, {
		name:   "a bad list type",
		def:    helmDef("a", "A", "as", "", `{"type":"object","properties":{"l":{"type":"array","x-kubernetes-list-type":"map","items":{"type":"string"}}}}`),
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "openAPISchema.properties[l].items.type",
	}, {
		name:     "a bad plural",
		def:      helmDef("a", "A", "Bad_Plural", "", `{"type":"object"}`),
		reason:   cozyv1alpha1.ReasonInvalidSchema,
		contains: "spec.names.plural",
	}, {
		name: "no backend",
		def: func() *cozyv1alpha1.ApplicationDefinition {
			d := helmDef("a", "A", "as", "", `{}`)
			d.Spec.Backend = nil
			return d
		}(),
		reason: cozyv1alpha1.ReasonInvalidSchema,
		field:  "spec.backend",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.def)
			if reasonOf(err) != tt.reason {
				t.Fatalf("reason %q, want %q: %v", reasonOf(err), tt.reason, err)
			}
			if tt.field != "" && err.(*Error).Field != tt.field {
				t.Errorf("field %q, want %q: %v", err.(*Error).Field, tt.field, err)
			}
			if tt.contains != "" && !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("%q does not contain %q", err, tt.contains)
			}
		})
	}
}

// TestStatusSchemaMatchesGoType keeps the status schema in step with
// appsv1alpha1.ApplicationStatus.
func TestStatusSchemaMatchesGoType(t *testing.T) {
	s := statusSchema()
	check := func(name string, typ reflect.Type, props map[string]apiextensionsv1.JSONSchemaProps) {
		var goFields, schemaFields []string
		for i := 0; i < typ.NumField(); i++ {
			tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			goFields = append(goFields, tag)
		}
		for k := range props {
			schemaFields = append(schemaFields, k)
		}
		sort.Strings(goFields)
		sort.Strings(schemaFields)
		if !reflect.DeepEqual(goFields, schemaFields) {
			t.Errorf("%s: Go fields %v, schema %v", name, goFields, schemaFields)
		}
	}
	check("status", reflect.TypeOf(appsv1alpha1.ApplicationStatus{}), s.Properties)
	check("status.backend", reflect.TypeOf(appsv1alpha1.BackendStatus{}), s.Properties["backend"].Properties)
}

// TestBuildExamples builds the CRD of every ApplicationDefinition under
// examples/.
func TestBuildExamples(t *testing.T) {
	root := filepath.Join("..", "..", "examples")
	var n int
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Errorf("%s[%d]: %v", path, i, err)
				continue
			}
			if meta.Kind != "ApplicationDefinition" {
				continue
			}
			def := &cozyv1alpha1.ApplicationDefinition{}
			if err := yaml.UnmarshalStrict(doc, def); err != nil {
				t.Errorf("%s[%d]: %v", path, i, err)
				continue
			}
			n++
			crd, err := BuildCRD(def)
			if err != nil {
				t.Errorf("%s (%s): %v", path, def.Name, err)
				continue
			}
			if crd.Spec.Names.Kind != def.Spec.Application.Kind {
				t.Errorf("%s: kind %s", path, crd.Spec.Names.Kind)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no ApplicationDefinition found under %s", root)
	}
}
