package ownership

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCheck(t *testing.T) {
	owner := Owner{GVK: schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Postgres"}, Name: "db", UID: "u-1"}
	ours := ControllerRef(owner)
	theirs := ControllerRef(Owner{GVK: owner.GVK, Name: "other", UID: "u-2"})
	notController := ours
	notController.Controller = nil

	tests := []struct {
		name     string
		existing metav1.Object
		wantErr  string
	}{
		{"absent", nil, ""},
		{"absent as a typed nil", (*metav1.ObjectMeta)(nil), ""},
		{"ours", &metav1.ObjectMeta{Name: "db", Namespace: "t", OwnerReferences: []metav1.OwnerReference{ours}}, ""},
		{"no owner", &metav1.ObjectMeta{Name: "db", Namespace: "t"}, "HelmRelease t/db already exists and has no controller owner"},
		{"another controller", &metav1.ObjectMeta{Name: "db", Namespace: "t", OwnerReferences: []metav1.OwnerReference{theirs}}, "is controlled by Postgres other"},
		{"owner reference without controller flag", &metav1.ObjectMeta{Name: "db", Namespace: "t", OwnerReferences: []metav1.OwnerReference{notController}}, "has no controller owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("HelmRelease", tt.existing, owner)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
			}
			if !IsNotOwned(fmt.Errorf("wrapped: %w", err)) {
				t.Fatal("IsNotOwned does not see through wrapping")
			}
		})
	}
}
