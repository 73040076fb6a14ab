package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
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
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind("Gadget"))
	inst.SetNamespace("tenant-a")
	inst.SetName("g")
	inst.SetUID("uid-1")
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
		{"ours", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-1"}), ownership.Controlled, ""},
		{"unlabelled", obj(nil), ownership.Foreign, "carries no apps.cozystack.io/application.uid label"},
		{"an earlier instance of the same name", obj(map[string]string{appsv1alpha1.LabelApplicationUID: "uid-0",
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationName: "g"}),
			ownership.Foreign, "belongs to Gadget tenant-a/g (uid uid-0), not to this instance (uid uid-1)"},
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
// every instance with a finalizer, and releases instances of kinds that
// moved to another backend.
type platformBackend struct{ configMapBackend }

const testFinalizer = "test.cozystack.io/platform"

func (platformBackend) Type() cozyv1alpha1.BackendType   { return cozyv1alpha1.BackendTerraform }
func (platformBackend) TargetNamespace(ns string) string { return PlatformNamespaceName("p-", ns) }
func (platformBackend) Finalizer(*Definition) string     { return testFinalizer }
func (platformBackend) Finalizers() []string             { return []string{testFinalizer} }
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

var (
	_ TargetNamespacing     = platformBackend{}
	_ NamespaceProvisioning = platformBackend{}
	_ Finalizing            = platformBackend{}
	_ Releasing             = platformBackend{}
)

func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := widgetCRD()
	crd.Name = "gadgets.apps.cozystack.io"
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", Plural: "gadgets", ListKind: "GadgetList", Singular: "gadget"}
	return crd
}

