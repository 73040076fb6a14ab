package statusapply

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestWriter runs a Writer against a real API server: it writes only what
// changed, tells each write's transitions, takes the status over from a
// former writer of full updates, so that a condition it no longer applies
// goes, and then writes nothing.
func TestWriter(t *testing.T) {
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
	env, err := testenv.Start(testenv.NamespacedCRD("example.com", "v1",
		apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}, schema, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("example.com/v1")
	w.SetKind("Widget")
	w.SetNamespace("default")
	w.SetName("w")
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	get := func() *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(w.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
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
