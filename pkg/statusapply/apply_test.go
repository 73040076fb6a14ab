package statusapply

import (
	"context"
	"os"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// The package's tests share one API server serving Widgets (a status
// subresource whose conditions are a list keyed by type).
var (
	widgetEnv     *testenv.Env
	widgetEnvErr  error
	widgetEnvOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if widgetEnv != nil {
		_ = widgetEnv.Stop()
	}
	os.Exit(code)
}

// widgetClient returns a client of the shared API server.
func widgetClient(t testing.TB) client.Client {
	t.Helper()
	widgetEnvOnce.Do(func() { widgetEnv, widgetEnvErr = startWidgets() })
	if widgetEnvErr != nil {
		t.Fatal(widgetEnvErr)
	}
	c, err := client.New(widgetEnv.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// widget returns a client of the shared API server, a Widget of that name
// created in it, and a function that reads the Widget as it now is.
func widget(t *testing.T, name string) (client.Client, *unstructured.Unstructured, func() *unstructured.Unstructured) {
	t.Helper()
	c := widgetClient(t)
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("example.com/v1")
	w.SetKind("Widget")
	w.SetNamespace("default")
	w.SetName(name)
	if err := c.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(w.GroupVersionKind())
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(w), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	return c, w, get
}

func startWidgets() (*testenv.Env, error) {
	preserve := true
	schema := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", XPreserveUnknownFields: &preserve},
		"status": {Type: "object", XPreserveUnknownFields: &preserve, Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"conditions": {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"type"},
				Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Required: []string{"type"}, XPreserveUnknownFields: &preserve,
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"type": {Type: "string"}}}}},
		}},
	}}
	return testenv.Start(testenv.NamespacedCRD("example.com", "v1",
		apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}, schema, true))
}

// TestWriter runs a Writer against a real API server: it writes only what
// changed, tells each write's transitions, takes the status over from a
// former writer of full updates, so that a condition it no longer applies
// goes, and then writes nothing.
func TestWriter(t *testing.T) {
	c, w, get := widget(t, "w")
	ctx := context.Background()
	cond := func(typ string, status metav1.ConditionStatus, reason string) map[string]any {
		return map[string]any{"type": typ, "status": string(status), "reason": reason, "message": "m",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	// A former version wrote the whole status with an update.
	old := get()
	old.Object["status"] = map[string]any{"version": "1", "conditions": []any{
		cond("Ready", metav1.ConditionFalse, "Failed"), cond("Stalled", metav1.ConditionTrue, "Failed")}}
	if err := c.Status().Update(ctx, old, client.FieldOwner("former")); err != nil {
		t.Fatal(err)
	}

	var told [][]metav1.Condition
	sw := Writer{Client: c, FieldManager: "ctl", Changed: func(_ client.Object, have, _ []metav1.Condition) { told = append(told, have) }}
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "m",
		LastTransitionTime: metav1.Now()}}
	part := Part{Conditions: ready, AllConditions: true, Fields: map[string]any{"version": "2", "namespace": nil}}
	write := func(u *unstructured.Unstructured) bool {
		t.Helper()
		wrote, err := sw.Write(ctx, u, Of(u), part)
		if err != nil {
			t.Fatal(err)
		}
		return wrote
	}

	before := get()
	if sw.Behind(before) {
		t.Fatal("nothing written yet: not behind")
	}
	if !write(before) {
		t.Fatal("first write: nothing written")
	}
	if !sw.Behind(before) {
		t.Fatal("the cache would still show the version the write replaced: behind")
	}
	if len(told) != 1 || len(told[0]) != 2 {
		t.Fatalf("told %v: want one write, told against the two conditions before it", told)
	}
	for _, e := range get().GetManagedFields() {
		if e.Manager == "former" {
			t.Errorf("the former writer still owns %s", e.FieldsV1.Raw)
		}
	}
	// The cache has not caught up with the write yet: the same part over
	// the version it replaced is not written again.
	if write(old) {
		t.Error("the same part over the version the write replaced: written again")
	}
	// Now alone, the apply removes the condition it no longer applies.
	if sw.Behind(get()) {
		t.Fatal("a newer version: not behind")
	}
	if sw.Behind(before) {
		t.Fatal("the wait ended with the newer version; it is not resumed")
	}
	if !write(get()) {
		t.Fatal("Stalled, handed over, is still there: want a write")
	}
	live := get()
	if got := Conditions(Of(live)); len(got) != 1 || got[0].Type != "Ready" || got[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v: want Ready=True alone", got)
	}
	if v, _, _ := unstructured.NestedString(live.Object, "status", "version"); v != "2" {
		t.Errorf("version %q, want 2", v)
	}
	if write(live) {
		t.Error("settled: written again")
	}
	if len(told) != 2 {
		t.Errorf("told %d writes, want 2", len(told))
	}

	// Another controller writes its condition between this one's read and
	// its write; the cache shows that version before this write's. The
	// write was applied over it: nothing is written or told again.
	read := get()
	other := Writer{Client: c, FieldManager: "other"}
	if _, err := other.Write(ctx, read, Of(read), Part{Conditions: []metav1.Condition{{Type: "Other",
		Status: metav1.ConditionTrue, Reason: "Other", Message: "m", LastTransitionTime: metav1.Now()}}}); err != nil {
		t.Fatal(err)
	}
	between := get()
	part = Part{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "m",
		LastTransitionTime: metav1.Now()}}}
	if !write(read) {
		t.Fatal("Ready=False over the version read: nothing written")
	}
	if !sw.Behind(between) {
		t.Error("the other controller's version, older than the write: not behind")
	}
	if write(between) {
		t.Error("the same part over the other controller's version, older than the write: written again")
	}
	if len(told) != 3 {
		t.Errorf("told %d writes, want 3", len(told))
	}
	remembered := written.Len()
	if write(get()) {
		t.Error("caught up: written again")
	}
	// Settled and seen: the write is no longer remembered.
	if got := written.Len(); got != remembered-1 {
		t.Errorf("%d writes remembered after the cache caught up, want %d", got, remembered-1)
	}

	// A watch's event tells the writer what the cache shows (Echo): the
	// version a write replaced keeps it remembered, the version it made
	// forgets it, with no reconcile in between, and is the write's echo.
	seenBefore := get()
	part = Part{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "m",
		LastTransitionTime: metav1.Now()}}}
	if !write(seenBefore) {
		t.Fatal("Ready=True: nothing written")
	}
	remembered = written.Len()
	if sw.Echo(w.GroupVersionKind(), seenBefore) {
		t.Error("the version the write replaced: taken for the write's echo")
	}
	if got := written.Len(); got != remembered {
		t.Errorf("seen at the version the write replaced: %d writes remembered, want %d", got, remembered)
	}
	if !sw.Echo(w.GroupVersionKind(), get()) {
		t.Error("the version the write made: not taken for its echo")
	}
	if got := written.Len(); got != remembered-1 {
		t.Errorf("seen at the version the write made: %d writes remembered, want %d", got, remembered-1)
	}

	// A reconcile that found the cache behind the write and left the object
	// for the write's event to bring back awaits it: that event is no echo.
	awaited := get()
	part = Part{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "m",
		LastTransitionTime: metav1.Now()}}}
	if !write(awaited) {
		t.Fatal("Ready=False: nothing written")
	}
	if !sw.Await(awaited) {
		t.Fatal("the cache shows the version the write replaced: want behind")
	}
	if sw.Echo(w.GroupVersionKind(), get()) {
		t.Error("an awaited write's event: taken for an echo")
	}
	if sw.Echo(w.GroupVersionKind(), get()) {
		t.Error("the same event again, the write forgotten: taken for an echo")
	}
}

