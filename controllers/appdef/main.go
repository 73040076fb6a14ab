// Command appdef serves one CustomResourceDefinition per
// ApplicationDefinition: every definition's kind becomes
// apps.cozystack.io/v1alpha1 <Kind>, live within seconds, validated by the
// API server against the definition's schema. See doc.go for the contract
// and internal/controller for how.
package main

import (
	"flag"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/appdef/internal/controller"
	"github.com/cozyplane/cozyplane/controllers/appdef/internal/quota"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-appdef"

func main() {
	q := quota.Config{}
	flag.IntVar(&q.Instances, "instance-quota", quota.DefaultInstances,
		"instances of each kind of apps.cozystack.io a tenant namespace may hold (the ResourceQuota "+quota.Name+
			" in every namespace named --quota-namespace-prefix*); 0 sets no limit. The namespace annotation "+quota.AnnotationInstances+
			" (a number, or unlimited) overrides it there")
	flag.IntVar(&q.Tenants, "tenant-quota", quota.DefaultTenants,
		"child tenants (instances of the Tenant kind) a tenant namespace may hold; 0 sets no limit. The namespace annotation "+
			quota.AnnotationTenants+" overrides it there")
	flag.StringVar(&q.NamespacePrefix, "quota-namespace-prefix", quota.DefaultNamespacePrefix,
		"names of the namespaces that get the instance quota start with this")
	flag.DurationVar(&q.KindDelay, "quota-kind-delay", quota.DefaultKindDelay,
		"how long a kind is served before the instance quota counts it: kube-controller-manager's quota controller must have "+
			"discovered the kind first (it looks every 30 s), or the API server refuses the kind's instances until it does")
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, cozyv1alpha1.AddToScheme},
		Cache: func(*manager.Options) ([]manager.Customize, error) {
			return []manager.Customize{controller.CacheOptions(), quota.CacheOptions()}, nil
		},
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			md, err := metadata.NewForConfig(mgr.GetConfig())
			if err != nil {
				return err
			}
			r := &controller.Reconciler{
				Client:       mgr.GetClient(),
				APIReader:    mgr.GetAPIReader(),
				Metadata:     md,
				Recorder:     mgr.GetEventRecorder(Name),
				FieldManager: Name,
				Workers:      opts.Workers,
			}
			if err := r.SetupWithManager(mgr); err != nil {
				return err
			}
			return (&quota.Reconciler{
				Client:       mgr.GetClient(),
				APIReader:    mgr.GetAPIReader(),
				Recorder:     mgr.GetEventRecorder(Name),
				FieldManager: Name,
				Config:       q,
			}).SetupWithManager(mgr)
		},
	})
}
