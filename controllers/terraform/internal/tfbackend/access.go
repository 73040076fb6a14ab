package tfbackend

import (
	"context"
	"flag"
	"fmt"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The controller reads tofu-controller's outputs Secrets and writes their
// tenant copies (outputs.go) with rights it holds in those namespaces only,
// never on Secrets cluster-wide: its chart's ClusterRole grants nothing on
// Secrets, and two ClusterRoles that do are bound to it, one namespace at a
// time, by RoleBindings named OutputsRoleBinding that it creates itself:
//
//   - in each platform namespace, to OutputsReaderRole (get): created with
//     the namespace's other objects (PlatformNamespaceObjects);
//   - in a tenant namespace, to OutputsWriterRole (get, create, update,
//     delete), before the first outputs copy is written there
//     (OutputsReconciler).
//
// Its ClusterRole holds bind on those two ClusterRoles only, and
// cozyplane-terraform-identity-policy admits no other RoleBinding of it
// there: one of these two roles, to no one but itself.
const (
	// OutputsRoleBinding names the RoleBinding that gives the controller
	// its rights on Secrets in one namespace.
	OutputsRoleBinding = "cozystack-terraform-outputs"
	// DefaultOutputsReaderRole is the ClusterRole (get Secrets) bound in
	// platform namespaces.
	DefaultOutputsReaderRole = "cozystack-terraform-outputs-reader"
	// DefaultOutputsWriterRole is the ClusterRole (get, create, update and
	// delete Secrets) bound in tenant namespaces holding outputs copies.
	DefaultOutputsWriterRole = "cozystack-terraform-outputs-writer"
)

// OutputsAccess names the ClusterRoles the controller binds itself to, and
// itself. Subject is set once the controller knows who it is (Identify); an
// access without one creates no RoleBinding (the controller then holds its
// rights some other way, an administrator's kubeconfig say).
type OutputsAccess struct {
	ReaderRole string
	WriterRole string
	Subject    *rbacv1.Subject
}

// BindOutputsAccessFlags binds --outputs-reader-cluster-role and
// --outputs-writer-cluster-role.
func BindOutputsAccessFlags(fs *flag.FlagSet) *OutputsAccess {
	a := &OutputsAccess{}
	fs.StringVar(&a.ReaderRole, "outputs-reader-cluster-role", DefaultOutputsReaderRole,
		"ClusterRole (get Secrets) the controller binds itself to in every platform namespace, to read tofu-controller's outputs Secrets; "+
			"its chart creates it and its ClusterRole grants bind on this name only")
	fs.StringVar(&a.WriterRole, "outputs-writer-cluster-role", DefaultOutputsWriterRole,
		"ClusterRole (get, create, update, delete Secrets) the controller binds itself to in a tenant namespace before it copies outputs there; "+
			"its chart creates it and its ClusterRole grants bind on this name only")
	return a
}

// SubjectOf is the RBAC subject of username: a ServiceAccount for
// system:serviceaccount:<namespace>:<name>, a User otherwise. Pure.
func SubjectOf(username string) rbacv1.Subject {
	if rest, ok := strings.CutPrefix(username, "system:serviceaccount:"); ok {
		if ns, name, ok := strings.Cut(rest, ":"); ok && ns != "" && name != "" {
			return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
		}
	}
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: username}
}

// Identify sets a.Subject to the identity c authenticates as, asked of the
// API server (SelfSubjectReview, which every authenticated user may
// create).
func (a *OutputsAccess) Identify(ctx context.Context, c client.Client) error {
	review := &authnv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return fmt.Errorf("asking the API server who the controller is (SelfSubjectReview): %w", err)
	}
	s := SubjectOf(review.Status.UserInfo.Username)
	a.Subject = &s
	return nil
}

// Binding is the RoleBinding OutputsRoleBinding in namespace ns of the
// controller to role, with labels, or nil when a is nil or has no Subject.
// Pure.
func (a *OutputsAccess) Binding(ns, role string, labels map[string]string) *rbacv1.RoleBinding {
	if a == nil || a.Subject == nil || role == "" {
		return nil
	}
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: OutputsRoleBinding, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{*a.Subject},
	}
}

// readerRole and writerRole are the configured roles, the defaults for a
// nil access.
func (a *OutputsAccess) readerRole() string {
	if a == nil || a.ReaderRole == "" {
		return DefaultOutputsReaderRole
	}
	return a.ReaderRole
}

func (a *OutputsAccess) writerRole() string {
	if a == nil || a.WriterRole == "" {
		return DefaultOutputsWriterRole
	}
	return a.WriterRole
}

// DecideBinding says what to do about want, a RoleBinding of Binding, given
// live, the RoleBinding at its name (nil when absent): create it (true),
// leave it (false, nil: it binds want's role to want's subject, whoever
// wrote it), or refuse (an error saying what is in the way: a RoleBinding of
// that name is never overwritten). Pure.
func DecideBinding(live, want *rbacv1.RoleBinding) (bool, error) {
	if live == nil {
		return true, nil
	}
	if live.RoleRef == want.RoleRef {
		for _, s := range live.Subjects {
			if s == want.Subjects[0] {
				return false, nil
			}
		}
	}
	return false, fmt.Errorf("RoleBinding %s/%s exists and does not bind ClusterRole %s to %s %s, "+
		"so the controller cannot read or write outputs Secrets there and left it untouched: delete it, and the controller creates its own",
		live.Namespace, live.Name, want.RoleRef.Name, want.Subjects[0].Kind, subjectName(want.Subjects[0]))
}

func subjectName(s rbacv1.Subject) string {
	if s.Namespace != "" {
		return s.Namespace + "/" + s.Name
	}
	return s.Name
}
