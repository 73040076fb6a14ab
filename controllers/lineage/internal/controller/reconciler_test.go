package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance"
)

func definition(t *testing.T) map[string]*instance.Definition {
	t.Helper()
	d, err := instance.Resolve(&cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres"},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: "Postgres", Plural: "postgreses", Singular: "postgres"},
			Release:     &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{Prefix: "postgres-"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*instance.Definition{"Postgres": d}
}

func hr(name string, labels map[string]string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "tenant-a", Labels: labels, OwnerReferences: owners,
	}}
}

func TestInstanceRelease(t *testing.T) {
	defs := definition(t)
	app := map[string]string{
		"apps.cozystack.io/application.group": "apps.cozystack.io",
		"apps.cozystack.io/application.kind":  "Postgres",
		"apps.cozystack.io/application.name":  "db",
	}
	yes := true
	ref := func(apiVersion, kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: &yes}
	}
	cases := []struct {
		name string
		hr   *metav1.PartialObjectMetadata
		want bool
	}{
		{"ours, controller reference to the instance", hr("postgres-db", app, ref("apps.cozystack.io/v1alpha1", "Postgres", "db")), true},
		{"upstream's, no owner references", hr("postgres-db", app), true},
		{"name is not prefix plus instance", hr("db", app), false},
		{"controller reference names another instance", hr("postgres-db", app, ref("apps.cozystack.io/v1alpha1", "Postgres", "other")), false},
		{"controller reference of another group", hr("postgres-db", app, ref("evil.example.com/v1", "Postgres", "db")), false},
		{"no definition for the kind", hr("postgres-db", map[string]string{
			"apps.cozystack.io/application.group": "apps.cozystack.io",
			"apps.cozystack.io/application.kind":  "Redis",
			"apps.cozystack.io/application.name":  "db",
		}), false},
		{"no application labels", hr("postgres-db", nil), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rel := instanceRelease(c.hr, defs)
			if (rel != nil) != c.want {
				t.Fatalf("instanceRelease = %v, want a release: %v", rel, c.want)
			}
			if rel != nil && (rel.inst.Kind != "Postgres" || rel.inst.Name != "db" || rel.inst.Namespace != "tenant-a" || rel.inst.Group != "apps.cozystack.io") {
				t.Fatalf("instance = %+v", rel.inst)
			}
		})
	}
}

func TestReleaseOf(t *testing.T) {
	obj := func(labels map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "tenant-a", Labels: labels}}
	}
	if got := releaseOf(obj(map[string]string{LabelHelmReleaseName: "postgres-db", LabelHelmReleaseNamespace: "tenant-a"})); got != "postgres-db" {
		t.Fatalf("releaseOf = %q", got)
	}
	if got := releaseOf(obj(map[string]string{LabelHelmReleaseName: "postgres-db"})); got != "postgres-db" {
		t.Fatalf("releaseOf without the namespace label = %q", got)
	}
	if got := releaseOf(obj(map[string]string{LabelHelmReleaseName: "postgres-db", LabelHelmReleaseNamespace: "tenant-b"})); got != "" {
		t.Fatalf("a release of another namespace: releaseOf = %q, want none", got)
	}
	if got := releaseOf(obj(nil)); got != "" {
		t.Fatalf("releaseOf = %q, want none", got)
	}
}
