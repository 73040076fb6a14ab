// Command ns-labels writes the label namespace.cozystack.io/gateway=<owner>
// and the annotation cozystack.io/gateway-attached-by=<owner> on the namespace
// of every TenantGateway and on its attachedNamespaces, so that their routes
// pass the Gateway's listener selectors, and removes what it wrote when a
// namespace is no longer listed. Labels without the annotation belong to the
// tenant chart and are never touched. See docs/ns-labels.md.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/ns-labels/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-ns-labels"

func main() {
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{gatewayv1alpha1.AddToScheme},
		Cache:   gatewayruntime.TrimmedCache(controller.CacheTrims...),
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			r := &controller.Reconciler{Base: gatewayruntime.NewBase(mgr, Name)}
			return r.SetupWithManager(mgr, opts.Workers)
		},
	})
}
