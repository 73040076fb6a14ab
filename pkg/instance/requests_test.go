package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/ownership"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// requestLog counts the reads (GET and LIST, watches aside) a client sends,
// by verb and resource: "list configmaps", "get gizmos"; and its writes, by
// method and resource with its subresource: "DELETE configmaps",
// "PATCH gizmos", "PUT gizmos/status", "POST events".
type requestLog struct {
	mu     sync.Mutex
	reads  map[string]int
	writes map[string]int
}

// wrap counts the requests sent through next.
func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		l.count(req)
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (l *requestLog) count(req *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if req.Method == http.MethodGet {
		if verb, resource, ok := ReadOf(req.URL.Path); ok && req.URL.Query().Get("watch") != "true" {
			l.reads[verb+" "+resource]++
		}
		return
	}
	if resource, ok := writeOf(req.URL.Path); ok {
		if l.writes == nil {
			l.writes = map[string]int{}
		}
		l.writes[req.Method+" "+resource]++
	}
}

// takeWrites returns the writes counted since the last takeWrites.
func (l *requestLog) takeWrites() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.writes
	l.writes = map[string]int{}
	return out
}

// take returns the reads counted since the last take.
func (l *requestLog) take() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reads
	l.reads = map[string]int{}
	return out
}

// ReadOf names the verb (get or list) and resource of a GET of the API
// server's path: /api/v1/namespaces/ns/configmaps is a list of configmaps,
// /apis/g/v/namespaces/ns/gizmos/x a get of gizmos, /api/v1/namespaces/x a
// get of namespaces. False for a path that is no resource's.
func ReadOf(path string) (verb, resource string, ok bool) {
	segs, ok := resourceSegments(path)
	switch {
	case !ok:
		return "", "", false
	case len(segs) == 1:
		return "list", segs[0], true
	}
	return "get", segs[0], true
}

// writeOf names the resource a write to the API server's path is sent to,
// with its subresource: /apis/g/v/namespaces/ns/gizmos/x/status is
// "gizmos/status", /apis/events.k8s.io/v1/namespaces/ns/events "events".
func writeOf(path string) (string, bool) {
	segs, ok := resourceSegments(path)
	switch {
	case !ok:
		return "", false
	case len(segs) == 3:
		return segs[0] + "/" + segs[2], true
	}
	return segs[0], true
}

// resourceSegments is the part of an API path after its group, version and
// namespace: the resource, then its name and subresource if any.
func resourceSegments(path string) ([]string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		return nil, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	return segs, len(segs) >= 1 && len(segs) <= 3
}

func TestReadOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns/configmaps":                              "list configmaps",
		"/api/v1/configmaps":                                            "list configmaps",
		"/api/v1/namespaces/ns/configmaps/x":                            "get configmaps",
		"/api/v1/namespaces":                                            "list namespaces",
		"/api/v1/namespaces/x":                                          "get namespaces",
		"/apis/apps.cozystack.io/v1alpha1/namespaces/n/gizmos/g":        "get gizmos",
		"/apis/apps.cozystack.io/v1alpha1/namespaces/n/gizmos/g/status": "get gizmos",
		"/apis/apps.cozystack.io/v1alpha1/gizmos":                       "list gizmos",
		"/healthz": "",
	} {
		if w, ok := writeOf(path); ok != (want != "") || ok && w != strings.Fields(want)[1] && w != "gizmos/status" {
			t.Errorf("writeOf(%s) = %q %v", path, w, ok)
		}
		verb, resource, ok := ReadOf(path)
		got := strings.TrimSpace(verb + " " + resource)
		if got != want || ok != (want != "") {
			t.Errorf("ReadOf(%s) = %q %v, want %q", path, got, ok, want)
		}
	}
}

