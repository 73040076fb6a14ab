package instance

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ownership"
)

func TestPlatformNamespaceName(t *testing.T) {
	for _, tc := range []struct {
		prefix, ns, want string
	}{
		{"p-", "tenant-a", "p-tenant-a"},
		{"cozy-tf-", strings.Repeat("a", 55), "cozy-tf-" + strings.Repeat("a", 55)},
		{"cozy-tf-", strings.Repeat("a", 56), ""},
		{"cozy-tf-", strings.Repeat("a", 45) + "-" + strings.Repeat("b", 17), ""}, // cut at a "-"
	} {
		got := PlatformNamespaceName(tc.prefix, tc.ns)
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
			t.Errorf("PlatformNamespaceName(%q, %q) = %q: %v", tc.prefix, tc.ns, got, errs)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("PlatformNamespaceName(%q, %q) = %q, want %q", tc.prefix, tc.ns, got, tc.want)
		}
		if !strings.HasPrefix(got, tc.prefix) {
			t.Errorf("PlatformNamespaceName(%q, %q) = %q lacks the prefix", tc.prefix, tc.ns, got)
		}
	}
	a, b := strings.Repeat("a", 63), strings.Repeat("a", 62)+"b"
	if PlatformNamespaceName("cozy-tf-", a) == PlatformNamespaceName("cozy-tf-", b) {
		t.Error("two long namespaces with the same beginning share a platform namespace")
	}
}

func TestDecidePlatform(t *testing.T) {
	inst := testInstance("Gadget", "tenant-a", "g", "uid-1")
	obj := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("p-tenant-a")
		u.SetName("g-g")
		u.SetLabels(labels)
		return u
	}
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
		want ownership.Verdict
		msg  string
	}{
		{"absent", nil, ownership.Absent, ""},
		{"ours", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1",
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationName: "g"}),
			ownership.Controlled, ""},
		{"its uid alone", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1"}), ownership.Foreign,
			"belongs to  / (uid uid-1), not to this instance (Gadget tenant-a/g, uid uid-1)"},
		{"its uid under another kind", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1",
			appsv1alpha1.LabelApplicationKind: "Widget", appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationName: "g"}),
			ownership.Foreign, "belongs to Widget tenant-a/g (uid uid-1)"},
		{"its uid under another namespace", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1",
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: "tenant-b", appsv1alpha1.LabelApplicationName: "g"}),
			ownership.Foreign, "belongs to Gadget tenant-b/g (uid uid-1)"},
		{"its uid under another name", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1",
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationName: "h"}),
			ownership.Foreign, "belongs to Gadget tenant-a/h (uid uid-1)"},
		{"unlabelled", obj(nil), ownership.Foreign, "carries no apps.cozystack.io/application.uid label"},
		{"an earlier instance of the same name", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-0",
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationName: "g"}),
			ownership.Foreign, "belongs to Gadget tenant-a/g (uid uid-0), not to this instance (Gadget tenant-a/g, uid uid-1)"},
	} {
		var live client.Object
		if tc.live != nil {
			live = tc.live
		}
		v, err := DecidePlatform("ConfigMap", live, inst)
		if v != tc.want {
			t.Errorf("%s: verdict %v, want %v", tc.name, v, tc.want)
		}
		if (err != nil) != (tc.want == ownership.Foreign) || err != nil && !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.msg)
		}
		if err != nil && !ownership.IsNotOwned(err) {
			t.Errorf("%s: the refusal is not a NotOwnedError", tc.name)
		}
	}
}

func TestCheckPlatformNamespace(t *testing.T) {
	want := map[string]string{"owned": "yes", "tenant": "a"}
	ns := func(l map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p-a", Labels: l}}
	}
	if err := CheckPlatformNamespace(ns(map[string]string{"owned": "yes", "tenant": "a", "extra": "x"}), want); err != nil {
		t.Errorf("ours refused: %v", err)
	}
	if err := CheckPlatformNamespace(ns(nil), want); err == nil || !strings.Contains(err.Error(), "label owned is \"\"") {
		t.Errorf("unlabelled namespace: %v", err)
	}
	if err := CheckPlatformNamespace(ns(map[string]string{"owned": "yes", "tenant": "b"}), want); err == nil || !strings.Contains(err.Error(), `label tenant is "b", want "a"`) {
		t.Errorf("another tenant's namespace: %v", err)
	}
}

// platformBackend keeps ConfigMaps in a platform namespace p-<ns>, holds
// the instances of definitions that destroy on deletion with a finalizer, as
// the Terraform backend does, and releases instances of kinds that moved to
// another backend.
type platformBackend struct{ configMapBackend }

const testFinalizer = "test.cozystack.io/platform"

func (platformBackend) Type() cozyv1alpha1.BackendType   { return cozyv1alpha1.BackendTerraform }
func (platformBackend) TargetNamespace(ns string) string { return PlatformNamespaceName("p-", ns) }
func (platformBackend) Finalizer(def *Definition) string {
	if def.DestroysOnDeletion() {
		return testFinalizer
	}
	return ""
}
func (platformBackend) Finalizers() []string {
	return []string{testFinalizer, appsv1alpha1.FinalizerDestroy}
}
func (platformBackend) TargetNamespaceLabels(ns string) map[string]string {
	return map[string]string{"test/platform": "yes", "test/tenant": ns}
}

