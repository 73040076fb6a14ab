// Command terraform is the Terraform backend controller: every instance of
// every kind whose ApplicationDefinition names the Terraform backend becomes
// a tofu-controller Terraform object, tenants approve plans through their
// instance, and plans, applies and outputs come back onto the instance; the
// outputs Secret tofu-controller writes in the platform namespace is copied
// into the instance's namespace. See internal/tfbackend for the mapping and
// pkg/instance for the rest.
package main

import (
	"context"
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/controllers/terraform/internal/tfbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Name is the controller's name: field manager, leader election lock, events.
const Name = "cozystack-terraform"

func main() {
	runner := tfbackend.BindRunnerFlags(flag.CommandLine)
	access := tfbackend.BindOutputsAccessFlags(flag.CommandLine)
	backend := tfbackend.Backend{Runner: runner, Outputs: access}
	manager.Main(manager.Program{
		Name:    Name,
		Schemes: []func(*runtime.Scheme) error{cozyv1alpha1.AddToScheme, tfv1alpha2.AddToScheme},
		Cache: func(opts *manager.Options) ([]manager.Customize, error) {
			instance.Configure(opts, backend)
			sel, err := opts.Selector()
			if err != nil {
				return nil, err
			}
			shard, err := manager.PrefixedRequirements(sel, appsv1alpha1.InstanceLabelPrefix)
			if err != nil {
				return nil, err
			}
			return []manager.Customize{instance.CacheOptions(backend, shard...)}, nil
		},
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			// Who the controller is, before anything binds it to a role.
			c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
			if err != nil {
				return err
			}
			if err := access.Identify(context.Background(), c); err != nil {
				return err
			}
			r := &instance.Reconciler{
				Name:       Name,
				Backend:    backend,
				Components: backend.Components(),
				Client:     mgr.GetClient(),
				APIReader:  mgr.GetAPIReader(),
				Recorder:   mgr.GetEventRecorder(Name),
				Workers:    opts.Workers,
			}
			if err := r.SetupWithManager(mgr); err != nil {
				return err
			}
			outputs := &tfbackend.OutputsReconciler{
				Name: Name, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(Name),
				Access: access,
			}
			return outputs.SetupWithManager(mgr)
		},
	})
}
