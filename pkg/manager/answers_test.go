package manager

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// The package's tests that need an API server share one, started by the
// first of them.
var (
	sharedEnv     *testenv.Env
	sharedEnvErr  error
	sharedEnvOnce sync.Once
)

func apiServer(t testing.TB) *testenv.Env {
	t.Helper()
	sharedEnvOnce.Do(func() { sharedEnv, sharedEnvErr = testenv.Start(gadgetCRD()) })
	if sharedEnvErr != nil {
		t.Fatal(sharedEnvErr)
	}
	return sharedEnv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEnv != nil {
		_ = sharedEnv.Stop()
	}
	os.Exit(code)
}

// gadgetCRD is a namespaced custom resource with a status subresource and a
// defaulted spec field, so an answer that carried the object would show the
// default.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"}
	return testenv.NamespacedCRD("answers.test", "v1", names, ptr.To(obj(map[string]apiextensionsv1.JSONSchemaProps{
		"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{
			"color": {Type: "string"},
			"size":  {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("3")}},
			"extra": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		}),
		"status": obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}}),
	})), true)
}

// answerClients returns a plain client of the shared API server and a
// MetadataAnswers client around it.
func answerClients(t testing.TB) (plain, lean client.Client) {
	t.Helper()
	env := apiServer(t)
	plain, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lean, err = MetadataAnswers(plain, env.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	return plain, lean
}

func gadget(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "answers.test/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"color": "red"},
	}}
	return u
}

