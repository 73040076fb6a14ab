package instance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// takeOverFields finishes an adoption. The adopting apply made us co-owner
// of every field we set, but the writer of the adopted object (upstream
// Cozystack's API, which writes with full updates) still owns them too, and
// server-side apply only removes a field when its last owner lets it go: a
// value the tenant later drops from the instance would linger in the
// HelmRelease for ever. So the fields we now own are taken off every entry
// that full updates made (operation Update, main resource); fields we do not
// set (say, values keys starting with _ written by the platform) stay with
// their writer, and so do labels that follow the live object (the shard
// key belongs to the shard operator). Only metadata.managedFields changes,
// under a precondition on the version just written.
func (r *Reconciler) takeOverFields(ctx context.Context, adopted *unstructured.Unstructured) error {
	entries, changed, err := HandOverFields(adopted.GetManagedFields(), r.Name, r.Components.LiveLabels)
	if err != nil || !changed {
		return err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": adopted.GetResourceVersion()},
		{"op": "replace", "path": "/metadata/managedFields", "value": entries},
	})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, adopted, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(r.Name)); err != nil {
		// A failed test (the object changed meanwhile) is a conflict or an
		// invalid patch: the next reconcile finds the object adopted, and
		// the stale ownership only matters for fields dropped later.
		return fmt.Errorf("handing the adopted %s %s's fields over to %s: %w", adopted.GetKind(), adopted.GetName(), r.Name, err)
	}
	return nil
}

// HandOverFields returns managed-fields entries in which the fields that
// manager owns through server-side apply are no longer also claimed by
// entries of full updates (operation Update on the main resource), except
// the labels named in keep. Entries left with nothing are dropped; apply
// entries of other managers and status entries are left as they are.
// changed is false when there was nothing to take. Pure.
func HandOverFields(entries []metav1.ManagedFieldsEntry, manager string, keep []string) ([]metav1.ManagedFieldsEntry, bool, error) {
	var ours *fieldpath.Set
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			ours = &fieldpath.Set{}
			if err := ours.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
				return nil, false, fmt.Errorf("reading the fields of %s: %w", manager, err)
			}
		}
	}
	if ours == nil {
		return entries, false, nil
	}
	kept := &fieldpath.Set{}
	for _, k := range keep {
		kept.Insert(fieldpath.MakePathOrDie("metadata", "labels", k))
	}
	take := ours.Difference(kept)

	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	changed := false
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.FieldsV1 == nil {
			out = append(out, e)
			continue
		}
		theirs := &fieldpath.Set{}
		if err := theirs.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, false, fmt.Errorf("reading the fields of %s: %w", e.Manager, err)
		}
		left := theirs.Difference(take)
		if left.Equals(theirs) {
			out = append(out, e)
			continue
		}
		changed = true
		if left.Empty() {
			continue
		}
		raw, err := left.ToJSON()
		if err != nil {
			return nil, false, err
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		out = append(out, e)
	}
	return out, changed, nil
}
