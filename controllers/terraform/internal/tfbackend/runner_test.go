package tfbackend

import (
	"flag"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func TestPlatformNamespaceObjects(t *testing.T) {
	custom := flag.NewFlagSet("t", flag.ContinueOnError)
	r := BindRunnerFlags(custom)
	if err := custom.Parse([]string{"--runner-service-account=runner-x", "--runner-cluster-role=role-x", "--runner-pod-quota=3"}); err != nil {
		t.Fatal(err)
	}
	defaults := flag.NewFlagSet("d", flag.ContinueOnError)
	d := BindRunnerFlags(defaults)
	if err := defaults.Parse(nil); err != nil {
		t.Fatal(err)
	}
	off := flag.NewFlagSet("o", flag.ContinueOnError)
	o := BindRunnerFlags(off)
	if err := off.Parse([]string{"--runner-pod-quota=0"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		b        Backend
		sa, role string
		pods     int64 // 0: no quota
	}{
		{"nil runner: tofu-controller's defaults", Backend{}, "tf-runner", "tf-runner-role", DefaultRunnerPodQuota},
		{"flag defaults", Backend{Runner: d}, "tf-runner", "tf-runner-role", DefaultRunnerPodQuota},
		{"flags", Backend{Runner: r}, "runner-x", "role-x", 3},
		{"no pod quota", Backend{Runner: o}, "tf-runner", "tf-runner-role", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.b.PlatformNamespaceObjects("cozy-tf-demo", "demo")
			want := 2
			if tc.pods > 0 {
				want = 3
			}
			if len(objs) != want {
				t.Fatalf("%d objects, want %d", len(objs), want)
			}
			if tc.pods > 0 {
				q, ok := objs[2].(*corev1.ResourceQuota)
				if !ok || q.Name != RunnerQuota || q.Namespace != "cozy-tf-demo" {
					t.Fatalf("third object %T %s/%s, want ResourceQuota cozy-tf-demo/%s", objs[2], objs[2].GetNamespace(), objs[2].GetName(), RunnerQuota)
				}
				if len(q.Spec.Hard) != 1 || q.Spec.Hard.Pods().Value() != tc.pods {
					t.Errorf("quota hard %v, want pods: %d", q.Spec.Hard, tc.pods)
				}
			}
			sa, ok := objs[0].(*corev1.ServiceAccount)
			if !ok || sa.Name != tc.sa || sa.Namespace != "cozy-tf-demo" {
				t.Fatalf("first object %T %s/%s, want ServiceAccount cozy-tf-demo/%s", objs[0], objs[0].GetNamespace(), objs[0].GetName(), tc.sa)
			}
			rb, ok := objs[1].(*rbacv1.RoleBinding)
			if !ok || rb.Name != RunnerRoleBinding || rb.Namespace != "cozy-tf-demo" {
				t.Fatalf("second object %T %s/%s", objs[1], objs[1].GetNamespace(), objs[1].GetName())
			}
			if rb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: tc.role}) {
				t.Errorf("roleRef %+v", rb.RoleRef)
			}
			if len(rb.Subjects) != 1 || rb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: tc.sa, Namespace: "cozy-tf-demo"}) {
				t.Errorf("subjects %+v", rb.Subjects)
			}
			for _, o := range objs {
				l := o.GetLabels()
				if l[appsv1alpha1.LabelPlatformNamespace] != "Terraform" || l[appsv1alpha1.LabelTenantNamespace] != "demo" || l[LabelManagedBy] != ManagedBy {
					t.Errorf("%s labels %v", o.GetName(), l)
				}
			}
			// Each object has its own label map: mutating one leaves the other.
			objs[0].GetLabels()["x"] = "y"
			if objs[1].GetLabels()["x"] != "" {
				t.Error("objects share a label map")
			}
		})
	}
}

// Once the controller knows who it is, each platform namespace also binds it
// to the outputs reader ClusterRole, after the runner's objects.
func TestPlatformNamespaceObjectsOutputsReader(t *testing.T) {
	me := rbacv1.Subject{Kind: "ServiceAccount", Namespace: "cozy-system", Name: "cozystack-terraform"}
	b := Backend{Outputs: &OutputsAccess{ReaderRole: "r", Subject: &me}}
	objs := b.PlatformNamespaceObjects("cozy-tf-demo", "demo")
	if len(objs) != 4 {
		t.Fatalf("%d objects, want 4", len(objs))
	}
	rb, ok := objs[2].(*rbacv1.RoleBinding)
	if !ok || rb.Namespace != "cozy-tf-demo" || rb.Name != OutputsRoleBinding || rb.RoleRef.Name != "r" || len(rb.Subjects) != 1 || rb.Subjects[0] != me {
		t.Fatalf("third object %T %+v", objs[2], objs[2])
	}
	if l := rb.Labels; l[appsv1alpha1.LabelPlatformNamespace] != "Terraform" || l[appsv1alpha1.LabelTenantNamespace] != "demo" || l[LabelManagedBy] != ManagedBy {
		t.Errorf("labels %v", l)
	}
	if _, ok := objs[3].(*corev1.ResourceQuota); !ok {
		t.Errorf("fourth object %T, want the runner quota", objs[3])
	}
}
