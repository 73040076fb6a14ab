package gatewayruntime

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// CreatedUpstream reports whether obj was written by upstream Cozystack's
// TenantGateway controller: it carries that controller's
// cozystack.io/managed-by value. Only objects that are also controlled by the
// TenantGateway (checked with the ownership guard first) are adopted.
func CreatedUpstream(obj metav1.Object) bool {
	return obj.GetLabels()[gatewayv1alpha1.LabelManagedBy] == gatewayv1alpha1.ManagedByUpstream
}

// UpdateManagers returns the field managers that own spec fields of an object
// through full updates (operation Update on the main resource), other than
// self, sorted. Upstream Cozystack's controller writes its objects that way:
// after our first apply it would still co-own every field it set, and
// server-side apply removes a field only when its last owner lets go, so a
// listener, dnsName or solver we stop wanting would stay for ever. Pure.
func UpdateManagers(entries []metav1.ManagedFieldsEntry, self string) []string {
	out := sets.New[string]()
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.Manager == self || e.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			continue
		}
		if _, ok := fields["f:spec"]; ok {
			out.Insert(e.Manager)
		}
	}
	return sets.List(out)
}

// Adopt hands the fields of an object upstream Cozystack's controller created
// over to fieldManager, before its first apply: the managers of
// UpdateManagers are merged into fieldManager's apply entry
// (ssa.TakeManagers), so that the apply that follows alone decides the object's spec and our labels (fields
// it no longer sets are removed, foreign labels added with their own managers
// stay). reader must not strip managed fields (the manager's cache does): pass
// the API reader. Only metadata.managedFields changes, under a precondition
// on the version read; a conflict is retried by the caller's reconcile.
// Returns whether it wrote.
func Adopt(ctx context.Context, c client.Client, reader client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey, fieldManager string) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	if err := reader.Get(ctx, key, live); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	managers := UpdateManagers(live.GetManagedFields(), fieldManager)
	if len(managers) == 0 {
		return false, nil
	}
	patch, err := ssa.HandOverPatch(live, fieldManager, ssa.TakeManagers(managers...))
	if err != nil || patch == nil {
		return false, err
	}
	if err := c.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return false, fmt.Errorf("adopting %s %s from %v: %w", gvk.Kind, key, managers, err)
	}
	writemetric.Count(fieldManager, gvk.Kind, writemetric.Adopted)
	return true, nil
}
