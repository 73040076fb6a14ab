package instance

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

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

	mgr, err := manager.New(opts, scheme, CacheOptions(backend))
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
