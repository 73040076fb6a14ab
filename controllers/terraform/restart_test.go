package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/controllers/terraform/internal/tfbackend"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestKilledMidWayConverges runs the real controller binary against a real
// API server, kills it (SIGKILL) while it is materialising 80 instances of a
// Terraform-backed kind in two tenant namespaces, starts it again and checks
// that every instance ends up with exactly one Terraform in its tenant's
// platform namespace (cozy-tf-<tenant>), labelled for it, the namespace with
// the controller's outputs RoleBinding, and the instance with its finalizer
// and a status naming its Terraform. It then plays tofu-controller (Ready on
// every Terraform), waits for every instance to report Ready, and checks that
// two resync periods of the settled system cause no API write.
func TestKilledMidWayConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and the controller binary")
	}
	const n = 80
	tenants := []string{"tenant-r", "tenant-s"}
	ctx := context.Background()

	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{"api/crds/cozystack.io_applicationdefinitions.yaml", "api/crds/infra.contrib.fluxcd.io_terraforms.yaml"} {
		crd, err := testenv.CRDFromFile(f)
		check(t, err)
		crds = append(crds, crd)
	}
	crds = append(crds, testenv.NamespacedCRD("apps.cozystack.io", "v1alpha1",
		apiextensionsv1.CustomResourceDefinitionNames{Kind: "Stack", Plural: "stacks", ListKind: "StackList", Singular: "stack"}, nil, true))
	h := testenv.NewHarness(t, crds, cozyv1alpha1.AddToScheme, tfv1alpha2.AddToScheme)
	c, bin, kubeconfig := h.Client, h.Binary, h.Kubeconfig

	for _, ns := range tenants {
		check(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	def := &cozyv1alpha1.ApplicationDefinition{}
	check(t, yaml.Unmarshal([]byte(`
metadata: {name: stack}
spec:
  application: {kind: Stack, plural: stacks, singular: stack, openAPISchema: '{"type":"object"}'}
  backend:
    type: Terraform
    terraform:
      prefix: tf-
      sourceRef: {kind: OCIRepository, name: stack, namespace: cozy-system}
      path: ./stack
      destroyResourcesOnDeletion: true
`), def))
	check(t, c.Create(ctx, def))
	def.Status.CRDName = "stacks.apps.cozystack.io"
	check(t, c.Status().Update(ctx, def))

	gvk := appsv1alpha1.GroupVersion.WithKind("Stack")
	tenantOf := map[string]string{} // instance name -> tenant namespace
	for i := range n {
		ns := tenants[i%len(tenants)]
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"i": int64(i)}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(fmt.Sprintf("app-%03d", i))
		check(t, c.Create(ctx, u))
		tenantOf[u.GetName()] = ns
	}

	terraforms := func() []tfv1alpha2.Terraform {
		var all []tfv1alpha2.Terraform
		for _, ns := range tenants {
			list := &tfv1alpha2.TerraformList{}
			check(t, c.List(ctx, list, client.InNamespace(tfbackend.Backend{}.TargetNamespace(ns))))
			all = append(all, list.Items...)
		}
		return all
	}
	count := func() int { return len(terraforms()) }

	// First run, throttled so the kill lands mid-way.
	testenv.KillMidWay(t, bin, kubeconfig, []string{"--kube-api-qps=20", "--kube-api-burst=20", "--workers=2"}, count, 15, n, "Terraforms written")

	second := testenv.StartController(t, bin, kubeconfig, "--resync-period=10s")

	// Converged: every instance has its Terraform and a status naming it.
	instances := func() []unstructured.Unstructured {
		var all []unstructured.Unstructured
		for _, ns := range tenants {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind("StackList"))
			check(t, c.List(ctx, list, client.InNamespace(ns)))
			all = append(all, list.Items...)
		}
		return all
	}
	statusOf := func(u *unstructured.Unstructured) *appsv1alpha1.ApplicationStatus {
		st := &appsv1alpha1.ApplicationStatus{}
		if m, ok := u.Object["status"].(map[string]any); ok {
			check(t, runtime.DefaultUnstructuredConverter.FromUnstructured(m, st))
		}
		return st
	}
	testenv.Eventually(t, 90*time.Second, func() (bool, string, error) {
		k, written := count(), 0
		for _, u := range instances() {
			if st := statusOf(&u); st.Backend != nil && st.Backend.Name == "tf-"+u.GetName() && meta.FindStatusCondition(st.Conditions, "Ready") != nil {
				written++
			}
		}
		return k >= n && written == n, fmt.Sprintf("%d of %d Terraforms, %d of %d instance statuses written after the restart", k, n, written, n), nil
	})

	tfs := terraforms()
	if len(tfs) != n {
		t.Fatalf("%d Terraforms after restart, want %d", len(tfs), n)
	}
	seen := map[string]bool{}
	for _, tf := range tfs {
		name := strings.TrimPrefix(tf.Name, "tf-")
		ns := tenantOf[name]
		if ns == "" || seen[name] || tf.Namespace != tfbackend.NamespacePrefix+ns ||
			tf.Labels[appsv1alpha1.LabelApplicationName] != name || tf.Labels[appsv1alpha1.LabelApplicationNamespace] != ns ||
			tf.Spec.SourceRef.Name != "stack" || tf.Spec.Path != "./stack" {
			t.Fatalf("Terraform %s/%s: labels %v, source %+v path %q (duplicate: %v)", tf.Namespace, tf.Name, tf.Labels, tf.Spec.SourceRef, tf.Spec.Path, seen[name])
		}
		seen[name] = true
	}
	for _, ns := range tenants {
		pns := tfbackend.Backend{}.TargetNamespace(ns)
		rb := &rbacv1.RoleBinding{}
		check(t, c.Get(ctx, client.ObjectKey{Namespace: pns, Name: tfbackend.OutputsRoleBinding}, rb))
		if rb.RoleRef.Name != tfbackend.DefaultOutputsReaderRole || len(rb.Subjects) != 1 {
			t.Fatalf("RoleBinding %s/%s: %+v %+v", pns, rb.Name, rb.RoleRef, rb.Subjects)
		}
	}
	for _, u := range instances() {
		if !slices.Contains(u.GetFinalizers(), appsv1alpha1.FinalizerTerraform) {
			t.Fatalf("instance %s/%s: finalizers %v", u.GetNamespace(), u.GetName(), u.GetFinalizers())
		}
	}

	// tofu-controller applies every plan: each instance follows its
	// Terraform to Ready.
	for i := range tfs {
		tf := &tfs[i]
		tf.Status.ObservedGeneration = tf.Generation
		meta.SetStatusCondition(&tf.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
			Reason: tfv1alpha2.AppliedSucceedReason, Message: "Applied successfully"})
		check(t, c.Status().Update(ctx, tf))
	}
	testenv.Eventually(t, 60*time.Second, func() (bool, string, error) {
		ready := 0
		for _, u := range instances() {
			if r := meta.FindStatusCondition(statusOf(&u).Conditions, "Ready"); r != nil && r.Status == metav1.ConditionTrue && r.Reason == tfv1alpha2.AppliedSucceedReason {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d of %d instances Ready after tofu-controller applied", ready, n), nil
	})

	// Settled: no write over two resync periods.
	second.AssertIdle(t, 25*time.Second)
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