func TestOwnerKeyOwnsOrphan(t *testing.T) {
	inst := testInstance("Gizmo", "tenant-a", "one", "uid-1")
	platform := func(uid string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "p-tenant-a", Name: "g-one", Labels: map[string]string{
			appsv1alpha1.LabelApplicationKind: "Gizmo", appsv1alpha1.LabelApplicationName: "one",
			appsv1alpha1.LabelApplicationNamespace: "tenant-a", appsv1alpha1.LabelApplicationUID: uid}}}
	}
	legacy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "g-one", Labels: map[string]string{
		appsv1alpha1.LabelApplicationKind: "Gizmo", appsv1alpha1.LabelApplicationName: "one"},
		OwnerReferences: []metav1.OwnerReference{ownership.ControllerRef(ownerOf(inst))}}}
	stranger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "g-one", Labels: map[string]string{
		appsv1alpha1.LabelApplicationKind: "Gizmo", appsv1alpha1.LabelApplicationName: "one"}}}
	// An object elsewhere whose ownerReference names the instance is not its:
	// an ownerReference does not cross namespaces.
	elsewhere := legacy.DeepCopy()
	elsewhere.Namespace = "tenant-b"
	unlabelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "g-one"}}
	going := platform("uid-0")
	going.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	going.Finalizers = []string{"x"}
	req := dynamicwatch.Request{GVK: inst.GroupVersionKind(), NamespacedName: types.NamespacedName{Namespace: "tenant-a", Name: "one"}}
	for _, tc := range []struct {
		name   string
		o      client.Object
		key    string
		owns   bool
		orphan bool
	}{
		{"in the platform namespace", platform("uid-1"), "Gizmo/tenant-a/one", true, true},
		{"an earlier instance's", platform("uid-0"), "Gizmo/tenant-a/one", false, true},
		{"no uid label", platform(""), "Gizmo/tenant-a/one", false, false},
		{"being deleted", going, "Gizmo/tenant-a/one", false, false},
		{"legacy, next to its instance", legacy, "Gizmo/tenant-a/one", true, false},
		{"next to the instance, not controlled", stranger, "Gizmo/tenant-a/one", false, false},
		{"controlled, in another namespace", elsewhere, "Gizmo/tenant-b/one", false, false},
		{"no application labels", unlabelled, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := OwnerKeyOf(tc.o); got != tc.key || ok != (tc.key != "") {
				t.Errorf("OwnerKeyOf = %q %v, want %q", got, ok, tc.key)
			}
			if got := Owns(tc.o, inst); got != tc.owns {
				t.Errorf("Owns = %v, want %v", got, tc.owns)
			}
			if got := Orphan(tc.o, req); got != tc.orphan {
				t.Errorf("Orphan = %v, want %v", got, tc.orphan)
			}
		})
	}
}