// TestWriterPatch runs a Writer that writes the whole status as merge
// patches against a real API server: one write removes what a former writer
// of full updates left and the part leaves out, a field the part does not
// own stays, the patch carries only what changed, a status decided on a
// version changed since is refused, and a settled status is not written.
func TestWriterPatch(t *testing.T) {
	c, _, get := widget(t, "patched")
	ctx := context.Background()
	old := get()
	old.Object["status"] = map[string]any{"version": "1", "namespace": "gone", "note": "someone else's", "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "Failed", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"},
		map[string]any{"type": "Stalled", "status": "True", "reason": "Failed", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if err := c.Status().Update(ctx, old, client.FieldOwner("former")); err != nil {
		t.Fatal(err)
	}

	var told int
	sw := Writer{Client: c, FieldManager: "ctl", Patch: true, Changed: func(client.Object, []metav1.Condition, []metav1.Condition) { told++ }}
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "m", LastTransitionTime: metav1.Now()}}
	part := Part{Conditions: ready, AllConditions: true, Fields: map[string]any{"version": "2", "namespace": nil}}
	write := func(u *unstructured.Unstructured) (bool, error) {
		t.Helper()
		return sw.Write(ctx, u, Of(u), part)
	}

	before := get()
	if wrote, err := write(before); err != nil || !wrote {
		t.Fatalf("first write: wrote %v, %v", wrote, err)
	}
	live := get()
	if got := Conditions(Of(live)); len(got) != 1 || got[0].Type != "Ready" || got[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v: want Ready=True alone, in one write", got)
	}
	st := Of(live)
	if st["version"] != "2" || st["namespace"] != nil || st["note"] != "someone else's" {
		t.Errorf("status %v: want version 2, no namespace, and the field the part does not own kept", st)
	}
	if !sw.Behind(before) {
		t.Error("the cache would still show the version the write replaced: want behind")
	}
	if wrote, err := write(live); err != nil || wrote {
		t.Errorf("settled: wrote %v, %v", wrote, err)
	}
	if told != 1 {
		t.Errorf("told %d writes, want 1", told)
	}

	// What changes is all the patch carries; a status decided on a version
	// someone changed since is refused.
	part = Part{Conditions: ready, AllConditions: true, Fields: map[string]any{"version": "3", "namespace": nil}}
	if diff, err := PatchOf(Of(live), part); err != nil || len(diff) != 1 || diff["version"] != "3" {
		t.Errorf("PatchOf = %v, %v: want the version alone", diff, err)
	}
	moved := live.DeepCopy()
	unstructured.SetNestedField(moved.Object, "moved", "status", "note")
	if err := c.Status().Update(ctx, moved, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	if _, err := write(live); !apierrors.IsConflict(err) {
		t.Errorf("a write over a version changed since: %v, want a Conflict", err)
	}
	if wrote, err := write(get()); err != nil || !wrote {
		t.Fatalf("a write over the current version: wrote %v, %v", wrote, err)
	}
	if st := Of(get()); st["version"] != "3" || st["note"] != "moved" {
		t.Errorf("status %v: want version 3 and the other writer's note", st)
	}
}
