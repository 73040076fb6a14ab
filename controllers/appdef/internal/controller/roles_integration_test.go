package controller

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
)

// TestRolesFollowTheDefinition: a served kind has its five aggregated
// roles (the built-in view, edit and admin; Cozystack's tenant view and
// admin), controlled by the definition; deleting the definition deletes them.
func TestRolesFollowTheDefinition(t *testing.T) {
	ctx := context.Background()
	def := newHelmDef("it-roles", "ItRoles", "itroles", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	create(t, def)
	cleanup(t, def.Name)
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	labels := map[string]string{
		RoleView:        "rbac.authorization.k8s.io/aggregate-to-view",
		RoleEdit:        "rbac.authorization.k8s.io/aggregate-to-edit",
		RoleAdmin:       "rbac.authorization.k8s.io/aggregate-to-admin",
		RoleTenantView:  "rbac.cozystack.io/aggregate-to-tenant-view",
		RoleTenantAdmin: "rbac.cozystack.io/aggregate-to-tenant-admin",
	}
	for level, label := range labels {
		role := &rbacv1.ClusterRole{}
		if err := k8s.Get(ctx, types.NamespacedName{Name: RoleName("itroles", level)}, role); err != nil {
			t.Fatalf("%s role: %v", level, err)
		}
		if ref := metav1.GetControllerOf(role); ref == nil || ref.UID != d.UID {
			t.Errorf("%s role not controlled by the definition: %v", level, role.OwnerReferences)
		}
		if role.Labels[label] != "true" {
			t.Errorf("%s role labels %v", level, role.Labels)
		}
	}

	if err := k8s.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "roles deleted", func() (bool, string) {
		for _, level := range []string{RoleView, RoleEdit, RoleAdmin, RoleTenantView, RoleTenantAdmin} {
			err := k8s.Get(ctx, types.NamespacedName{Name: RoleName("itroles", level)}, &rbacv1.ClusterRole{})
			if !apierrors.IsNotFound(err) {
				return false, level + ": " + errString(err)
			}
		}
		return true, ""
	})
}

// TestForeignRoleIsLeftAlone: a ClusterRole with a role's name that the
// definition does not control is neither changed nor deleted; the kind is
// served, the Ready message names the role, and the other levels are
// published.
func TestForeignRoleIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	name := RoleName("itforeignroles", RoleEdit)
	foreign := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{"itforeignroles"}, Verbs: []string{"get"}}},
	}
	create(t, foreign)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), foreign) })
	def := newHelmDef("it-foreign-roles", "ItForeignRoles", "itforeignroles", `{"type":"object"}`)
	create(t, def)
	cleanup(t, def.Name)
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	if msg := readyMessage(d); !strings.Contains(msg, name) || !strings.Contains(msg, "not controlled by this definition") {
		t.Errorf("Ready message does not name the foreign role: %s", msg)
	}
	live := &rbacv1.ClusterRole{}
	if err := k8s.Get(ctx, types.NamespacedName{Name: name}, live); err != nil {
		t.Fatal(err)
	}
	if len(live.OwnerReferences) != 0 || len(live.Rules) != 1 || strings.Join(live.Rules[0].Verbs, ",") != "get" || len(live.Labels) != 0 {
		t.Errorf("foreign role changed: %+v", live)
	}
	if err := k8s.Get(ctx, types.NamespacedName{Name: RoleName("itforeignroles", RoleView)}, &rbacv1.ClusterRole{}); err != nil {
		t.Errorf("view role not published: %v", err)
	}
}
