package tfbackend

import (
	"context"
	"flag"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestSubjectOf(t *testing.T) {
	for _, tc := range []struct {
		username string
		want     rbacv1.Subject
	}{
		{"system:serviceaccount:cozy-system:cozystack-terraform",
			rbacv1.Subject{Kind: "ServiceAccount", Namespace: "cozy-system", Name: "cozystack-terraform"}},
		{"kubernetes-admin", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "kubernetes-admin"}},
		// Not a ServiceAccount's username: a user of that name.
		{"system:serviceaccount:cozy-system", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "system:serviceaccount:cozy-system"}},
		{"system:serviceaccount::x", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "system:serviceaccount::x"}},
	} {
		if got := SubjectOf(tc.username); got != tc.want {
			t.Errorf("SubjectOf(%q) = %+v, want %+v", tc.username, got, tc.want)
		}
	}
}

func TestIdentify(t *testing.T) {
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			obj.(*authnv1.SelfSubjectReview).Status.UserInfo.Username = "system:serviceaccount:ops:tf"
			return nil
		},
	}).Build()
	a := &OutputsAccess{}
	if err := a.Identify(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if want := (rbacv1.Subject{Kind: "ServiceAccount", Namespace: "ops", Name: "tf"}); a.Subject == nil || *a.Subject != want {
		t.Fatalf("subject %+v, want %+v", a.Subject, want)
	}
}

func TestOutputsBinding(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	a := BindOutputsAccessFlags(fs)
	if err := fs.Parse([]string{"--outputs-writer-cluster-role=w"}); err != nil {
		t.Fatal(err)
	}
	if a.readerRole() != DefaultOutputsReaderRole || a.writerRole() != "w" {
		t.Fatalf("roles %q %q", a.readerRole(), a.writerRole())
	}
	if rb := a.Binding("tenant-a", "w", nil); rb != nil {
		t.Fatalf("a binding before the controller knows who it is: %+v", rb)
	}
	var none *OutputsAccess
	if none.Binding("tenant-a", "w", nil) != nil || none.writerRole() != DefaultOutputsWriterRole {
		t.Fatal("a nil access binds nothing and names the default roles")
	}
	me := rbacv1.Subject{Kind: "ServiceAccount", Namespace: "cozy-system", Name: "cozystack-terraform"}
	a.Subject = &me
	rb := a.Binding("tenant-a", "w", map[string]string{LabelManagedBy: ManagedBy})
	if rb.Namespace != "tenant-a" || rb.Name != OutputsRoleBinding || rb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "w"}) ||
		len(rb.Subjects) != 1 || rb.Subjects[0] != me || rb.Labels[LabelManagedBy] != ManagedBy {
		t.Fatalf("binding %+v", rb)
	}

	other := me
	other.Name = "someone-else"
	for _, tc := range []struct {
		name       string
		live       func(*rbacv1.RoleBinding)
		absent     bool
		create     bool
		wantErrSub string
	}{
		{name: "absent: create", absent: true, create: true},
		{name: "ours: leave", live: func(*rbacv1.RoleBinding) {}},
		{name: "another subject beside ours: it still grants us the role", live: func(l *rbacv1.RoleBinding) {
			l.Subjects = append([]rbacv1.Subject{other}, l.Subjects...)
		}},
		{name: "another role", live: func(l *rbacv1.RoleBinding) { l.RoleRef.Name = "view" },
			wantErrSub: "RoleBinding tenant-a/cozystack-terraform-outputs exists and does not bind ClusterRole w to ServiceAccount cozy-system/cozystack-terraform"},
		{name: "someone else", live: func(l *rbacv1.RoleBinding) { l.Subjects = []rbacv1.Subject{other} },
			wantErrSub: "delete it, and the controller creates its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var live *rbacv1.RoleBinding
			if !tc.absent {
				live = rb.DeepCopy()
				tc.live(live)
			}
			create, err := DecideBinding(live, rb)
			if create != tc.create {
				t.Errorf("create %v, want %v", create, tc.create)
			}
			switch {
			case tc.wantErrSub == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.wantErrSub != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrSub)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErrSub)
			}
		})
	}
}
