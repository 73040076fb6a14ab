package controller

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/lineage"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
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

// The walk from an object to its instance release, as upstream's webhook
// walks ownership: owners first, in order; helm-controller's label only on
// an object without owners.
func TestReleaseOfObject(t *testing.T) {
	yes := true
	ref := func(apiVersion, kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
	}
	obj := func(o client.Object, name, uid string, labels map[string]string, owners ...metav1.OwnerReference) client.Object {
		o.SetNamespace("tenant-a")
		o.SetName(name)
		o.SetUID(types.UID(uid))
		o.SetLabels(labels)
		o.SetOwnerReferences(owners)
		return o
	}
	rendered := map[string]string{LabelHelmReleaseName: "postgres-db"}
	other := map[string]string{LabelHelmReleaseName: "postgres-other"}
	c := fake.NewClientBuilder().WithObjects(
		obj(&appsv1.Deployment{}, "web", "d1", rendered),
		obj(&appsv1.ReplicaSet{}, "web-1", "rs1", nil, ref("apps/v1", "Deployment", "web", "d1")),
		obj(&appsv1.StatefulSet{}, "pg", "ss1", rendered),
		obj(&appsv1.StatefulSet{}, "loose", "ss2", nil),
		obj(&appsv1.StatefulSet{}, "theirs", "ss3", other),
		obj(&batchv1.Job{}, "a", "j1", nil, ref("batch/v1", "Job", "b", "j2")),
		obj(&batchv1.Job{}, "b", "j2", nil, ref("batch/v1", "Job", "c", "j3")),
		obj(&batchv1.Job{}, "c", "j3", nil, ref("batch/v1", "Job", "d", "j4")),
		obj(&batchv1.Job{}, "d", "j4", nil, ref("apps/v1", "StatefulSet", "pg", "ss1")),
	).Build()
	r := &Reconciler{Reader: c}
	db := &release{inst: lineage.Instance{Name: "db"}, uid: "hr1"}
	releases := map[string]*release{"postgres-db": db}
	for _, tc := range []struct {
		name string
		o    client.Object
		want *release
	}{
		{"rendered, no owners: helm-controller's label", obj(&corev1.Secret{}, "s", "x", rendered), db},
		{"no owners, no label", obj(&corev1.Secret{}, "s", "x", nil), nil},
		{"no owners, another release's label", obj(&corev1.Secret{}, "s", "x", other), nil},
		{"Pod of a ReplicaSet of a rendered Deployment", obj(&corev1.Pod{}, "p", "x", nil, ref("apps/v1", "ReplicaSet", "web-1", "rs1")), db},
		{"a StatefulSet's claim", obj(&corev1.PersistentVolumeClaim{}, "data-pg-0", "x", map[string]string{"app": "pg"}, ref("apps/v1", "StatefulSet", "pg", "ss1")), db},
		{"owned: its own helm label is not read, as upstream's walk does not", obj(&corev1.Service{}, "s", "x", rendered, ref("apps/v1", "StatefulSet", "loose", "ss2")), nil},
		{"first owner leads nowhere, the second to the release", obj(&corev1.Service{}, "s", "x", nil,
			ref("apps/v1", "StatefulSet", "loose", "ss2"), ref("apps/v1", "StatefulSet", "pg", "ss1")), db},
		{"first owner leads to another release: none of ours, the second wins", obj(&corev1.Service{}, "s", "x", nil,
			ref("apps/v1", "StatefulSet", "theirs", "ss3"), ref("apps/v1", "StatefulSet", "pg", "ss1")), db},
		{"an owner whose uid is not the reference's is skipped", obj(&corev1.Pod{}, "p", "x", nil, ref("apps/v1", "StatefulSet", "pg", "stale")), nil},
		{"an owner that cannot be read is skipped", obj(&corev1.Pod{}, "p", "x", nil, ref("apps/v1", "StatefulSet", "gone", "g")), nil},
		{"the instance's HelmRelease as owner", obj(&corev1.Secret{}, "s", "x", nil, ref("helm.toolkit.fluxcd.io/v2", "HelmRelease", "postgres-db", "hr1")), db},
		{"a HelmRelease owner of that name but another uid", obj(&corev1.Secret{}, "s", "x", nil, ref("helm.toolkit.fluxcd.io/v2", "HelmRelease", "postgres-db", "old")), nil},
		{"four owners deep", obj(&corev1.Pod{}, "p", "x", nil, ref("batch/v1", "Job", "b", "j2")), db},
		{"five owners deep: beyond the bound", obj(&corev1.Pod{}, "p", "x", nil, ref("batch/v1", "Job", "a", "j1")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Namespace: tc.o.GetNamespace(), Name: tc.o.GetName(), Labels: tc.o.GetLabels(), OwnerReferences: tc.o.GetOwnerReferences(),
			}}
			if got := r.releaseOfObject(context.Background(), o, releases); got != tc.want {
				t.Errorf("release %v, want %v", got, tc.want)
			}
		})
	}
}

// A label write counts in the one write counter; a second pass over the
// labelled object writes and counts nothing.
func TestLabelCountsItsWrite(t *testing.T) {
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "tenant-a",
		Labels: map[string]string{LabelHelmReleaseName: "postgres-db"}}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	r := &Reconciler{Name: "cozystack-lineage-test", Client: c}
	rel := &release{
		inst: lineage.Instance{Group: "apps.cozystack.io", Kind: "Postgres", Name: "db", Namespace: "tenant-a"},
		def:  &definition(t)["Postgres"].Object.Spec,
	}
	read := func() *metav1.PartialObjectMetadata {
		t.Helper()
		o := &metav1.PartialObjectMetadata{}
		o.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for i := 0; i < 2; i++ {
		if err := r.label(ctx, read(), rel); err != nil {
			t.Fatal(err)
		}
		if n := writemetric.Counted(r.Name, "Secret", writemetric.Labelled); n != 1 {
			t.Fatalf("pass %d: labelled = %v, want 1", i+1, n)
		}
	}
	if got := read().Labels["apps.cozystack.io/application.name"]; got != "db" {
		t.Fatalf("labels %v", read().Labels)
	}
}
