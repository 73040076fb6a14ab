package controller

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// Aggregated ClusterRoles.
//
// For every kind it serves, the controller publishes ClusterRoles for two
// role families, labelled for aggregation:
//
//   - cozystack:app:<plural>:view, :edit and :admin, into Kubernetes'
//     built-in view, edit and admin roles (kube-controller-manager's
//     clusterrole-aggregation controller copies their rules). A user bound
//     to edit in a namespace can then create instances of a new kind there
//     without anyone writing RBAC for it.
//   - cozystack:app:<plural>:tenant-view and :tenant-admin, into Cozystack's
//     tenant roles cozy:tenant:view and cozy:tenant:admin (cozystack-basics'
//     clusterroles.yaml aggregates the labels rbac.cozystack.io/aggregate-to-
//     tenant-<level>), at the levels upstream grants its own kinds: view
//     (and so use, which aggregates view) reads instances, admin (and so
//     super-admin, which aggregates admin) also creates, updates, patches and
//     deletes them, as cozy:tenant:admin:base does for every kind upstream
//     ships. Upstream's use level writes no instance, so it neither creates
//     nor approves one (a plan is approved by annotating the instance, which
//     is an update).
//
// The roles are controlled by the definition (garbage-collected with it,
// deleted with its CRD), and a ClusterRole of that name the definition does
// not control is never touched.
//
// To create a role granting verbs, the controller must hold them itself
// (RBAC's escalation check): its ClusterRole grants those verbs on
// apps.cozystack.io, and the appdef identity policy
// (policies/appdef-identity.yaml) refuses any ClusterRole write of its
// identity outside the name prefix cozystack:app:, with rules outside
// apps.cozystack.io, or with aggregation labels other than these five.

// RolePrefix starts the name of every ClusterRole the controller writes.
const RolePrefix = "cozystack:app:"

// Aggregation levels, each the suffix of a role's name. The first three are
// aggregated into Kubernetes' built-in role of that name, the tenant ones
// into Cozystack's cozy:tenant:<view|admin>.
const (
	RoleView        = "view"
	RoleEdit        = "edit"
	RoleAdmin       = "admin"
	RoleTenantView  = "tenant-view"
	RoleTenantAdmin = "tenant-admin"
)

// tenantLevelPrefix starts the levels aggregated into Cozystack's tenant
// roles.
const tenantLevelPrefix = "tenant-"

// aggregateLabel is the label the role of a level is aggregated by:
// rbac.authorization.k8s.io/aggregate-to-<level> for the built-in roles,
// rbac.cozystack.io/aggregate-to-tenant-<level> for Cozystack's.
func aggregateLabel(level string) string {
	if strings.HasPrefix(level, tenantLevelPrefix) {
		return "rbac.cozystack.io/aggregate-to-" + level
	}
	return "rbac.authorization.k8s.io/aggregate-to-" + level
}

// aggregatedInto names the role that aggregates a level, for events.
func aggregatedInto(level string) string {
	if rest, ok := strings.CutPrefix(level, tenantLevelPrefix); ok {
		return "Cozystack's cozy:tenant:" + rest + " role"
	}
	return "the built-in " + level + " role"
}

// RoleName names the ClusterRole of a kind's plural at a level.
func RoleName(plural, level string) string { return RolePrefix + plural + ":" + level }

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	// tenantAdminVerbs: what cozy:tenant:admin grants on upstream's kinds
	// (create, update, patch, delete; get, list and watch come with view),
	// without deletecollection.
	tenantAdminVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// buildRoles returns the ClusterRoles that let the built-in roles and