// PlatformNamespaceObjects implements NamespaceProvisioning: a
// ServiceAccount and its RoleBinding, as the Terraform backend's runner.
func (b platformBackend) PlatformNamespaceObjects(ns, tenant string) []client.Object {
	l := b.TargetNamespaceLabels(tenant)
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner", Labels: l}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner", Labels: l},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "runner-role"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "runner", Namespace: ns}}},
	}
}

// components are platformBackend's, as the Terraform backend's.
func (b platformBackend) components() Components {
	return Components{Placement: PlatformNamespaces{Namespaces: b, Provision: b}, Finalizer: b}
}

func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := widgetCRD()
	crd.Name = "gadgets.apps.cozystack.io"
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", Plural: "gadgets", ListKind: "GadgetList", Singular: "gadget"}
	return crd
}

func TestDecideProvisioned(t *testing.T) {
	want := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "p-a", Name: "runner", Labels: map[string]string{"test/platform": "yes", "test/tenant": "a"}}}
	sa := func(labels map[string]string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "p-a", Name: "runner", Labels: labels}}
	}
	for _, tc := range []struct {
		name   string
		live   client.Object
		create bool
		errHas string
	}{
		{"absent", nil, true, ""},
		{"typed nil", (*corev1.ServiceAccount)(nil), true, ""},
		{"ours", sa(map[string]string{"test/platform": "yes", "test/tenant": "a"}), false, ""},
		{"ours with more labels", sa(map[string]string{"test/platform": "yes", "test/tenant": "a", "x": "y"}), false, ""},
		{"no labels", sa(nil), false, `ServiceAccount p-a/runner exists but was not created by the backend controller (label test/platform is "", want "yes")`},
		{"another tenant's", sa(map[string]string{"test/platform": "yes", "test/tenant": "b"}), false, `label test/tenant is "b", want "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			create, err := DecideProvisioned("ServiceAccount", tc.live, want)
			if create != tc.create {
				t.Errorf("create = %v, want %v", create, tc.create)
			}
			switch {
			case tc.errHas == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
				t.Errorf("error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

func TestStale(t *testing.T) {
	inst := testInstance("Gadget", "tenant-a", "g", "uid-1")
	obj := func(uid, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetLabels(map[string]string{appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: ns,
			appsv1alpha1.LabelApplicationName: name, appsv1alpha1.LabelApplicationUID: uid})
		return u
	}
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
		want bool
	}{
		{"absent", nil, false},
		{"ours", obj("uid-1", "tenant-a", "g"), false},
		{"an earlier instance of the same name", obj("uid-0", "tenant-a", "g"), true},
		{"another namespace's instance", obj("uid-0", "tenant-b", "g"), false},
		{"another name", obj("uid-0", "tenant-a", "h"), false},
		{"no uid label", obj("", "tenant-a", "g"), false},
	} {
		var live client.Object
		if tc.live != nil {
			live = tc.live
		}
		if got := Stale(live, inst); got != tc.want {
			t.Errorf("%s: Stale = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// heldFinalizer holds instances in their own namespace until their backing
// objects are gone.
type heldFinalizer struct{}

func (heldFinalizer) Finalizer(*Definition) string { return "test/held" }
func (heldFinalizer) Finalizers() []string         { return []string{"test/held"} }

func TestFindsOwned(t *testing.T) {
	b := platformBackend{}
	for _, tc := range []struct {
		name string
		c    Components
		want bool
	}{
		{"the defaults: in the instance's namespace, no finalizer (the Helm backend)", Components{}, false},
		{"in the instance's namespace, stated", Components{Placement: InstanceNamespace{}}, false},
		{"platform namespaces with a finalizer (the Terraform backend)", b.components(), true},
		{"platform namespaces without a finalizer: orphans are still collected", Components{Placement: PlatformNamespaces{Namespaces: b}}, true},
		{"platform namespaces by pointer", Components{Placement: &PlatformNamespaces{Namespaces: b}}, true},
		{"a finalizer in the instance's namespace", Components{Finalizer: heldFinalizer{}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.withDefaults().findsOwned(); got != tc.want {
				t.Errorf("findsOwned() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSeenGone(t *testing.T) {
	req := dynamicwatch.Request{GVK: appsv1alpha1.GroupVersion.WithKind("Gadget"), NamespacedName: types.NamespacedName{Namespace: "t", Name: "a"}}
	orphan := func(uid string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetLabels(map[string]string{appsv1alpha1.LabelApplicationUID: uid})
		return o
	}
	for _, tc := range []struct {
		name    string
		seen    types.UID // "": no deletion seen
		sharded bool
		orphans []*unstructured.Unstructured
		want    bool
	}{
		{"the watch saw this very instance go", "u1", false, []*unstructured.Unstructured{orphan("u1")}, true},
		{"no deletion seen: a read confirms", "", false, []*unstructured.Unstructured{orphan("u1")}, false},
		{"an orphan of an earlier instance of the name", "u2", false, []*unstructured.Unstructured{orphan("u2"), orphan("u1")}, false},
		{"a shard's watch: the deletion may be a relabelling", "u1", true, []*unstructured.Unstructured{orphan("u1")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Sharded: tc.sharded}
			if tc.seen != "" {
				r.deleted.Store(req, tc.seen)
			}
			if got := r.seenGone(req, tc.orphans); got != tc.want {
				t.Fatalf("seenGone = %v, want %v", got, tc.want)
			}
		})
	}
}
