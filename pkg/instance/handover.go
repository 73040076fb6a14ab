package instance

// The backing objects whose create entry has been handed over to the apply
// entry (ssa.HandOvers): their next apply needs no read of the API server.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/dynamicwatch"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// forgetTarget drops the backing object of the instance req names from the
// applier's hand-over record once the instance is gone (its definition
// still known).
func (r *Reconciler) forgetTarget(req dynamicwatch.Request) {
	def := r.defs.forKind(req.GVK)
	if def == nil {
		return
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(req.GVK)
	inst.SetNamespace(req.Namespace)
	inst.SetName(req.Name)
	h, ok := r.applier.Creates.(*ssa.HandOvers)
	if !ok {
		return
	}
	h.Forget(client.ObjectKey{Namespace: r.Components.Placement.Namespace(inst), Name: r.Backend.TargetName(def, inst)})
}