// Cozystack's tenant roles use def's kind. view and tenant-view read
// instances and their status; edit, admin and tenant-admin also write
// instances. No level writes status: that is the backend's, and a tenant who
// could write it could fake Ready or a pending plan (roles granting "*", as
// upstream's cozy:tenant:super-admin does, are answered by the instance
// status policy, policies/instance-status.yaml). Owner references are the
// caller's.
func buildRoles(def *cozyv1alpha1.ApplicationDefinition) []*rbacv1.ClusterRole {
	plural := def.Spec.Application.Plural
	group := appsv1alpha1.GroupVersion.Group
	status := rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{plural + "/status"}, Verbs: readVerbs}
	levels := []struct {
		level string
		verbs []string
	}{
		{RoleView, readVerbs}, {RoleEdit, writeVerbs}, {RoleAdmin, writeVerbs},
		{RoleTenantView, readVerbs}, {RoleTenantAdmin, tenantAdminVerbs},
	}
	out := make([]*rbacv1.ClusterRole, 0, len(levels))
	for _, l := range levels {
		out = append(out, &rbacv1.ClusterRole{
			TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{
				Name: RoleName(plural, l.level),
				Labels: map[string]string{
					cozyschema.LabelDefinition: def.Name,
					aggregateLabel(l.level):    "true",
				},
			},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{group}, Resources: []string{plural}, Verbs: append([]string(nil), l.verbs...)},
				*status.DeepCopy(),
			},
		})
	}
	return out
}

// applyRoles publishes def's ClusterRoles and deletes the ones it controls
// that it no longer wants (another plural's, after the definition took
// another name). It returns a note for the Ready message when a role's name
// is taken by a ClusterRole def does not control (that role is left alone
// and not published).
func (r *Reconciler) applyRoles(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, owner ownership.Owner) (string, error) {
	desired := buildRoles(def)
	want := map[string]bool{}
	var foreign []string
	for _, role := range desired {
		want[role.Name] = true
		live := &rbacv1.ClusterRole{}
		found, err := r.getEitherWay(ctx, role.Name, live)
		if err != nil {
			return "", err
		}
		if found {
			if err := ownership.Check("ClusterRole", live, owner); err != nil {
				foreign = append(foreign, role.Name)
				continue
			}
		}
		res, err := r.applyOwned(ctx, role, owner, live, found)
		if err != nil {
			return "", fmt.Errorf("applying ClusterRole %s: %w", role.Name, err)
		}
		if res != ssa.Unchanged {
			why := map[ssa.Result]string{
				ssa.Created:   "so " + aggregatedInto(levelOf(role.Name)) + " covers kind " + def.Spec.Application.Kind,
				ssa.Updated:   "to the definition's generation",
				ssa.Corrected: "it had been changed by someone else; put back",
			}[res]
			log.FromContext(ctx).Info("wrote ClusterRole", "clusterRole", role.Name, "result", res.String(), "why", why)
			r.events().Normal(def, role, cozyv1alpha1.EventRolePublished, "Apply", fmt.Sprintf("ClusterRole %s %s: %s", role.Name, res, why))
		}
	}
	if err := r.deleteRoles(ctx, def, want); err != nil {
		return "", err
	}
	if len(foreign) == 0 {
		return "", nil
	}
	note := fmt.Sprintf("ClusterRole %s exists and is not controlled by this definition: it is left alone, so the role it would be aggregated into does not cover this kind at that level; delete it to let the controller publish its own",
		strings.Join(foreign, ", "))
	return note, nil
}

// deleteRoles deletes the ClusterRoles def controls whose names are not in
// keep (nil: all of them).
func (r *Reconciler) deleteRoles(ctx context.Context, def *cozyv1alpha1.ApplicationDefinition, keep map[string]bool) error {
	list := &rbacv1.ClusterRoleList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{cozyschema.LabelDefinition: def.Name}); err != nil {
		return fmt.Errorf("listing the ClusterRoles of %s: %w", def.Name, err)
	}
	for i := range list.Items {
		role := &list.Items[i]
		if keep[role.Name] || !ownership.IsControlledBy(role, definitionOwner(def)) || role.DeletionTimestamp != nil {
			continue
		}
		if err := r.deleteOwned(ctx, role, "ClusterRole"); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("deleting ClusterRole %s: %w", role.Name, err)
		}
		why := "the definition no longer serves it"
		if keep == nil {
			why = "the definition is deleted"
		}
		log.FromContext(ctx).Info("deleted ClusterRole", "clusterRole", role.Name, "why", why)
		r.events().Normal(def, role, cozyv1alpha1.EventRoleDeleted, "Delete", fmt.Sprintf("deleted ClusterRole %s: %s", role.Name, why))
	}
	return nil
}

func levelOf(name string) string {
	return name[strings.LastIndex(name, ":")+1:]
}
