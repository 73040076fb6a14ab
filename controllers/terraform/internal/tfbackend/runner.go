package tfbackend

import (
	"flag"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/instance"
)

// tofu-controller runs each Terraform's runner Pod as the ServiceAccount
// spec.serviceAccountName (default tf-runner) of the Terraform's namespace,
// and its chart creates that ServiceAccount, bound to the ClusterRole
// tf-runner-role, only in a fixed list of namespaces. So the controller
// creates both in every platform namespace (instance.NamespaceProvisioning).
const (
	// DefaultRunnerServiceAccount is tofu-controller's default runner
	// ServiceAccount name.
	DefaultRunnerServiceAccount = "tf-runner"
	// DefaultRunnerClusterRole is the ClusterRole tofu-controller's chart
	// creates for runners (Secrets, ConfigMaps and Leases of the
	// namespace).
	DefaultRunnerClusterRole = "tf-runner-role"
	// RunnerRoleBinding names the RoleBinding of the runner ServiceAccount
	// to the runner ClusterRole in a platform namespace.
	RunnerRoleBinding = "tf-runner-rolebinding"
	// LabelManagedBy marks the objects the controller created in a
	// platform namespace, with the platform namespace's own labels.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "cozystack-terraform"
	// RunnerQuota names the ResourceQuota that caps the runner Pods of a
	// platform namespace (tofu-controller runs one per Terraform object
	// being reconciled), so one tenant cannot exhaust the cluster's Pods
	// through its instances. The Pods it counts are the tenant's: the
	// platform namespace names its tenant namespace in
	// apps.cozystack.io/tenant-namespace.
	RunnerQuota = "cozystack-runner-pods"
	// DefaultRunnerPodQuota is the number of runner Pods (not yet
	// finished) a platform namespace may hold at once.
	DefaultRunnerPodQuota = 10
)

// Runner names the runner ServiceAccount and ClusterRole; zero fields mean
// tofu-controller's defaults. PodQuota caps the runner Pods of each platform
// namespace (RunnerQuota); zero or less writes no quota.
type Runner struct {
	ServiceAccount string
	ClusterRole    string
	PodQuota       int
}

// BindRunnerFlags binds --runner-service-account and --runner-cluster-role.
func BindRunnerFlags(fs *flag.FlagSet) *Runner {
	r := &Runner{}
	fs.StringVar(&r.ServiceAccount, "runner-service-account", DefaultRunnerServiceAccount,
		"ServiceAccount created in every platform namespace for tofu-controller's runner Pods (its runner.serviceAccount.name)")
	fs.StringVar(&r.ClusterRole, "runner-cluster-role", DefaultRunnerClusterRole,
		"ClusterRole the runner ServiceAccount is bound to in every platform namespace (tofu-controller's chart creates tf-runner-role); "+
			"the controller's ClusterRole grants bind on this name only, and cozyplane-terraform-identity-policy allows only tf-runner-role")
	fs.IntVar(&r.PodQuota, "runner-pod-quota", DefaultRunnerPodQuota,
		"Pods (not yet finished) each platform namespace may hold: the ResourceQuota "+RunnerQuota+" created with the namespace caps the runner Pods "+
			"one tenant namespace's Terraform objects start at once; 0 writes no quota. Created when missing, never updated: "+
			"an administrator changes the quota of one namespace by editing it")
	return r
}

func (r *Runner) names() (sa, role string) {
	sa, role = DefaultRunnerServiceAccount, DefaultRunnerClusterRole
	if r != nil && r.ServiceAccount != "" {
		sa = r.ServiceAccount
	}
	if r != nil && r.ClusterRole != "" {
		role = r.ClusterRole
	}
	return sa, role
}

var _ instance.NamespaceProvisioning = Backend{}

// PlatformNamespaceObjects implements instance.NamespaceProvisioning: the
// runner ServiceAccount, a RoleBinding of it to the runner ClusterRole, once
// the controller knows who it is the RoleBinding OutputsRoleBinding of it to
// the outputs reader ClusterRole (access.go) and, unless PodQuota is zero or
// less, the ResourceQuota RunnerQuota on Pods,
// labelled with the platform namespace's labels and LabelManagedBy. Pure.
func (b Backend) PlatformNamespaceObjects(ns, tenant string) []client.Object {
	sa, role := b.Runner.names()
	labels := func() map[string]string {
		l := b.TargetNamespaceLabels(tenant)
		l[LabelManagedBy] = ManagedBy
		return l
	}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa, Labels: labels()}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RunnerRoleBinding, Labels: labels()},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
		},
	}
	if rb := b.Outputs.Binding(ns, b.Outputs.readerRole(), labels()); rb != nil {
		objs = append(objs, rb)
	}
	if n := b.Runner.podQuota(); n > 0 {
		// "pods" counts the Pods not yet finished, so a finished runner
		// left behind takes no room ("count/pods" would count it too).
		objs = append(objs, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RunnerQuota, Labels: labels()},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				corev1.ResourcePods: *resource.NewQuantity(int64(n), resource.DecimalSI),
			}},
		})
	}
	return objs
}

// podQuota is PodQuota, DefaultRunnerPodQuota for a nil Runner.
func (r *Runner) podQuota() int {
	if r == nil {
		return DefaultRunnerPodQuota
	}
	return r.PodQuota
}