// TestPlatformRequests counts the reads the reconciler of a platform-namespace
// backend (as the Terraform backend) sends to the API server: none per
// instance when a definition change reaches every backing object, and none
// per instance deleted (no LIST, no GET), however many objects the cluster
// holds. Only an orphan costs one read: the GET that confirms its instance
// is gone before anything is deleted.
func TestPlatformRequests(t *testing.T) {
	const n = 12
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme, c, must := testClient(t)
	crd := widgetCRD()
	crd.Name = "gizmos.apps.cozystack.io"
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gizmo", Plural: "gizmos", ListKind: "GizmoList", Singular: "gizmo"}
	establish(ctx, t, c, crd)
	tenants := []string{"tenant-r1", "tenant-r2"}
	for _, ns := range tenants {
		must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	def := &cozyv1alpha1.ApplicationDefinition{}
	must(yaml.Unmarshal([]byte(`
metadata: {name: gizmo}
spec:
  application: {kind: Gizmo, plural: gizmos, singular: gizmo, openAPISchema: '{"type":"object"}'}
  backend:
    type: Terraform
    terraform:
      prefix: z-
      labels: {tier: bronze}
      sourceRef: {kind: OCIRepository, name: gizmo, namespace: cozy-system}
`), def))
	must(c.Create(ctx, def))
	defer func() { _ = c.Delete(context.Background(), def) }()
	def.Status.CRDName = crd.Name
	must(c.Status().Update(ctx, def))

	// The reconciler's manager sends every request through reads.
	reads := &requestLog{reads: map[string]int{}}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = reads.wrap
	opts := manager.NewOptions("cozystack-requests-test")
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	backend := platformBackend{}
	Configure(&opts, backend)
	mgr, err := manager.NewWithConfig(opts, cfg, scheme, CacheOptions(backend))
	must(err)
	r := &Reconciler{Name: "cozystack-requests-test", Backend: backend, Components: backend.components(), Client: mgr.GetClient(),
		APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("cozystack-requests-test"), Workers: 4}
	must(r.SetupWithManager(mgr))
	go func() { _ = mgr.Start(ctx) }()

	gvk := appsv1alpha1.GroupVersion.WithKind("Gizmo")
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	var instances []*unstructured.Unstructured
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(i)}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(tenants[i%len(tenants)])
		u.SetName(fmt.Sprintf("g%d", i))
		must(c.Create(ctx, u))
		instances = append(instances, u)
	}
	// backing reports how many backing objects carry label tier=tier, and
	// how many there are.
	backing := func(tier string) (int, int) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(cmGVK.GroupVersion().WithKind("ConfigMapList"))
		must(c.List(ctx, list, client.MatchingLabels{appsv1alpha1.LabelApplicationKind: "Gizmo"}))
		with := 0
		for _, o := range list.Items {
			if o.GetLabels()["tier"] == tier {
				with++
			}
		}
		return with, len(list.Items)
	}
	settled := func(tier string) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d backing objects with tier=%s and instances with a status", n, tier), func() error {
			if with, _ := backing(tier); with != n {
				return fmt.Errorf("%d of %d", with, n)
			}
			for _, u := range instances {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(gvk)
				if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
					return err
				}
				if st, _ := readStatus(got); st.ObservedGeneration == 0 {
					return fmt.Errorf("%s has no status yet", u.GetName())
				}
			}
			return nil
		})
		// Done means nothing more happens: the reconciles the writes
		// brought have run.
		testenv.Settled(t, 20*time.Second, time.Second, func() int { return reconciles(t, "cozystack-requests-test") })
	}
	settled("bronze")

	// relabel changes the definition's labels, which every backing object
	// carries, and waits until each has them; it returns the reads sent.
	relabel := func(tier string) map[string]int {
		t.Helper()
		reads.take()
		cur := &cozyv1alpha1.ApplicationDefinition{}
		must(c.Get(ctx, types.NamespacedName{Name: "gizmo"}, cur))
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"backend": map[string]any{"terraform": map[string]any{"labels": map[string]any{"tier": tier}}}}})
		must(c.Patch(ctx, cur, client.RawPatch(types.MergePatchType, b)))
		settled(tier)
		got := reads.take()
		t.Logf("reads while %d instances followed a definition change to tier=%s: %s", n, tier, sorted(got))
		return got
	}

	t.Run("a backing object deleted by someone else is made again with no read", func(t *testing.T) {
		// Settled: every backing object is in the cache, and none is
		// remembered as missing from it (uncached).
		left := 0
		r.uncached.Range(func(any, any) bool { left++; return true })
		if left != 0 {
			t.Errorf("%d backing objects remembered as not cached yet after every one was seen, want none", left)
		}
		reads.take()
		gone := &corev1.ConfigMap{}
		must(c.Get(ctx, types.NamespacedName{Namespace: backend.TargetNamespace(tenants[0]), Name: "z-" + instances[0].GetName()}, gone))
		must(c.Delete(ctx, gone))
		eventually(t, "the backing object made again", func() error {
			again := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(gone), again); err != nil {
				return err
			}
			if again.UID == gone.UID {
				return fmt.Errorf("not deleted yet")
			}
			return nil
		})
		testenv.Settled(t, 20*time.Second, time.Second, func() int { return reconciles(t, "cozystack-requests-test") })
		got := reads.take()
		t.Logf("reads while a deleted backing object was made again: %s", sorted(got))
		if got["get configmaps"]+got["list configmaps"] != 0 {
			t.Fatalf("reads of backing objects: %v, want none: the cache saw it go", sorted(got))
		}
	})

	t.Run("a definition change reaches every backing object with no read of the API server but the one hand-over", func(t *testing.T) {
		// The first apply to an object made by a plain create hands the
		// create's fields to the apply entry, reading them from the API
		// server (the cache drops managed fields): once per object, twice
		// for one whose hand-over met a change and was tried again.
		if got := relabel("gold"); got["get configmaps"] > 2*n || got["list configmaps"]+got["get gizmos"]+got["list gizmos"] != 0 {
			t.Fatalf("reads of backing objects or instances: %v, want at most the hand-over's GETs, about one per object", sorted(got))
		}
		before := reconciles(t, "cozystack-requests-test")
		if got := relabel("platinum"); got["get configmaps"]+got["list configmaps"]+got["get gizmos"]+got["list gizmos"] != 0 {
			t.Fatalf("reads of backing objects or instances: %v, want none", sorted(got))
		}
		// One reconcile an instance, the one the definition's change
		// enqueued: the watch event of the controller's own write of each
		// backing object is its echo, and enqueues nothing.
		if got := reconciles(t, "cozystack-requests-test") - before; got != n {
			t.Fatalf("%d reconciles for a definition change at %d instances, want %d", got, n, n)
		}
	})

	t.Run("an orphan costs one read, the GET that confirms its instance is gone", func(t *testing.T) {
		reads.take()
		ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: backend.TargetNamespace(tenants[0]), Name: "z-ghost", Labels: map[string]string{
			appsv1alpha1.LabelApplicationKind: "Gizmo", appsv1alpha1.LabelApplicationGroup: "apps.cozystack.io", appsv1alpha1.LabelApplicationName: "ghost",
			appsv1alpha1.LabelApplicationNamespace: tenants[0], appsv1alpha1.LabelApplicationUID: "gone-uid"}}}
		must(c.Create(ctx, ghost))
		eventually(t, "the orphan deleted", func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(ghost), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		testenv.Settled(t, 20*time.Second, time.Second, func() int { return reconciles(t, "cozystack-requests-test") })
		got := reads.take()
		t.Logf("reads for one orphan: %s", sorted(got))
		if got["get gizmos"] < 1 || got["list configmaps"]+got["get configmaps"]+got["list gizmos"] != 0 {
			t.Fatalf("reads for one orphan: %v, want the instance's GET and no other read of instances or backing objects", sorted(got))
		}
	})

	// deleteAll deletes instances and waits until they and their backing
	// objects are gone and nothing more happens; it returns the reads and
	// the writes sent meanwhile.
	deleteAll := func(t *testing.T, instances []*unstructured.Unstructured) (map[string]int, map[string]int) {
		t.Helper()
		reads.take()
		reads.takeWrites()
		for _, u := range instances {
			must(c.Delete(ctx, u))
		}
		eventually(t, "every instance and its backing object gone", func() error {
			for _, u := range instances {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(gvk)
				if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); !apierrors.IsNotFound(err) {
					return fmt.Errorf("instance %s still there: %v", u.GetName(), err)
				}
				cm := &corev1.ConfigMap{}
				key := types.NamespacedName{Namespace: backend.TargetNamespace(u.GetNamespace()), Name: "z-" + u.GetName()}
				if err := c.Get(ctx, key, cm); !apierrors.IsNotFound(err) {
					return fmt.Errorf("backing object %s still there: %v", key, err)
				}
			}
			return nil
		})
		testenv.Settled(t, 20*time.Second, time.Second, func() int { return reconciles(t, "cozystack-requests-test") })
		return reads.take(), reads.takeWrites()
	}

	t.Run("deleting instances that hold no finalizer costs the deletes of their backing objects alone", func(t *testing.T) {
		half := instances[:n/2]
		for _, u := range half {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(gvk)
			must(c.Get(ctx, client.ObjectKeyFromObject(u), got))
			if len(got.GetFinalizers()) != 0 {
				t.Fatalf("instance %s of a definition that does not destroy holds finalizers %v", u.GetName(), got.GetFinalizers())
			}
		}
		got, writes := deleteAll(t, half)
		t.Logf("reads and writes while %d instances with no finalizer were deleted: %s; %s", len(half), sorted(got), sorted(writes))
		// The watch saw each instance go: no GET confirms it.
		if got["get configmaps"]+got["list configmaps"]+got["get gizmos"]+got["list gizmos"] != 0 {
			t.Fatalf("reads of backing objects or instances while %d instances were deleted: %v", len(half), sorted(got))
		}
		if want := map[string]int{"DELETE configmaps": len(half)}; fmt.Sprint(writes) != fmt.Sprint(want) {
			t.Fatalf("writes while %d instances were deleted: %v, want %v", len(half), sorted(writes), sorted(want))
		}
	})

	t.Run("deleting instances held by the finalizer sends no LIST and no GET", func(t *testing.T) {
		rest := instances[n/2:]
		// The definition now destroys on deletion: its instances get the
		// finalizer.
		cur := &cozyv1alpha1.ApplicationDefinition{}
		must(c.Get(ctx, types.NamespacedName{Name: "gizmo"}, cur))
		must(c.Patch(ctx, cur, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"backend":{"terraform":{"destroyResourcesOnDeletion":true}}}}`))))
		eventually(t, "the finalizer on every instance left", func() error {
			for _, u := range rest {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(gvk)
				if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
					return err
				}
				if !slices.Contains(got.GetFinalizers(), testFinalizer) {
					return fmt.Errorf("instance %s: finalizers %v", u.GetName(), got.GetFinalizers())
				}
			}
			return nil
		})
		testenv.Settled(t, 20*time.Second, time.Second, func() int { return reconciles(t, "cozystack-requests-test") })
		got, writes := deleteAll(t, rest)
		t.Logf("reads and writes while %d instances were deleted: %s; %s", len(rest), sorted(got), sorted(writes))
		if got["get configmaps"]+got["list configmaps"]+got["get gizmos"]+got["list gizmos"] != 0 {
			t.Fatalf("reads of backing objects or instances while %d instances were deleted: %v", len(rest), sorted(got))
		}
		// No finalizer holds a backing object here, so each goes at its
		// DELETE and its instance's finalizer comes off in the same pass:
		// no Deleting status to write, no event, no second reconcile.
		if want := map[string]int{"DELETE configmaps": len(rest), "PATCH gizmos": len(rest)}; fmt.Sprint(writes) != fmt.Sprint(want) {
			t.Fatalf("writes while %d instances were deleted: %v, want %v", len(rest), sorted(writes), sorted(want))
		}
	})
}

func sorted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}
