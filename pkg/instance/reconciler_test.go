package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/testenv"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// configMapBackend is a test backend whose backing objects are ConfigMaps:
// data.spec holds the instance spec as JSON; the test plays the part of the
// backing object's controller with the annotation ready=true.
type configMapBackend struct{}

func (configMapBackend) Type() cozyv1alpha1.BackendType { return cozyv1alpha1.BackendHelm }
func (configMapBackend) TargetGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
}
func (configMapBackend) TargetName(def *Definition, inst *unstructured.Unstructured) string {
	return def.Prefix() + inst.GetName()
}
func (configMapBackend) Build(def *Definition, inst, _ *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(inst.Object["spec"])
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"spec": string(b)}}}, nil
}
func (configMapBackend) ProjectStatus(def *Definition, inst, target *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) {
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	if target != nil && target.GetAnnotations()["ready"] == "true" {
		status.Version = target.GetAnnotations()["version"]
		conditions.MarkReady(h, "Ready", "backing object ready")
		return
	}
	conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "waiting")
}

var (
	env    *testenv.Env
	writes atomic.Int64
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.InfoLevel)))
	var err error
	env, err = testenv.Start(widgetCRD(), appdefCRD())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

func appdefCRD() *apiextensionsv1.CustomResourceDefinition {
	crd, err := testenv.CRDFromFile("api/crds/cozystack.io_applicationdefinitions.yaml")
	if err != nil {
		panic(err)
	}
	return crd
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return testenv.NamespacedCRD("apps.cozystack.io", "v1alpha1",
		apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets", ListKind: "WidgetList", Singular: "widget"}, nil, true)
}

// counting counts the writes a reconciler makes.
type counting struct{ client.Client }

func (c counting) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	writes.Add(1)
	return c.Client.Create(ctx, o, opts...)
}
func (c counting) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	writes.Add(1)
	return c.Client.Update(ctx, o, opts...)
}
func (c counting) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	writes.Add(1)
	return c.Client.Patch(ctx, o, p, opts...)
}
func (c counting) Apply(ctx context.Context, o runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	writes.Add(1)
	return c.Client.Apply(ctx, o, opts...)
}
func (c counting) Delete(ctx context.Context, o client.Object, opts ...client.DeleteOption) error {
	writes.Add(1)
	return c.Client.Delete(ctx, o, opts...)
}
func (c counting) Status() client.SubResourceWriter { return countingStatus{c.Client.Status()} }

type countingStatus struct{ client.SubResourceWriter }

func (c countingStatus) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	writes.Add(1)
	return c.SubResourceWriter.Update(ctx, o, opts...)
}
func (c countingStatus) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	writes.Add(1)
	return c.SubResourceWriter.Patch(ctx, o, p, opts...)
}

// reconciles is how many reconciles the controller called name has
// finished, from controller-runtime's controller_runtime_reconcile_total.
func reconciles(t *testing.T, name string) int {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name {
					n += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return n
}

// eventually waits up to 30 seconds for cond to return nil; on a timeout
// the test fails naming what it waited for and cond's last error.
// testClient is an uncached client of the test API server, with its scheme
// (the built-in kinds, definitions and CRDs), and a check that fails the
// test on an error.
func testClient(t *testing.T) (*runtime.Scheme, client.Client, func(error)) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cozyv1alpha1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return scheme, c, func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// establish creates crd and waits until the API server serves it.
func establish(ctx context.Context, t *testing.T, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	eventually(t, "CRD "+crd.Name+" established", func() error {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established")
	})
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		if err := cond(); err != nil {
			return false, what + ": " + err.Error(), nil
		}
		return true, "", nil
	})
}

