package ownerref

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestNames(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}
	ref := func(apiVersion, kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid)}
	}
	tests := []struct {
		name   string
		ref    metav1.OwnerReference
		points bool
		names  bool
	}{
		{"the instance", ref("apps.cozystack.io/v1alpha1", "Postgres", "db", "u1"), true, true},
		{"another version of its group", ref("apps.cozystack.io/v1", "Postgres", "db", "u1"), true, true},
		{"another group", ref("evil.example.com/v1alpha1", "Postgres", "db", "u1"), false, false},
		{"its group in upper case", ref("Apps.Cozystack.io/v1alpha1", "Postgres", "db", "u1"), false, false},
		{"its group without a version", ref("apps.cozystack.io", "Postgres", "db", "u1"), false, false},
		{"unparsable apiVersion", ref("apps.cozystack.io/v1/x", "Postgres", "db", "u1"), false, false},
		{"another kind", ref("apps.cozystack.io/v1alpha1", "MySQL", "db", "u1"), false, false},
		{"another name", ref("apps.cozystack.io/v1alpha1", "Postgres", "db2", "u1"), false, false},
		{"another uid", ref("apps.cozystack.io/v1alpha1", "Postgres", "db", "u2"), true, false},
		{"no uid", ref("apps.cozystack.io/v1alpha1", "Postgres", "db", ""), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Points(tt.ref, gvk, "db"); got != tt.points {
				t.Errorf("Points = %v, want %v", got, tt.points)
			}
			uid := types.UID("u1")
			if tt.ref.UID == "" {
				uid = ""
			}
			if got := Names(tt.ref, gvk, "db", uid); got != tt.names {
				t.Errorf("Names = %v, want %v", got, tt.names)
			}
		})
	}
}
