package ssa

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestCreates runs an Applier that creates absent objects against a real API
// server: the create refuses an object it did not see, and the first apply
// after it owns what the create wrote, so a field dropped from the intent
// goes.
func TestCreates(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := Applier{Client: c, FieldManager: "m", Creates: c}
	cm := func(name string, labels map[string]any) *unstructured.Unstructured {
		u := obj(labels)
		u.SetName(name)
		u.SetNamespace("default")
		return u
	}
	get := func(name string) *unstructured.Unstructured {
		t.Helper()
		u := cm(name, nil)
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	// managers lists an object's field managers as manager/operation.
	managers := func(u *unstructured.Unstructured) map[string]bool {
		out := map[string]bool{}
		for _, e := range u.GetManagedFields() {
			out[e.Manager+"/"+string(e.Operation)] = true
		}
		return out
	}
	created, applied, patched := CreateManager("m")+"/Update", "m/Apply", "m/Update"

	t.Run("an object someone else has is not touched", func(t *testing.T) {
		theirs := cm("theirs", map[string]any{"owner": "them"})
		if err := c.Create(ctx, theirs, client.FieldOwner("them")); err != nil {
			t.Fatal(err)
		}
		res, err := a.Apply(ctx, cm("theirs", map[string]any{"app": "x"}), nil)
		if !apierrors.IsAlreadyExists(err) || res != Unchanged {
			t.Fatalf("Apply over an unseen object: %v %v, want AlreadyExists", res, err)
		}
		if l := get("theirs").GetLabels(); len(l) != 1 || l["owner"] != "them" {
			t.Fatalf("the unseen object changed: labels %v", l)
		}
	})

	t.Run("a created object's fields are the applier's", func(t *testing.T) {
		desired := cm("ours", map[string]any{"app": "x", "tier": "gold"})
		if res, err := a.Apply(ctx, desired, nil); err != nil || res != Created {
			t.Fatalf("create: %v %v", res, err)
		}
		live := get("ours")
		if m := managers(live); !m[created] || len(m) != 1 {
			t.Fatalf("managers after the create: %v, want only %s", m, created)
		}
		// Another write of manager m's, outside apply (a one-field patch):
		// it keeps its own entry.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"patched":"yes"}}`))
		if err := c.Patch(ctx, live, patch, client.FieldOwner("m")); err != nil {
			t.Fatal(err)
		}
		// Unchanged intent: nothing is sent, nothing is upgraded.
		rv := live.GetResourceVersion()
		if res, err := a.Apply(ctx, cm("ours", map[string]any{"app": "x", "tier": "gold"}), live); err != nil || res != Unchanged {
			t.Fatalf("same intent: %v %v, want unchanged", res, err)
		}
		if get("ours").GetResourceVersion() != rv {
			t.Fatal("an unchanged intent wrote")
		}
		// A stale read under a precondition is a conflict, before any write.
		stale := live.DeepCopy()
		stale.SetResourceVersion("1")
		if _, err := a.Apply(ctx, cm("ours", map[string]any{"app": "y"}), stale, IfUnchanged()); !apierrors.IsConflict(err) {
			t.Fatalf("apply on a stale read: %v, want Conflict", err)
		}
		if m := managers(get("ours")); !m[created] {
			t.Fatalf("managers after a refused apply: %v, want the create's entry kept", m)
		}
		// The intent drops a label: it goes.
		if res, err := a.Apply(ctx, cm("ours", map[string]any{"app": "x"}), live, IfUnchanged()); err != nil || res != Updated {
			t.Fatalf("update: %v %v", res, err)
		}
		after := get("ours")
		if l := after.GetLabels(); len(l) != 1 || l["app"] != "x" {
			t.Fatalf("labels after dropping tier: %v, want only app=x", l)
		}
		if m := managers(after); m[created] || !m[applied] || !m[patched] {
			t.Fatalf("managers after the update: %v, want %s and %s, no %s", m, applied, patched, created)
		}
		if after.Object["data"].(map[string]any)["patched"] != "yes" {
			t.Fatalf("the patched field went: %v", after.Object["data"])
		}
	})

	t.Run("an apply of the create's shape needs no hand-over", func(t *testing.T) {
		reads := &ledgerReader{HandOvers: NewHandOvers(c)}
		a := Applier{Client: c, FieldManager: "m", Creates: reads}
		key := client.ObjectKey{Namespace: "default", Name: "shaped"}
		if res, err := a.Apply(ctx, cm("shaped", map[string]any{"app": "x", "tier": "gold"}), nil); err != nil || res != Created {
			t.Fatalf("create: %v %v", res, err)
		}
		if reads.maybe[key] != 1 || reads.none[key] != 0 {
			t.Fatalf("after the create the ledger heard %v and %v, want only that it may have a create entry", reads.maybe, reads.none)
		}
		live := get("shaped")
		mark := live.GetAnnotations()[a.ShapeAnnotation()]
		if mark == "" {
			t.Fatalf("the create left no mark: %v", live.GetAnnotations())
		}
		// Other values of the same labels, twice: no read, no hand-over;
		// each is a merge patch under the create's manager.
		for i, tier := range []string{"silver", "bronze"} {
			res, err := a.Apply(ctx, cm("shaped", map[string]any{"app": "x", "tier": tier}), live)
			if err != nil || res != Updated {
				t.Fatalf("apply %d: %v %v", i, res, err)
			}
			live = get("shaped")
			if reads.gets != 0 {
				t.Fatalf("apply %d read the object %d times, want none", i, reads.gets)
			}
			if m := managers(live); !m[created] || len(m) != 1 {
				t.Fatalf("managers after apply %d: %v, want only %s", i, m, created)
			}
			if l := live.GetLabels(); l["tier"] != tier || live.GetAnnotations()[a.ShapeAnnotation()] != mark {
				t.Fatalf("after apply %d: labels %v, annotations %v", i, l, live.GetAnnotations())
			}
		}
		if reads.none[key] != 0 {
			t.Fatal("the ledger heard that an object whose create entry stays has none")
		}
		// Another shape: the create's entry is handed over, so the label
		// the intent drops goes, and the mark with it.
		if res, err := a.Apply(ctx, cm("shaped", map[string]any{"app": "x"}), live); err != nil || res != Updated {
			t.Fatalf("apply of another shape: %v %v", res, err)
		}
		after := get("shaped")
		if l := after.GetLabels(); len(l) != 1 || l["app"] != "x" {
			t.Fatalf("labels after dropping tier: %v, want only app=x", l)
		}
		if _, ok := after.GetAnnotations()[a.ShapeAnnotation()]; ok {
			t.Fatalf("the mark outlived the hand-over: %v", after.GetAnnotations())
		}
		if m := managers(after); m[created] || !m[applied] {
			t.Fatalf("managers after the hand-over: %v, want %s and no %s", m, applied, created)
		}
		if reads.gets != 1 || reads.none[key] != 1 {
			t.Fatalf("the hand-over read %d times and told the ledger %d times, want 1 and 1", reads.gets, reads.none[key])
		}
		// Handed over and remembered: a later apply of yet another shape
		// reads nothing first.
		if res, err := a.Apply(ctx, cm("shaped", map[string]any{"app": "y", "zone": "a"}), after); err != nil || res != Updated {
			t.Fatalf("apply after the hand-over: %v %v", res, err)
		}
		if reads.gets != 1 {
			t.Fatalf("an apply after the hand-over read the object: %d reads, want 1", reads.gets)
		}
		after = get("shaped")
		if l := after.GetLabels(); len(l) != 2 || l["app"] != "y" || l["zone"] != "a" {
			t.Fatalf("labels after the apply: %v, want app=y and zone=a", l)
		}
		// A restart remembers nothing: the first apply reads once more,
		// finds nothing to hand over, and writes no hand-over patch.
		restarted := &ledgerReader{HandOvers: NewHandOvers(c)}
		b := Applier{Client: c, FieldManager: "m", Creates: restarted}
		if res, err := b.Apply(ctx, cm("shaped", map[string]any{"app": "z"}), after); err != nil || res != Updated {
			t.Fatalf("apply after a restart: %v %v", res, err)
		}
		if restarted.gets != 1 || restarted.none[key] != 1 {
			t.Fatalf("after a restart the apply read %d times and told the ledger %d times, want 1 and 1", restarted.gets, restarted.none[key])
		}
		// An object made anew under the name is read again.
		restarted.Forget(key)
		if restarted.HandedOver(key) {
			t.Fatal("Forget left the object remembered")
		}
	})

	t.Run("a write of the create's shape takes back what another manager changed", func(t *testing.T) {
		if res, err := a.Apply(ctx, cm("edited", map[string]any{"app": "x", "tier": "gold"}), nil); err != nil || res != Created {
			t.Fatalf("create: %v %v", res, err)
		}
		// Someone edits the tier and adds a label of their own.
		edit := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"tin","theirs":"yes"}}}`))
		if err := c.Patch(ctx, get("edited"), edit, client.FieldOwner("editor")); err != nil {
			t.Fatal(err)
		}
		if res, err := a.Apply(ctx, cm("edited", map[string]any{"app": "x", "tier": "silver"}), get("edited")); err != nil || res != Updated {
			t.Fatalf("apply of the create's shape: %v %v", res, err)
		}
		// Then the intent drops tier: it goes, as an apply would drop it,
		// and their label stays theirs.
		if res, err := a.Apply(ctx, cm("edited", map[string]any{"app": "x"}), get("edited")); err != nil || res != Updated {
			t.Fatalf("apply of another shape: %v %v", res, err)
		}
		after := get("edited")
		if l := after.GetLabels(); len(l) != 2 || l["app"] != "x" || l["theirs"] != "yes" {
			t.Fatalf("labels after dropping tier: %v, want app=x and theirs=yes", l)
		}
		if m := managers(after); m[created] || !m[applied] || !m["editor/Update"] {
			t.Fatalf("managers: %v, want %s and editor/Update, no %s", m, applied, created)
		}
	})

	t.Run("a write of the create's shape on a stale read under a precondition is a conflict", func(t *testing.T) {
		if res, err := a.Apply(ctx, cm("stale", map[string]any{"app": "x"}), nil); err != nil || res != Created {
			t.Fatalf("create: %v %v", res, err)
		}
		stale := get("stale")
		if err := c.Patch(ctx, get("stale"), client.RawPatch(types.MergePatchType, []byte(`{"data":{"moved":"on"}}`)), client.FieldOwner("other")); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Apply(ctx, cm("stale", map[string]any{"app": "y"}), stale, IfUnchanged()); !apierrors.IsConflict(err) {
			t.Fatalf("a write of the create's shape on a stale read: %v, want Conflict", err)
		}
		if l := get("stale").GetLabels(); l["app"] != "x" {
			t.Fatalf("labels after a refused write: %v, want app=x", l)
		}
	})

	t.Run("a write of the create's shape whose list differs is an apply", func(t *testing.T) {
		withFinalizer := func(labels map[string]any) *unstructured.Unstructured {
			u := cm("listed", labels)
			u.SetFinalizers([]string{"example.com/ours"})
			return u
		}
		if res, err := a.Apply(ctx, withFinalizer(map[string]any{"app": "x"}), nil); err != nil || res != Created {
			t.Fatalf("create: %v %v", res, err)
		}
		// Another controller adds a finalizer of its own: a merge patch
		// of our list would take it out, an apply keeps it.
		add := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["example.com/ours","example.com/theirs"]}}`))
		if err := c.Patch(ctx, get("listed"), add, client.FieldOwner("other")); err != nil {
			t.Fatal(err)
		}
		if res, err := a.Apply(ctx, withFinalizer(map[string]any{"app": "y"}), get("listed")); err != nil || res != Updated {
			t.Fatalf("apply of the create's shape: %v %v", res, err)
		}
		after := get("listed")
		if f := after.GetFinalizers(); len(f) != 2 || after.GetLabels()["app"] != "y" {
			t.Fatalf("after the apply: finalizers %v, labels %v; want both finalizers and app=y", f, after.GetLabels())
		}
		if m := managers(after); !m[applied] {
			t.Fatalf("managers: %v, want an apply's %s", m, applied)
		}
		after.SetFinalizers(nil)
		if err := c.Update(ctx, after); err != nil {
			t.Fatal(err)
		}
	})
}

// ledgerReader counts its reads and what an Applier tells it as
// CreateEntries, and remembers as HandOvers does.
type ledgerReader struct {
	*HandOvers
	gets        int
	maybe, none map[client.ObjectKey]int
}

func (r *ledgerReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.HandOvers.Get(ctx, key, obj, opts...)
}

func (r *ledgerReader) MayHaveCreateEntry(key client.ObjectKey) {
	if r.maybe == nil {
		r.maybe = map[client.ObjectKey]int{}
	}
	r.maybe[key]++
	r.HandOvers.MayHaveCreateEntry(key)
}

func (r *ledgerReader) HasNoCreateEntry(key client.ObjectKey) {
	if r.none == nil {
		r.none = map[client.ObjectKey]int{}
	}
	r.none[key]++
	r.HandOvers.HasNoCreateEntry(key)
}
