package lineage

import (
	"maps"
	"testing"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	secret  = schema.GroupKind{Kind: "Secret"}
	service = schema.GroupKind{Kind: "Service"}
	ingress = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	pod     = schema.GroupKind{Kind: "Pod"}
	pvc     = schema.GroupKind{Kind: "PersistentVolumeClaim"}
)

func sel(names []string, ml map[string]string, exprs ...metav1.LabelSelectorRequirement) *cozyv1alpha1.ApplicationDefinitionResourceSelector {
	return &cozyv1alpha1.ApplicationDefinitionResourceSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: ml, MatchExpressions: exprs},
		ResourceNames: names,
	}
}

func TestTenantResource(t *testing.T) {
	inst := Instance{Group: "apps.cozystack.io", Kind: "Postgres", Name: "db", Namespace: "tenant-a"}
	// upstream's postgres definition: secrets.include by templated name.
	postgres := &cozyv1alpha1.ApplicationDefinitionSpec{
		Secrets: cozyv1alpha1.ApplicationDefinitionResources{Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{
			sel([]string{"postgres-{{ .name }}-credentials"}, nil),
		}},
		Services: cozyv1alpha1.ApplicationDefinitionResources{Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{
			sel([]string{"postgres-{{ .name }}-r", "postgres-{{ .name }}-ro", "postgres-{{ .name }}-rw", "postgres-{{ .name }}-external-write"}, nil),
		}},
	}
	cases := []struct {
		name string
		def  *cozyv1alpha1.ApplicationDefinitionSpec
		inst Instance
		obj  Object
		want bool
	}{
		{"templated name included", postgres, inst, Object{secret, "postgres-db-credentials", nil}, true},
		{"other secret of the release", postgres, inst, Object{secret, "postgres-db-superuser", nil}, false},
		{"another instance's name", postgres, inst, Object{secret, "postgres-other-credentials", nil}, false},
		{"service included", postgres, inst, Object{service, "postgres-db-rw", nil}, true},
		{"service not listed", postgres, inst, Object{service, "postgres-db", nil}, false},
		{"secrets selectors do not apply to services", postgres, inst, Object{service, "postgres-db-credentials", nil}, false},
		{"pods are never tenant resources", postgres, inst, Object{pod, "postgres-db-credentials", nil}, false},
		{"pvcs neither", postgres, inst, Object{pvc, "postgres-db-credentials", nil}, false},
		{"no definition", nil, inst, Object{secret, "postgres-db-credentials", nil}, false},
		{"empty selectors", &cozyv1alpha1.ApplicationDefinitionSpec{}, inst, Object{secret, "x", nil}, false},
		{"empty selector matches everything", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, nil)}}}, inst, Object{secret, "anything", nil}, true},
		{"empty resourceNames list matches nothing", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{}, nil)}}}, inst, Object{secret, "anything", nil}, false},
		{"label selector and name both required", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"{{ .name }}-s"}, map[string]string{"app": "x"})}}},
			inst, Object{secret, "db-s", map[string]string{"app": "y"}}, false},
		{"label selector matches", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, map[string]string{"app": "x"})}}},
			inst, Object{secret, "whatever", map[string]string{"app": "x"}}, true},
		{"exclude wins over include", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, nil)},
			Exclude: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"{{ .kind }}-{{ .name }}-internal"}, nil)}}},
			inst, Object{secret, "postgres-db-internal", nil}, false},
		{"exclude by expression", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, nil)},
			Exclude: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, nil, metav1.LabelSelectorRequirement{Key: "internal", Operator: metav1.LabelSelectorOpExists})}}},
			inst, Object{secret, "s", map[string]string{"internal": ""}}, false},
		{"kind is lower-cased, namespace templated", &cozyv1alpha1.ApplicationDefinitionSpec{Ingresses: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"{{ .kind }}-{{ .namespace }}-{{ .name }}"}, nil)}}},
			inst, Object{ingress, "postgres-tenant-a-db", nil}, true},
		{"unparsable template skipped, next one matches", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"{{ .name ", "{{ .name }}"}, nil)}}},
			inst, Object{secret, "db", nil}, true},
		{"unknown key renders <no value>", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"{{ .uid }}"}, nil)}}},
			inst, Object{secret, "<no value>", nil}, true},
		{"invalid label selector matches nothing", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel(nil, nil, metav1.LabelSelectorRequirement{Key: "a", Operator: "Bogus"})}}},
			inst, Object{secret, "s", nil}, false},
		{"nil selector entry ignored", &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
			Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{nil, sel([]string{"s"}, nil)}}},
			inst, Object{secret, "s", nil}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TenantResource(c.def, c.inst, c.obj); got != c.want {
				t.Fatalf("TenantResource = %v, want %v", got, c.want)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	inst := Instance{Group: "apps.cozystack.io", Kind: "Bucket", Name: "b1", Namespace: "tenant-a"}
	def := &cozyv1alpha1.ApplicationDefinitionSpec{Secrets: cozyv1alpha1.ApplicationDefinitionResources{
		Include: []*cozyv1alpha1.ApplicationDefinitionResourceSelector{sel([]string{"bucket-{{ .name }}"}, nil)}}}
	got := Labels(def, inst, Object{secret, "bucket-b1", nil})
	want := map[string]string{
		LabelManaged: "true", LabelGroup: "apps.cozystack.io", LabelKind: "Bucket", LabelName: "b1", LabelTenantResource: "true",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Labels = %v, want %v", got, want)
	}
	got = Labels(def, inst, Object{pod, "bucket-b1", nil})
	want[LabelTenantResource] = "false"
	if !maps.Equal(got, want) {
		t.Fatalf("Labels = %v, want %v", got, want)
	}
	if len(Keys) != len(want) {
		t.Fatalf("Keys has %d keys, Labels writes %d", len(Keys), len(want))
	}
}

func TestTruncateGroup(t *testing.T) {
	long := "a123456789b123456789c123456789d123456789e123456789f123456789g12" // 63
	cases := []struct{ in, want string }{
		{"apps.cozystack.io", "apps.cozystack.io"},
		{long[:62], long[:62]},
		{long, long},
		{long + "xyz", long},
		// upstream's loop drops one character more than the run of
		// non-alphanumerics at the cut.
		{long[:62] + ".suffix", long[:61]},
		{long[:61] + "-.rest", long[:60]},
	}
	for _, c := range cases {
		if got := truncateGroup(c.in); got != c.want {
			t.Errorf("truncateGroup(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