func TestPlatformNamespace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = cozyv1alpha1.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, gadgetCRD()))
	eventually(t, "the Gadget CRD established", func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: "gadgets.apps.cozystack.io"}, crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established")
	})
	for _, ns := range []string{"tenant-p", "tenant-q", "tenant-l"} {
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	// A namespace with tenant-q's platform name that the backend did not create.
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p-tenant-q"}}))

	gvk := appsv1alpha1.GroupVersion.WithKind("Gadget")
	newGadget := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	getGadget := func(ns, name string) (*unstructured.Unstructured, *appsv1alpha1.ApplicationStatus, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
			return nil, nil, err
		}
		st, _ := readStatus(u)
		return u, st, nil
	}
	getCM := func(ns, name string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		return cm, c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm)
	}
	readyReason := func(ns, name string) (string, string) {
		_, st, err := getGadget(ns, name)
		if err != nil {
			return "", err.Error()
		}
		if r := meta.FindStatusCondition(st.Conditions, "Ready"); r != nil {
			return r.Reason, r.Message
		}
		return "", ""
	}

	// The definition, not served yet: instances created now are not
	// reconciled, which lets the test write a legacy backing object first.
	def := &cozyv1alpha1.ApplicationDefinition{}
	must(yaml.Unmarshal([]byte(`
metadata: {name: gadget}
spec:
  application: {kind: Gadget, plural: gadgets, singular: gadget, openAPISchema: '{"type":"object"}'}
  backend:
    type: Terraform
    terraform:
      prefix: g-
      sourceRef: {kind: OCIRepository, name: gadget, namespace: cozy-system}
`), def))
	must(c.Create(ctx, def))
	// Other tests' reconcilers must not find this definition.
	defer func() { _ = c.Delete(context.Background(), def) }()
	legacy := newGadget("tenant-l", "old")
	must(c.Create(ctx, legacy))
	legacyCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-l", Name: "g-old",
		Labels:          map[string]string{appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationGroup: "apps.cozystack.io", appsv1alpha1.LabelApplicationName: "old"},
		OwnerReferences: []metav1.OwnerReference{ownership.ControllerRef(ownerOf(legacy))}},
		Data: map[string]string{"spec": "written by an earlier version"}}
	must(c.Create(ctx, legacyCM))

	opts := manager.NewOptions("cozystack-platform-test")
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	backend := platformBackend{}
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme, CacheOptions(backend))
	must(err)
	r := &Reconciler{Name: "cozystack-platform-test", Backend: backend, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("cozystack-platform-test"), Workers: 2}
	must(r.SetupWithManager(mgr))
	go func() { _ = mgr.Start(ctx) }()

	def.Status.CRDName = "gadgets.apps.cozystack.io"
	must(c.Status().Update(ctx, def))

	var one *unstructured.Unstructured
	t.Run("the backing object goes to a platform namespace, owned by labels", func(t *testing.T) {
		one = newGadget("tenant-p", "one")
		must(c.Create(ctx, one))
		eventually(t, "ConfigMap p-tenant-p/g-one", func() error {
			cm, err := getCM("p-tenant-p", "g-one")
			if err != nil {
				return err
			}
			want := map[string]string{appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationName: "one",
				appsv1alpha1.LabelApplicationNamespace: "tenant-p", appsv1alpha1.LabelApplicationUID: string(one.GetUID())}
			for k, v := range want {
				if cm.Labels[k] != v {
					return fmt.Errorf("label %s = %q, want %q", k, cm.Labels[k], v)
				}
			}
			if len(cm.OwnerReferences) != 0 {
				return fmt.Errorf("an ownerReference cannot cross namespaces: %+v", cm.OwnerReferences)
			}
			return nil
		})
		ns := &corev1.Namespace{}
		must(c.Get(ctx, types.NamespacedName{Name: "p-tenant-p"}, ns))
		if ns.Labels["test/platform"] != "yes" || ns.Labels["test/tenant"] != "tenant-p" {
			t.Fatalf("platform namespace labels %v", ns.Labels)
		}
		if _, err := getCM("tenant-p", "g-one"); !apierrors.IsNotFound(err) {
			t.Fatalf("a backing object in the tenant's namespace: %v", err)
		}
		u, _, err := getGadget("tenant-p", "one")
		must(err)
		if !contains(u.GetFinalizers(), testFinalizer) {
			t.Fatalf("finalizers %v", u.GetFinalizers())
		}
	})

	t.Run("backing object events reach the instance through its labels", func(t *testing.T) {
		cm, err := getCM("p-tenant-p", "g-one")
		must(err)
		cm.Annotations = map[string]string{"ready": "true", "version": "2.0"}
		must(c.Update(ctx, cm))
		eventually(t, "instance Ready", func() error {
			_, st, err := getGadget("tenant-p", "one")
			if err != nil {
				return err
			}
			if r := meta.FindStatusCondition(st.Conditions, "Ready"); r == nil || r.Status != "True" || st.Version != "2.0" {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
	})

	t.Run("a platform namespace the backend did not create gets nothing", func(t *testing.T) {
		r.ForeignRecheck = time.Second
		must(c.Create(ctx, newGadget("tenant-q", "q")))
		eventually(t, "instance q stalled", func() error {
			reason, msg := readyReason("tenant-q", "q")
			if reason != appsv1alpha1.ReasonPlatformNamespaceNotOwned || !strings.Contains(msg, "namespace p-tenant-q exists but was not created") {
				return fmt.Errorf("Ready %s: %s", reason, msg)
			}
			return nil
		})
		if _, err := getCM("p-tenant-q", "g-q"); !apierrors.IsNotFound(err) {
			t.Fatalf("written in a namespace that is not the backend's: %v", err)
		}
		// Once an administrator labels it as the backend's, it is used
		// without anyone touching the instance.
		ns := &corev1.Namespace{}
		must(c.Get(ctx, types.NamespacedName{Name: "p-tenant-q"}, ns))
		ns.Labels = backend.TargetNamespaceLabels("tenant-q")
		must(c.Update(ctx, ns))
		eventually(t, "ConfigMap p-tenant-q/g-q", func() error { _, err := getCM("p-tenant-q", "g-q"); return err })
		// The namespace's provisioned objects were created before it.
		sa := &corev1.ServiceAccount{}
		must(c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-q", Name: "runner"}, sa))
		rb := &rbacv1.RoleBinding{}
		must(c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-q", Name: "runner"}, rb))
		if sa.Labels["test/tenant"] != "tenant-q" || rb.RoleRef.Name != "runner-role" || len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != "p-tenant-q" {
			t.Fatalf("provisioned objects: ServiceAccount labels %v, RoleBinding %+v %+v", sa.Labels, rb.RoleRef, rb.Subjects)
		}
	})

	t.Run("an object at a provisioned object's name that is not the backend's is left untouched and reported", func(t *testing.T) {
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-v"}}))
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p-tenant-v", Labels: backend.TargetNamespaceLabels("tenant-v")}}))
		foreign := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "p-tenant-v", Name: "runner", Labels: map[string]string{"someone": "else"}}}
		must(c.Create(ctx, foreign))
		must(c.Create(ctx, newGadget("tenant-v", "v")))
		eventually(t, "instance v stalled", func() error {
			reason, msg := readyReason("tenant-v", "v")
			if reason != appsv1alpha1.ReasonPlatformObjectNotOwned || !strings.Contains(msg, "ServiceAccount p-tenant-v/runner exists but was not created by the backend controller") {
				return fmt.Errorf("Ready %s: %s", reason, msg)
			}
			return nil
		})
		if _, err := getCM("p-tenant-v", "g-v"); !apierrors.IsNotFound(err) {
			t.Fatalf("written in a namespace whose runner ServiceAccount is not the backend's: %v", err)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-v", Name: "runner"}, &rbacv1.RoleBinding{}); !apierrors.IsNotFound(err) {
			t.Fatalf("RoleBinding created for a ServiceAccount that is not the backend's: %v", err)
		}
		sa := &corev1.ServiceAccount{}
		must(c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-v", Name: "runner"}, sa))
		if sa.Labels["someone"] != "else" || sa.Labels["test/platform"] != "" {
			t.Fatalf("the foreign ServiceAccount was changed: %v", sa.Labels)
		}
		// An administrator deletes it: the controller creates its own
		// without anyone touching the instance.
		must(c.Delete(ctx, sa))
		eventually(t, "ConfigMap p-tenant-v/g-v", func() error { _, err := getCM("p-tenant-v", "g-v"); return err })
		must(c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-v", Name: "runner"}, sa))
		if sa.Labels["test/platform"] != "yes" {
			t.Fatalf("ServiceAccount not recreated as the backend's: %v", sa.Labels)
		}
		must(c.Get(ctx, types.NamespacedName{Namespace: "p-tenant-v", Name: "runner"}, &rbacv1.RoleBinding{}))
	})

	t.Run("a legacy backing object in the tenant namespace is left untouched and reported", func(t *testing.T) {
		eventually(t, "instance old stalled", func() error {
			reason, msg := readyReason("tenant-l", "old")
			if reason != appsv1alpha1.ReasonLegacyBackingObject || !strings.Contains(msg, "ConfigMap tenant-l/g-old was written by an earlier version") {
				return fmt.Errorf("Ready %s: %s", reason, msg)
			}
			return nil
		})
		cm, err := getCM("tenant-l", "g-old")
		must(err)
		if cm.Data["spec"] != "written by an earlier version" {
			t.Fatalf("the legacy object was changed: %v", cm.Data)
		}
		if _, err := getCM("p-tenant-l", "g-old"); !apierrors.IsNotFound(err) {
			t.Fatalf("a second backing object was created next to the legacy one: %v", err)
		}
	})

	t.Run("deleting an instance deletes its backing objects, here and in the tenant namespace", func(t *testing.T) {
		for _, g := range []struct{ ns, name, cmNS string }{{"tenant-p", "one", "p-tenant-p"}, {"tenant-l", "old", "tenant-l"}} {
			u, _, err := getGadget(g.ns, g.name)
			must(err)
			must(c.Delete(ctx, u))
			eventually(t, "instance "+g.name+" gone", func() error {
				if _, _, err := getGadget(g.ns, g.name); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there: %v", err)
				}
				return nil
			})
			if _, err := getCM(g.cmNS, "g-"+g.name); !apierrors.IsNotFound(err) {
				t.Fatalf("backing object %s/g-%s outlived its instance: %v", g.cmNS, g.name, err)
			}
		}
	})

	t.Run("a backing object whose instance is gone is deleted", func(t *testing.T) {
		// As if the instance had been deleted without the finalizer (a
		// tenant may remove finalizers from its own instances).
		ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "p-tenant-p", Name: "g-ghost", Labels: map[string]string{
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationGroup: "apps.cozystack.io", appsv1alpha1.LabelApplicationName: "ghost",
			appsv1alpha1.LabelApplicationNamespace: "tenant-p", appsv1alpha1.LabelApplicationUID: "gone-uid"}}}
		must(c.Create(ctx, ghost))
		eventually(t, "the orphan deleted", func() error {
			if _, err := getCM("p-tenant-p", "g-ghost"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})

	t.Run("a backing object of an earlier instance of the same name is replaced", func(t *testing.T) {
		// The instance waits on a platform namespace that is not the
		// backend's yet, which lets the test write the earlier object
		// before the controller can write its own.
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-s"}}))
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p-tenant-s"}}))
		three := newGadget("tenant-s", "three")
		must(c.Create(ctx, three))
		eventually(t, "instance three waiting", func() error {
			if reason, msg := readyReason("tenant-s", "three"); reason != appsv1alpha1.ReasonPlatformNamespaceNotOwned {
				return fmt.Errorf("Ready %s: %s", reason, msg)
			}
			return nil
		})
		must(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "p-tenant-s", Name: "g-three", Labels: map[string]string{
			appsv1alpha1.LabelApplicationKind: "Gadget", appsv1alpha1.LabelApplicationGroup: "apps.cozystack.io", appsv1alpha1.LabelApplicationName: "three",
			appsv1alpha1.LabelApplicationNamespace: "tenant-s", appsv1alpha1.LabelApplicationUID: "earlier-uid"}}, Data: map[string]string{"old": "yes"}}))
		ns := &corev1.Namespace{}
		must(c.Get(ctx, types.NamespacedName{Name: "p-tenant-s"}, ns))
		ns.Labels = backend.TargetNamespaceLabels("tenant-s")
		must(c.Update(ctx, ns))
		eventually(t, "g-three written for the new instance", func() error {
			cm, err := getCM("p-tenant-s", "g-three")
			if err != nil {
				return err
			}
			if cm.Labels[appsv1alpha1.LabelApplicationUID] != string(three.GetUID()) || cm.Data["old"] != "" {
				return fmt.Errorf("labels %v data %v", cm.Labels, cm.Data)
			}
			return nil
		})
	})

	t.Run("after the definition moves to another backend, instances can still be deleted", func(t *testing.T) {
		must(c.Create(ctx, newGadget("tenant-p", "two")))
		eventually(t, "ConfigMap p-tenant-p/g-two", func() error { _, err := getCM("p-tenant-p", "g-two"); return err })
		cur := &cozyv1alpha1.ApplicationDefinition{}
		must(c.Get(ctx, types.NamespacedName{Name: "gadget"}, cur))
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"backend": map[string]any{"type": "Helm", "terraform": nil,
			"helm": map[string]any{"chartRef": map[string]any{"kind": "HelmChart", "name": "gadget", "namespace": "cozy-system"}}}}})
		must(c.Patch(ctx, cur, client.RawPatch(types.MergePatchType, b)))
		eventually(t, "the kind released", func() error {
			if !r.isReleased(gvk) {
				return fmt.Errorf("not released yet")
			}
			return nil
		})
		// The backing object is not deleted because the definition changed.
		time.Sleep(time.Second)
		if _, err := getCM("p-tenant-p", "g-two"); err != nil {
			t.Fatalf("the backing object went with the definition change: %v", err)
		}
		u, _, err := getGadget("tenant-p", "two")
		must(err)
		must(c.Delete(ctx, u))
		eventually(t, "instance two gone", func() error {
			if _, _, err := getGadget("tenant-p", "two"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		if _, err := getCM("p-tenant-p", "g-two"); !apierrors.IsNotFound(err) {
			t.Fatalf("backing object outlived its instance: %v", err)
		}
	})
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
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind("Gadget"))
	inst.SetNamespace("tenant-a")
	inst.SetName("g")
	inst.SetUID("uid-1")
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