// TestMetadataAnswers writes through a MetadataAnswers client to a real API
// server: the writes land as sent (field manager included), the object
// carries the server's metadata and nothing else of the answer, and the API
// server's refusals come back as the usual errors.
func TestMetadataAnswers(t *testing.T) {
	plain, c := answerClients(t)
	ctx := context.Background()
	stored := func(name string) *unstructured.Unstructured {
		t.Helper()
		u := gadget(name)
		if err := plain.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	managers := func(u *unstructured.Unstructured) string {
		s := ""
		for _, e := range u.GetManagedFields() {
			s += fmt.Sprintf("%s/%s/%s ", e.Manager, e.Operation, e.Subresource)
		}
		return s
	}

	u := gadget("one")
	if err := c.Create(ctx, u, client.FieldOwner("maker")); err != nil {
		t.Fatal(err)
	}
	got := stored("one")
	if u.GetUID() == "" || u.GetUID() != got.GetUID() || u.GetResourceVersion() != got.GetResourceVersion() ||
		u.GetGeneration() != got.GetGeneration() || !u.GetCreationTimestamp().Time.Equal(got.GetCreationTimestamp().Time) {
		t.Errorf("after the create the object carries uid %q rv %q generation %d created %v; the server holds %q %q %d %v",
			u.GetUID(), u.GetResourceVersion(), u.GetGeneration(), u.GetCreationTimestamp(),
			got.GetUID(), got.GetResourceVersion(), got.GetGeneration(), got.GetCreationTimestamp())
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Errorf("the server did not default spec.size: %v", got.Object["spec"])
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "size"); found {
		t.Errorf("the answer's spec was read back: %v", u.Object["spec"])
	}
	if m := managers(got); m != "maker/Update/ " {
		t.Errorf("managed fields after the create: %q, want maker's create", m)
	}

	if err := c.Create(ctx, gadget("one")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("a second create of the name: %v, want AlreadyExists", err)
	}

	before := u.GetResourceVersion()
	u.Object["status"] = map[string]any{"phase": "Running"}
	if err := c.Status().Update(ctx, u, client.FieldOwner("reporter")); err != nil {
		t.Fatal(err)
	}
	got = stored("one")
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Running" {
		t.Errorf("status after the update: %v", got.Object["status"])
	}
	if u.GetResourceVersion() == before || u.GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("after the status update the object carries rv %q (was %q); the server holds %q", u.GetResourceVersion(), before, got.GetResourceVersion())
	}
	if m := managers(got); m != "maker/Update/ reporter/Update/status " {
		t.Errorf("managed fields after the status update: %q", m)
	}

	// A status merge patch, at the version read.
	patched := gadget("one")
	delete(patched.Object, "spec")
	read := u.GetResourceVersion()
	body := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"phase":"Done"}}`, read)
	if err := c.Status().Patch(ctx, patched, client.RawPatch(types.MergePatchType, []byte(body)), client.FieldOwner("patcher")); err != nil {
		t.Fatal(err)
	}
	got = stored("one")
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Done" {
		t.Errorf("status after the patch: %v", got.Object["status"])
	}
	if patched.GetResourceVersion() == read || patched.GetResourceVersion() != got.GetResourceVersion() || patched.GetUID() != got.GetUID() {
		t.Errorf("after the status patch the object carries rv %q uid %q; the server holds %q %q", patched.GetResourceVersion(), patched.GetUID(),
			got.GetResourceVersion(), got.GetUID())
	}
	if _, found := patched.Object["spec"]; found {
		t.Errorf("the patch's answer was read back: %v", patched.Object)
	}
	if m := managers(got); m != "maker/Update/ patcher/Update/status reporter/Update/status " {
		t.Errorf("managed fields after the status patch: %q", m)
	}
	if err := c.Status().Patch(ctx, gadget("one"), client.RawPatch(types.MergePatchType, []byte(body))); !apierrors.IsConflict(err) {
		t.Errorf("a status patch at a stale version: %v, want Conflict", err)
	}
	if err := c.Status().Patch(ctx, gadget("absent"), client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"x"}}`))); !apierrors.IsNotFound(err) {
		t.Errorf("a status patch of an absent object: %v, want NotFound", err)
	}

	stale := got.DeepCopy()
	stale.SetResourceVersion(before)
	stale.Object["status"] = map[string]any{"phase": "Stale"}
	if err := c.Status().Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("a status update of a stale version: %v, want Conflict", err)
	}
	if err := c.Status().Update(ctx, gadget("absent")); !apierrors.IsNotFound(err) {
		t.Errorf("a status update of an absent object: %v, want NotFound", err)
	}
	bad := gadget("bad")
	bad.Object["spec"] = map[string]any{"size": "large"}
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("a create the schema refuses: %v, want Invalid", err)
	}
	if err := c.Create(ctx, gadget("dry"), client.DryRunAll); err != nil {
		t.Errorf("a dry-run create: %v", err)
	} else if err := plain.Get(ctx, client.ObjectKeyFromObject(gadget("dry")), gadget("dry")); !apierrors.IsNotFound(err) {
		t.Errorf("a dry-run create stored the object: %v", err)
	}

	// A cluster-scoped object of the core group.
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "answers"}}}
	if err := c.Create(ctx, ns); err != nil || ns.GetUID() == "" {
		t.Errorf("an unstructured namespace's create: %v, uid %q", err, ns.GetUID())
	}

	// A typed object is written as usual: its answer decoded whole.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if cm.UID == "" || len(cm.ManagedFields) == 0 {
		t.Errorf("a typed create did not read the whole answer: %+v", cm.ObjectMeta)
	}
}

// BenchmarkWriteAnswers creates a custom resource and writes its status, as
// a backend controller does for a new instance, with the whole object in the
// answers and with metadata-only answers; it reports the client's CPU per
// pair of writes (the process's, so run it alone).
func BenchmarkWriteAnswers(b *testing.B) {
	plain, lean := answerClients(b)
	// A spec of some forty values, about the size of a HelmRelease's.
	values := map[string]any{}
	for i := range 40 {
		values[fmt.Sprintf("key%d", i)] = fmt.Sprintf("value-%d-%030d", i, i)
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		c    client.Client
	}{{"whole", plain}, {"metadata", lean}} {
		b.Run(bc.name, func(b *testing.B) {
			objs := make([]*unstructured.Unstructured, b.N)
			for i := range objs {
				objs[i] = gadget(fmt.Sprintf("bench-%s-%d-%d", bc.name, b.N, i))
				objs[i].Object["spec"] = map[string]any{"color": "red", "extra": values}
			}
			cpu0 := processCPU()
			b.ResetTimer()
			for _, u := range objs {
				if err := bc.c.Create(ctx, u); err != nil {
					b.Fatal(err)
				}
				u.Object["status"] = map[string]any{"phase": "Running"}
				if err := bc.c.Status().Update(ctx, u); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric((processCPU()-cpu0).Seconds()*1000/float64(b.N), "client-CPU-ms/op")
		})
	}
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
