package instance

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Configure sets the options every backend controller runs with: a shard
// (--watch-label-selector) owns the instances matching the selector and
// their backing objects, every shard reads all definitions; instances and
// backing objects, the bulk of the cache and read whole only by a reconcile,
// are cached compactly; the backing objects' creates and the status writes
// are answered with metadata only (the reconciler reads nothing else of the
// answers).
func Configure(opts *manager.Options, backend Backend) {
	opts.MetadataAnswers = true
	opts.Sharded = func(gvk schema.GroupVersionKind) bool { return gvk.Group == appsv1alpha1.GroupVersion.Group }
	target := backend.TargetGVK()
	opts.Compact = func(gvk schema.GroupVersionKind) bool {
		return gvk.Group == appsv1alpha1.GroupVersion.Group || gvk == target
	}
}

// Main is the whole main function of a backend controller called name:
// flags, manager, the generic reconciler around backend and its components,
// run until signalled. addToScheme registers the backing objects' Go types.
func Main(name string, backend Backend, components Components, addToScheme func(*runtime.Scheme) error) {
	manager.Main(manager.Program{
		Name:    name,
		Schemes: []func(*runtime.Scheme) error{cozyv1alpha1.AddToScheme, addToScheme},
		Cache: func(opts *manager.Options) ([]manager.Customize, error) {
			Configure(opts, backend)
			sel, err := opts.Selector()
			if err != nil {
				return nil, err
			}
			shard, err := manager.PrefixedRequirements(sel, appsv1alpha1.InstanceLabelPrefix)
			if err != nil {
				return nil, err
			}
			return []manager.Customize{CacheOptions(backend, shard...)}, nil
		},
		Setup: func(mgr ctrl.Manager, opts manager.Options) error {
			r := &Reconciler{
				Name:       name,
				Backend:    backend,
				Components: components,
				Client:     mgr.GetClient(),
				APIReader:  mgr.GetAPIReader(),
				Recorder:   mgr.GetEventRecorder(name),
				Workers:    opts.Workers,
			}
			sel, err := opts.Selector()
			if err != nil {
				return err
			}
			r.Sharded = sel != nil
			return r.SetupWithManager(mgr)
		},
	})
}
