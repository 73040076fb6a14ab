package instance

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// Main is the whole main function of a backend controller called name:
// flags, manager, the generic reconciler around backend, run until
// signalled. addToScheme registers the backing objects' Go types.
func Main(name string, backend Backend, addToScheme func(*runtime.Scheme) error) {
	opts := manager.NewOptions(name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(cozyv1alpha1.AddToScheme(scheme))
	must(addToScheme(scheme))

	// A shard (--watch-label-selector) owns the instances matching the
	// selector and their backing objects; every shard reads all definitions.
	opts.Sharded = func(gvk schema.GroupVersionKind) bool { return gvk.Group == appsv1alpha1.GroupVersion.Group }
	sel, err := opts.Selector()
	must(err)
	shard, err := manager.PrefixedRequirements(sel, appsv1alpha1.InstanceLabelPrefix)
	must(err)
	mgr, err := manager.New(opts, scheme, CacheOptions(backend, shard...))
	must(err)
	r := &Reconciler{
		Name:      name,
		Backend:   backend,
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(name),
		Workers:   opts.Workers,
	}
	must(r.SetupWithManager(mgr))
	manager.Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
