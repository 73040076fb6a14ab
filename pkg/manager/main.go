package manager

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Program is what sets one controller's main function apart from the
// others'; Main does the rest.
type Program struct {
	// Name is the controller's name: field manager, leader election lock,
	// event source.
	Name string
	// Schemes register the Go types the controller reads and writes,
	// besides client-go's.
	Schemes []func(*runtime.Scheme) error
	// Cache, when set, returns the manager's cache customizations given
	// the parsed flags, which it may adjust (a shard's selector).
	Cache func(*Options) ([]Customize, error)
	// Setup registers the controller's reconcilers and metrics with mgr.
	Setup func(mgr ctrl.Manager, opts Options) error
}

// Main is a controller's whole main function: it parses the flags of
// flag.CommandLine (those of Options, and any the caller bound before),
// builds the manager, runs p.Setup and runs until SIGTERM or SIGINT. A
// failure to start ends the process with status 1.
func Main(p Program) {
	opts := NewOptions(p.Name)
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	for _, add := range p.Schemes {
		must(add(scheme))
	}
	var customize []Customize
	if p.Cache != nil {
		c, err := p.Cache(&opts)
		must(err)
		customize = c
	}
	mgr, err := New(opts, scheme, customize...)
	must(err)
	must(p.Setup(mgr, opts))
	Start(mgr)
}

func must(err error) {
	if err != nil {
		ctrl.Log.WithName("setup").Error(err, "cannot start")
		os.Exit(1)
	}
}
