package instance

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/ssa"
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
// key belongs to the shard operator): ssa.TakeOwnFields. Only
// metadata.managedFields changes, under a precondition on the version just
// written.
func (r *Reconciler) takeOverFields(ctx context.Context, adopted *unstructured.Unstructured) error {
	patch, err := ssa.HandOverPatch(adopted, r.Name, ssa.TakeOwnFields(ssa.LabelPaths(r.Components.LiveLabels...)...))
	if err != nil || patch == nil {
		return err
	}
	if err := r.Client.Patch(ctx, adopted, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(r.Name)); err != nil {
		// A changed object (the version just written is the precondition)
		// is a conflict: the next reconcile finds the object adopted, and
		// the stale ownership only matters for fields dropped later.
		return fmt.Errorf("handing the adopted %s %s's fields over to %s: %w", adopted.GetKind(), adopted.GetName(), r.Name, err)
	}
	return nil
}