// eventsOf lists the events.k8s.io Events in namespace ns about the object
// called name with the given reason.
func eventsOf(ctx context.Context, t *testing.T, c client.Client, ns, name, reason string) []eventsv1.Event {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Name == name && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

func TestGenericReconciler(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme, c, must := testClient(t)

	opts := manager.NewOptions("cozystack-test")
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	backend := configMapBackend{}
	Configure(&opts, backend)
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme, CacheOptions(backend))
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Name: "cozystack-test", Backend: backend, Client: counting{mgr.GetClient()}, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("cozystack-test"), Workers: 2}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}}))

	// The definition, marked served as the appdef controller would.
	def := &cozyv1alpha1.ApplicationDefinition{}
	must(yaml.Unmarshal([]byte(`
metadata: {name: widget}
spec:
  application: {kind: Widget, plural: widgets, singular: widget, openAPISchema: '{"type":"object"}'}
  release:
    prefix: w-
    labels: {platform: "yes"}
    chartRef: {kind: HelmChart, name: widget, namespace: cozy-system}
`), def))
	must(c.Create(ctx, def))
	def.Status.CRDName = "widgets.apps.cozystack.io"
	must(c.Status().Update(ctx, def))

	gvk := appsv1alpha1.GroupVersion.WithKind("Widget")
	newWidget := func(name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("tenant-a")
		u.SetName(name)
		u.SetLabels(map[string]string{"team": "blue"})
		return u
	}
	getCM := func(name string) (*unstructured.Unstructured, error) {
		cm := &unstructured.Unstructured{}
		cm.SetGroupVersionKind(backend.TargetGVK())
		return cm, c.Get(ctx, types.NamespacedName{Namespace: "tenant-a", Name: name}, cm)
	}
	getWidget := func(name string) (*unstructured.Unstructured, *appsv1alpha1.ApplicationStatus) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		must(c.Get(ctx, types.NamespacedName{Namespace: "tenant-a", Name: name}, u))
		st, _ := readStatus(u)
		return u, st
	}

	t.Run("instance becomes a labelled, owned backing object", func(t *testing.T) {
		w := newWidget("one", map[string]any{"size": int64(3)})
		must(c.Create(ctx, w))
		eventually(t, "ConfigMap w-one", func() error {
			cm, err := getCM("w-one")
			if err != nil {
				return err
			}
			want := map[string]string{"platform": "yes", "apps.cozystack.io-team": "blue",
				"apps.cozystack.io/application.kind": "Widget", "apps.cozystack.io/application.group": "apps.cozystack.io",
				"apps.cozystack.io/application.name": "one"}
			for k, v := range want {
				if cm.GetLabels()[k] != v {
					return fmt.Errorf("label %s = %q, want %q", k, cm.GetLabels()[k], v)
				}
			}
			ref := metav1.GetControllerOf(cm)
			if ref == nil || ref.UID != w.GetUID() || ref.Kind != "Widget" {
				return fmt.Errorf("controller reference = %+v", ref)
			}
			if d, _, _ := unstructured.NestedString(cm.Object, "data", "spec"); d != `{"size":3}` {
				return fmt.Errorf("data.spec = %s", d)
			}
			return nil
		})
		eventually(t, "instance Reconciling", func() error {
			_, st := getWidget("one")
			if r := meta.FindStatusCondition(st.Conditions, "Reconciling"); r == nil || r.Status != "True" {
				return fmt.Errorf("conditions %+v", st.Conditions)
			}
			return nil
		})
	})

	t.Run("backing object status is projected", func(t *testing.T) {
		cm, err := getCM("w-one")
		must(err)
		cm.SetAnnotations(map[string]string{"ready": "true", "version": "1.2.3"})
		must(c.Update(ctx, cm))
		eventually(t, "instance Ready", func() error {
			w, st := getWidget("one")
			ready := meta.FindStatusCondition(st.Conditions, "Ready")
			if ready == nil || ready.Status != "True" || st.Version != "1.2.3" || st.ObservedGeneration != w.GetGeneration() {
				return fmt.Errorf("status %+v", st)
			}
			if meta.FindStatusCondition(st.Conditions, "Reconciling") != nil {
				return fmt.Errorf("still Reconciling: %+v", st.Conditions)
			}
			return nil
		})
	})

	t.Run("drift is corrected and other fields survive", func(t *testing.T) {
		cm, err := getCM("w-one")
		must(err)
		must(unstructured.SetNestedField(cm.Object, `{"size":99}`, "data", "spec"))
		must(unstructured.SetNestedField(cm.Object, "someone-else", "data", "extra"))
		must(c.Update(ctx, cm))
		eventually(t, "drift corrected", func() error {
			cm, err := getCM("w-one")
			if err != nil {
				return err
			}
			if d, _, _ := unstructured.NestedString(cm.Object, "data", "spec"); d != `{"size":3}` {
				return fmt.Errorf("data.spec = %s", d)
			}
			if d, _, _ := unstructured.NestedString(cm.Object, "data", "extra"); d != "someone-else" {
				return fmt.Errorf("a field we do not manage was dropped: extra = %q", d)
			}
			return nil
		})
	})

	t.Run("a foreign object with the derived name is left alone", func(t *testing.T) {
		foreign := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"mine": "yes"}}}
		foreign.SetGroupVersionKind(backend.TargetGVK())
		foreign.SetNamespace("tenant-a")
		foreign.SetName("w-two")
		must(c.Create(ctx, foreign))
		must(c.Create(ctx, newWidget("two", map[string]any{})))
		eventually(t, "instance two stalled", func() error {
			_, st := getWidget("two")
			ready := meta.FindStatusCondition(st.Conditions, "Ready")
			if ready == nil || ready.Reason != appsv1alpha1.ReasonBackingObjectNotOwned || !strings.Contains(ready.Message, "ConfigMap tenant-a/w-two already exists") {
				return fmt.Errorf("Ready = %+v", ready)
			}
			return nil
		})
		if n := testutil.ToFloat64(takeoverRefusalsTotal.WithLabelValues("cozystack-test", "Widget")); n < 1 {
			t.Fatalf("cozystack_takeover_refusals_total = %v, want at least 1", n)
		}
		cm, err := getCM("w-two")
		must(err)
		if len(cm.GetOwnerReferences()) != 0 || cm.GetLabels() != nil || cm.Object["data"].(map[string]any)["mine"] != "yes" || len(cm.Object["data"].(map[string]any)) != 1 {
			t.Fatalf("foreign object was modified: %+v", cm.Object)
		}
	})

	t.Run("a definition change reaches every backing object", func(t *testing.T) {
		cur := &cozyv1alpha1.ApplicationDefinition{}
		must(c.Get(ctx, types.NamespacedName{Name: "widget"}, cur))
		cur.Spec.Release.Labels = map[string]string{"tier": "gold"}
		must(c.Update(ctx, cur))
		eventually(t, "new labels on w-one", func() error {
			cm, err := getCM("w-one")
			if err != nil {
				return err
			}
			if cm.GetLabels()["tier"] != "gold" {
				return fmt.Errorf("labels %v", cm.GetLabels())
			}
			if _, ok := cm.GetLabels()["platform"]; ok {
				return fmt.Errorf("a label the definition dropped is still there: %v", cm.GetLabels())
			}
			return nil
		})
		// The instance was settled at its generation: the update is the
		// platform's, recorded once on the definition, not on the instance.
		eventually(t, "an InstancesUpdated event on the definition", func() error {
			if n := len(eventsOf(ctx, t, c, metav1.NamespaceDefault, "widget", cozyv1alpha1.EventInstancesUpdated)); n != 1 {
				return fmt.Errorf("%d events", n)
			}
			return nil
		})
		if evs := eventsOf(ctx, t, c, "tenant-a", "one", appsv1alpha1.EventUpdated); len(evs) != 0 {
			t.Fatalf("the instance has an Updated event for a change of its definition: %q", evs[0].Note)
		}
	})

	t.Run("a change of the instance is recorded on the instance", func(t *testing.T) {
		w, _ := getWidget("one")
		must(unstructured.SetNestedField(w.Object, int64(4), "spec", "size"))
		must(c.Update(ctx, w))
		eventually(t, "an Updated event on the instance", func() error {
			evs := eventsOf(ctx, t, c, "tenant-a", "one", appsv1alpha1.EventUpdated)
			if len(evs) != 1 {
				return fmt.Errorf("%d events", len(evs))
			}
			if want := "updated ConfigMap w-one to the desired state"; evs[0].Note != want {
				return fmt.Errorf("note %q, want %q", evs[0].Note, want)
			}
			return nil
		})
		cm, err := getCM("w-one")
		must(err)
		if d, _, _ := unstructured.NestedString(cm.Object, "data", "spec"); d != `{"size":4}` {
			t.Fatalf("data.spec = %s", d)
		}
	})

	t.Run("writes are counted", func(t *testing.T) {
		if n := writemetric.Counted("cozystack-test", "Widget", "created"); n < 1 {
			t.Fatalf("created = %v, want at least 1", n)
		}
		if n := writemetric.Counted("cozystack-test", "Widget", "corrected"); n < 1 {
			t.Fatalf("corrected = %v, want at least 1 (the drift test)", n)
		}
		if n := testutil.ToFloat64(servedKinds.WithLabelValues("cozystack-test")); n != 1 {
			t.Fatalf("served kinds = %v, want 1", n)
		}
	})

	// touchAndHoldStill lets in-flight reconciles finish (no write for a
	// second), touches the definition without changing what it asks for, so
	// every instance is reconciled again, and fails on any write those
	// reconciles, or anything after them for three seconds, make.
	touchAndHoldStill := func(t *testing.T, when string) {
		t.Helper()
		before := int64(testenv.Settled(t, 30*time.Second, time.Second, func() int { return int(writes.Load()) }))
		instances := &unstructured.UnstructuredList{}
		instances.SetGroupVersionKind(gvk.GroupVersion().WithKind("WidgetList"))
		must(c.List(ctx, instances))
		reconciled := reconciles(t, "cozystack-test")
		cur := &cozyv1alpha1.ApplicationDefinition{}
		must(c.Get(ctx, types.NamespacedName{Name: "widget"}, cur))
		cur.Annotations = map[string]string{"touched": time.Now().String()}
		must(c.Update(ctx, cur))
		testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
			n := reconciles(t, "cozystack-test") - reconciled
			return n >= len(instances.Items), fmt.Sprintf("%d reconciles since the touch, want one for each of the %d instances", n, len(instances.Items)), nil
		})
		testenv.Consistently(t, 3*time.Second, func() (bool, string, error) {
			n := writes.Load() - before
			return n == 0, fmt.Sprintf("%d writes after a no-op definition change %s", n, when), nil
		})
	}

	t.Run("a settled system writes nothing", func(t *testing.T) {
		touchAndHoldStill(t, "at rest")
	})

	t.Run("deleting an instance deletes its backing object", func(t *testing.T) {
		// No garbage collector runs here: only the reconciler can delete
		// the backing objects. It deletes one controlled by the instance
		// alone, and leaves to the collector one with another owner and one
		// whose controller reference was taken off (as an orphaning
		// deletion does before the instance goes).
		anchor := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "anchor"}}
		must(c.Create(ctx, anchor))
		for _, name := range []string{"shared", "orphaned", "alone"} {
			must(c.Create(ctx, newWidget(name, map[string]any{"size": int64(1)})))
			eventually(t, "ConfigMap w-"+name, func() error { _, err := getCM("w-" + name); return err })
		}
		// Once the new instances have settled, the owner changes below are
		// the backing objects' last: another owner's reference is no drift
		// to correct, and an object without our controller reference is
		// not ours to write.
		testenv.Settled(t, 30*time.Second, time.Second, func() int { return int(writes.Load()) })
		shared, _ := getCM("w-shared")
		shared.SetOwnerReferences(append(shared.GetOwnerReferences(), metav1.OwnerReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: anchor.Name, UID: anchor.UID}))
		must(c.Update(ctx, shared))
		orphaned, _ := getCM("w-orphaned")
		orphaned.SetOwnerReferences(nil)
		must(c.Update(ctx, orphaned))
		// The reconciler's cache must hold those updates before the
		// instances go, as the collector's orphaning comes before.
		for _, cm := range []*unstructured.Unstructured{shared, orphaned} {
			eventually(t, "the cache to hold "+cm.GetName()+"'s owners", func() error {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(backend.TargetGVK())
				if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
					return err
				}
				if got.GetResourceVersion() != cm.GetResourceVersion() {
					return fmt.Errorf("at version %s, want %s", got.GetResourceVersion(), cm.GetResourceVersion())
				}
				return nil
			})
		}
		// Reconciled again (the definition touched), neither is written:
		// the other owner's reference is no drift to correct, and the
		// orphaned object is no longer ours.
		touchAndHoldStill(t, "after another owner's reference was added and an orphaning")
		// Deleted in this order, the watch hears of the first two before
		// the last: once w-alone is gone, their deletions are known.
		for _, name := range []string{"one", "shared", "orphaned", "alone"} {
			w, _ := getWidget(name)
			must(c.Delete(ctx, w))
		}
		for _, name := range []string{"w-one", "w-alone"} {
			eventually(t, name+" to be deleted", func() error {
				if _, err := getCM(name); !apierrors.IsNotFound(err) {
					return fmt.Errorf("still there (%v)", err)
				}
				return nil
			})
		}
		for _, name := range []string{"shared", "orphaned"} {
			req := dynamicwatch.Request{GVK: gvk, NamespacedName: types.NamespacedName{Namespace: "tenant-a", Name: name}}
			eventually(t, "the reconcile of deleted instance "+name, func() error {
				if _, ok := r.deleted.Load(req); ok {
					return errors.New("not yet")
				}
				return nil
			})
			if _, err := getCM("w-" + name); err != nil {
				t.Errorf("w-%s: %v; want it left to the garbage collector", name, err)
			}
		}
	})

	t.Run("a backing object deleted with its namespace is not created again", func(t *testing.T) {
		// No namespace controller runs here: a deleted namespace stays
		// Terminating, and the test deletes the backing objects and then
		// the instances itself, as that controller may.
		const ns = "tenant-going"
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		var leaving []*unstructured.Unstructured
		var cms []*unstructured.Unstructured
		for i := range 3 {
			w := newWidget(fmt.Sprintf("leaving-%d", i), map[string]any{"size": int64(1)})
			w.SetNamespace(ns)
			must(c.Create(ctx, w))
			cm := &unstructured.Unstructured{}
			cm.SetGroupVersionKind(backend.TargetGVK())
			eventually(t, "ConfigMap w-"+w.GetName(), func() error {
				return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w-" + w.GetName()}, cm)
			})
			leaving, cms = append(leaving, w), append(cms, cm)
		}
		before := int64(testenv.Settled(t, 30*time.Second, time.Second, func() int { return int(writes.Load()) }))
		for _, w := range leaving {
			must(c.Get(ctx, client.ObjectKeyFromObject(w), w))
		}
		must(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		reconciledAfter := func(what string, n int, deleted ...*unstructured.Unstructured) {
			t.Helper()
			reconciled := reconciles(t, "cozystack-test")
			for _, o := range deleted {
				must(c.Delete(ctx, o))
			}
			testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
				got := reconciles(t, "cozystack-test") - reconciled
				return got >= n, fmt.Sprintf("%d reconciles since %s, want %d", got, what, n), nil
			})
		}
		// The first instance's create is refused; the others', a moment
		// later, are not sent.
		reconciledAfter("the first backing object was deleted", 1, cms[0])
		reconciledAfter("the others were deleted", 2, cms[1:]...)
		// Nor is any status written on an instance that goes with its
		// namespace.
		for _, w := range leaving {
			after := w.DeepCopy()
			must(c.Get(ctx, client.ObjectKeyFromObject(w), after))
			if after.GetResourceVersion() != w.GetResourceVersion() {
				st, _ := readStatus(after)
				t.Fatalf("instance %s was written (status %+v)", w.GetName(), st)
			}
		}
		// The instances go, as the namespace controller deletes them: the
		// ones held find nothing to do when they are looked at again.
		reconciledAfter("the instances were deleted", 3, leaving...)
		testenv.Settled(t, 30*time.Second, 3*time.Second, func() int { return int(writes.Load()) })
		if n := writes.Load() - before; n != 1 {
			t.Fatalf("%d writes after the backing objects went with their namespace, want the one refused create", n)
		}
	})
}
