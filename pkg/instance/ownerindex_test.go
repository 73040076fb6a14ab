package instance

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func TestOwnerIndex(t *testing.T) {
	obj := func(ns, name, instNS, inst, rv string) *corev1.ConfigMap {
		l := map[string]string{appsv1alpha1.LabelApplicationKind: "Gizmo", appsv1alpha1.LabelApplicationName: inst}
		if instNS != "" {
			l[appsv1alpha1.LabelApplicationNamespace] = instNS
		}
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l, ResourceVersion: rv}}
	}
	x := newOwnerIndex()
	names := func(key string) []string {
		t.Helper()
		objs, err := x.objects(key)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.GetNamespace()+"/"+o.GetName()+"@"+o.GetResourceVersion())
		}
		return out
	}
	expect := func(key string, want ...string) {
		t.Helper()
		got := names(key)
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", key, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", key, got, want)
			}
		}
	}

	one := obj("p-tenant-a", "g-one", "tenant-a", "one", "1")
	x.set(nil, one)
	x.set(nil, obj("tenant-a", "legacy", "", "two", "1"))
	x.set(nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "unlabelled"}})
	expect("Gizmo/tenant-a/one", "p-tenant-a/g-one@1")
	expect("Gizmo/p-tenant-a/one") // the platform namespace is no key of it
	expect("Gizmo/tenant-a/two", "tenant-a/legacy@1")

	// An update replaces the object, so the index holds what the store holds.
	x.set(one, obj("p-tenant-a", "g-one", "tenant-a", "one", "2"))
	expect("Gizmo/tenant-a/one", "p-tenant-a/g-one@2")
	// A relist's add of an object already there does not add it twice.
	x.set(nil, obj("p-tenant-a", "g-one", "tenant-a", "one", "2"))
	expect("Gizmo/tenant-a/one", "p-tenant-a/g-one@2")
	// Labels naming another instance move it.
	x.set(obj("p-tenant-a", "g-one", "tenant-a", "one", "2"), obj("p-tenant-a", "g-one", "tenant-a", "three", "3"))
	expect("Gizmo/tenant-a/one")
	expect("Gizmo/tenant-a/three", "p-tenant-a/g-one@3")
	// Two objects of one instance.
	x.set(nil, obj("p-tenant-b", "g-three", "tenant-a", "three", "4"))
	expect("Gizmo/tenant-a/three", "p-tenant-a/g-one@3", "p-tenant-b/g-three@4")
	// Deletes.
	x.set(obj("p-tenant-a", "g-one", "tenant-a", "three", "3"), nil)
	x.set(obj("p-tenant-b", "g-three", "tenant-a", "three", "4"), nil)
	expect("Gizmo/tenant-a/three")
	if n := len(x.byOwner); n != 1 {
		t.Errorf("%d owner buckets left, want 1 (two's)", n)
	}

	t.Run("not read before the handler has seen the first list", func(t *testing.T) {
		y := newOwnerIndex()
		synced := false
		y.synced = func() bool { return synced }
		if _, err := y.objects("Gizmo/tenant-a/one"); !errors.Is(err, errIndexNotSynced) {
			t.Errorf("read before the first list: %v, want errIndexNotSynced", err)
		}
		synced = true
		if objs, err := y.objects("Gizmo/tenant-a/one"); err != nil || objs != nil {
			t.Errorf("read after it: %v %v", objs, err)
		}
	})
}
