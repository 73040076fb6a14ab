// Command lineage writes upstream Cozystack's lineage labels
// (apps.cozystack.io/application.{group,kind,name},
// internal.cozystack.io/managed-by-cozystack and
// internal.cozystack.io/tenantresource) on the Secrets, Services, Pods,
// PersistentVolumeClaims, Ingresses and WorkloadMonitors an instance's HelmRelease
// renders (or its workloads and operators make), so
// that what selects on them (the dashboard, core.cozystack.io tenantsecrets)
// sees an instance's objects whether or not upstream's lineage webhook runs.
// See docs/lineage.md.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/lineage/internal/controller"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager and leader election lock.
const Name = "cozystack-lineage"

func main() {
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{cozyv1alpha1.AddToScheme},
		Cache: func(*manager.Options) ([]manager.Customize, error) {
			return []manager.Customize{func(o *ctrl.Options) {
				if o.Cache.ByObject == nil {
					o.Cache.ByObject = controller.CacheByObject()
					return
				}
				for k, v := range controller.CacheByObject() {
					o.Cache.ByObject[k] = v
				}
			}}, nil
		},
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			r := &controller.Reconciler{Name: Name, Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}
			return r.SetupWithManager(mgr, opts.Workers)
		},
	})
}
