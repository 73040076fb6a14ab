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
}
