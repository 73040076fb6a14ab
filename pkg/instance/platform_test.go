package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

func TestPlatformNamespace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme, c, must := testClient(t)
	establish(ctx, t, c, gadgetCRD())
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
      destroyResourcesOnDeletion: true
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
	Configure(&opts, backend)
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme, CacheOptions(backend))
	must(err)
	r := &Reconciler{Name: "cozystack-platform-test", Backend: backend, Components: backend.components(), Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("cozystack-platform-test"), Workers: 2}
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
		if !slices.Contains(u.GetFinalizers(), testFinalizer) {
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
		for _, name := range []string{"two", "four"} {
			must(c.Create(ctx, newGadget("tenant-p", name)))
			eventually(t, "ConfigMap p-tenant-p/g-"+name, func() error { _, err := getCM("p-tenant-p", "g-"+name); return err })
		}
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
		// The backing object is not deleted because the definition changed:
		// given a second to go, it stays.
		testenv.Consistently(t, time.Second, func() (bool, string, error) {
			if _, err := getCM("p-tenant-p", "g-two"); err != nil {
				return false, fmt.Sprintf("the backing object went with the definition change: %v", err), nil
			}
			return true, "", nil
		})
		// four goes without the finalizer (a tenant took it off, or its
		// definition never destroyed): its backing object goes after it.
		four, _, err := getGadget("tenant-p", "four")
		must(err)
		must(c.Patch(ctx, four, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
		for _, name := range []string{"two", "four"} {
			u, _, err := getGadget("tenant-p", name)
			must(err)
			must(c.Delete(ctx, u))
			eventually(t, "instance "+name+" gone", func() error {
				if _, _, err := getGadget("tenant-p", name); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there: %v", err)
				}
				return nil
			})
		}
		// two's finalizer held it until its backing object was gone.
		if _, err := getCM("p-tenant-p", "g-two"); !apierrors.IsNotFound(err) {
			t.Fatalf("backing object outlived its instance: %v", err)
		}
		eventually(t, "four's backing object deleted after it", func() error {
			if _, err := getCM("p-tenant-p", "g-four"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})
}
