// Package manager bootstraps a controller process the same way for every
// controller of the project: the usual flags, a controller-runtime manager
// with leader election, health and metrics endpoints, client rate limits, an
// optional namespace scope, an optional label selector that makes the process
// one shard of several (--watch-label-selector, with a lease per shard:
// --leader-election-id or one derived from the selector, see shard.go) and an
// opt-in profiler (--pprof-bind-address).
//
// A controller's main.go is then:
//
//	opts := manager.NewOptions("cozystack-helm")
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	mgr, err := manager.New(opts, scheme)
//	... register reconcilers ...
//	manager.Start(mgr)
package manager

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cozyplane/cozyplane/pkg/compactcache"
	"github.com/cozyplane/cozyplane/pkg/record"
)

// Options are the settings every controller process takes.
type Options struct {
	// Name identifies the controller: leader election lock, field manager,
	// event source, user agent.
	Name string

	MetricsAddr string
	// MetricsSecure serves the metrics over HTTPS to authenticated and
	// authorized callers only (controller-runtime's secure serving with the
	// TokenReview and SubjectAccessReview filter). The charts turn it on;
	// the local control plane's scripts scrape plain HTTP.
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key for the secure metrics
	// endpoint; empty: a self-signed certificate made at start-up.
	MetricsCertDir          string
	ProbeAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	// WatchNamespaces limits the cache to these namespaces (all when empty).
	WatchNamespaces []string
	// ResyncPeriod is how often every cached object is reconciled again.
	ResyncPeriod time.Duration
	QPS          float32
	Burst        int
	// Workers is the number of concurrent reconciles per controller.
	Workers int
	// WatchLabelSelector (Flux's --watch-label-selector) limits the cache of
	// the sharded kinds to objects matching it, so N processes started with
	// disjoint selectors split the objects between them. Empty: everything.
	WatchLabelSelector string
	// Sharded picks the kinds the selector applies to; nil applies it to
	// every cached kind (Flux's semantics). Backend controllers shard their
	// instances only: the definitions are read by every shard.
	Sharded func(schema.GroupVersionKind) bool
	// LeaderElectionID names the leader election lease; empty derives it
	// from Name and, when set, the WatchLabelSelector (LeaseName), so every
	// shard elects its own leader.
	LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod are the leader election's
	// timings; zero keeps controller-runtime's (15s, 10s, 2s).
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// PprofAddr serves net/http/pprof when set (off by default).
	PprofAddr string
	// Compact picks the unstructured kinds whose cached objects keep only
	// the metadata fields informers and event handlers read decoded
	// (compactcache.Decoded), the rest packed: a controller caching
	// thousands of them saves most of their memory. nil: none. Their
	// informers decode the API server's JSON straight into packed objects
	// (wire.go), so a cache transform sees them packed.
	Compact compactcache.Match
	// MetadataAnswers makes the manager's client ask for metadata-only
	// answers to creates and status updates of unstructured objects (see
	// MetadataAnswers): for controllers that read nothing else of them.
	MetadataAnswers bool

	Zap zap.Options

	// wire builds the caches' informers (wire.go); set by NewWithConfig.
	wire *wire
}

// Client limits by default. The API server protects itself and its other
// clients with API Priority and Fairness (GA since Kubernetes 1.29, on by
// default): the controllers run as ServiceAccounts outside kube-system, which
// the default FlowSchema "service-accounts" puts in the priority level
// "workload-low", queued and given a fair share only, so a burst from a
// controller cannot starve the system's, leader elections' or users'
// requests (make bench reports the flow schema and priority level each
// controller's requests were dispatched in). The client-side limit is
// therefore only a backstop against a runaway loop, not the server's
// protection, and is set where it does not bind in normal work: a new
// instance costs two limited requests (the apply, the status write; events
// have their own client), so at QPS q the pipeline cannot beat 2N/q seconds,
// and 2,000/s is above what a large API server creates. Sixteen workers keep
// that many requests in flight while one reconcile waits on the API server.
const (
	DefaultQPS     = 2000
	DefaultBurst   = 4000
	DefaultWorkers = 16
)

// NewOptions returns the defaults for a controller called name.
func NewOptions(name string) Options {
	return Options{
		Name:         name,
		MetricsAddr:  ":8080",
		ProbeAddr:    ":8081",
		ResyncPeriod: 10 * time.Hour,
		QPS:          DefaultQPS,
		Burst:        DefaultBurst,
		Workers:      DefaultWorkers,
		Zap:          zap.Options{Development: false},
	}
}

type stringList struct{ v *[]string }

func (s stringList) String() string {
	if s.v == nil {
		return ""
	}
	return strings.Join(*s.v, ",")
}

func (s stringList) Set(v string) error {
	*s.v = nil
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s.v = append(*s.v, p)
		}
	}
	return nil
}

// BindFlags registers the flags on fs. --kubeconfig is registered by
// controller-runtime on flag.CommandLine and honoured by ctrl.GetConfig.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve the metrics over HTTPS to authenticated and authorized clients only: the caller's bearer token is checked with a TokenReview, "+
			"and a SubjectAccessReview must allow it get on the non-resource URL /metrics.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir,
		"Directory holding tls.crt and tls.key of the secure metrics endpoint (default: a self-signed certificate made at start-up).")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "Address the /healthz and /readyz endpoints bind to.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader so only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election lease (default: the pod's namespace).")
	fs.Var(stringList{&o.WatchNamespaces}, "watch-namespaces", "Comma-separated namespaces to watch for namespaced objects (default: all).")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, "How often every watched object is reconciled again even without changes.")
	fs.Func("kube-api-qps", fmt.Sprintf("Client queries per second to the API server (default %v).", o.QPS), func(s string) error {
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil || f <= 0 {
			return fmt.Errorf("want a positive number, got %q", s)
		}
		o.QPS = float32(f)
		return nil
	})
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Client burst to the API server.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Concurrent reconciles per controller.")
	fs.StringVar(&o.WatchLabelSelector, "watch-label-selector", o.WatchLabelSelector,
		"Only reconcile objects matching this label selector (e.g. cozystack.io/shard=a), for running shards; default: all.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID,
		"Name of the leader election lease (default: derived from the controller name and --watch-label-selector).")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration,
		"How long standby replicas wait before taking over a lease the leader stopped renewing (default: controller-runtime's 15s).")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline,
		"How long the leader retries renewing its lease before it gives up leading and exits (default: 10s).")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod,
		"How often leader election clients retry acquiring or renewing the lease (default: 2s).")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "Address net/http/pprof binds to (default: off).")
	o.Zap.BindFlags(fs)
}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("a controller name is required"))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", o.Workers))
	}
	if o.Burst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1, got %d", o.Burst))
	}
	if o.ResyncPeriod < 10*time.Second {
		errs = append(errs, fmt.Errorf("--resync-period must be at least 10s, got %s", o.ResyncPeriod))
	}
	if _, err := o.Selector(); err != nil {
		errs = append(errs, err)
	}
	if err := o.validateLeaderElectionTimings(); err != nil {
		errs = append(errs, err)
	}
	if o.LeaderElectionID != "" {
		if msgs := validation.IsDNS1123Subdomain(o.LeaderElectionID); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--leader-election-id %q is not a valid lease name: %s", o.LeaderElectionID, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// validateLeaderElectionTimings refuses what client-go's leader election
// would refuse at start-up, with the flags' names: a lease must outlive the
// renew deadline, which must outlast the retries (client-go jitters the retry
// period by up to 1.2 times).
func (o *Options) validateLeaderElectionTimings() error {
	lease, renew, retry := o.LeaseDuration, o.RenewDeadline, o.RetryPeriod
	if lease < 0 || renew < 0 || retry < 0 {
		return fmt.Errorf("the leader election timings must not be negative (lease %s, renew deadline %s, retry period %s)", lease, renew, retry)
	}
	if lease == 0 {
		lease = 15 * time.Second
	}
	if renew == 0 {
		renew = 10 * time.Second
	}
	if retry == 0 {
		retry = 2 * time.Second
	}
	if lease <= renew {
		return fmt.Errorf("--leader-election-lease-duration (%s) must be longer than --leader-election-renew-deadline (%s)", lease, renew)
	}
	if float64(renew) <= 1.2*float64(retry) {
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be longer than 1.2 x --leader-election-retry-period (%s)", renew, retry)
	}
	return nil
}

// Selector parses WatchLabelSelector; nil when it is empty.
func (o *Options) Selector() (labels.Selector, error) {
	if strings.TrimSpace(o.WatchLabelSelector) == "" {
		return nil, nil
	}
	sel, err := labels.Parse(o.WatchLabelSelector)
	if err != nil {
		return nil, fmt.Errorf("--watch-label-selector %q: %w", o.WatchLabelSelector, err)
	}
	if sel.Empty() {
		return nil, nil
	}
	return sel, nil
}

// LeaseName is the leader election lease: LeaderElectionID when set, else
// <name>.cozystack.io, or <name>-<hash of the selector>.cozystack.io for a
// shard so that shards never contend for one lease.
func (o *Options) LeaseName() string {
	if o.LeaderElectionID != "" {
		return o.LeaderElectionID
	}
	sel, err := o.Selector()
	if err != nil || sel == nil {
		return o.Name + ".cozystack.io"
	}
	sum := sha256.Sum256([]byte(sel.String()))
	return fmt.Sprintf("%s-%x.cozystack.io", o.Name, sum[:5])
}

// RESTConfig returns the client configuration with the options' limits and
// user agent applied.
func (o *Options) RESTConfig() (*rest.Config, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	return o.ApplyTo(cfg), nil
}

// ApplyTo sets the rate limits and user agent on a copy of cfg.
func (o *Options) ApplyTo(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS = o.QPS
	c.Burst = o.Burst
	c.UserAgent = o.Name
	return c
}

// ManagerOptions turns the options into controller-runtime manager options.
func (o *Options) ManagerOptions(scheme *runtime.Scheme) ctrl.Options {
	resync := o.ResyncPeriod
	mo := ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       o.metricsOptions(),
		HealthProbeBindAddress:        o.ProbeAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaseName(),
		PprofBindAddress:              o.PprofAddr,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 durationOrNil(o.LeaseDuration),
		RenewDeadline:                 durationOrNil(o.RenewDeadline),
		RetryPeriod:                   durationOrNil(o.RetryPeriod),
		Cache: cache.Options{
			SyncPeriod:       &resync,
			DefaultTransform: StripManagedFields,
		},
		// Reads of unstructured objects (the runtime-defined kinds and the
		// backing objects) come from the cache like typed ones; without this
		// every such read would go to the API server.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	}
	if o.Compact != nil {
		mo.Cache.DefaultTransform = compactcache.Transform(o.Compact, mo.Cache.DefaultTransform)
	}
	if o.Compact != nil || o.MetadataAnswers {
		mo.NewClient = func(cfg *rest.Config, co client.Options) (client.Client, error) {
			// Every read through the manager's client unpacks what it gets.
			if o.Compact != nil && co.Cache != nil && co.Cache.Reader != nil {
				co.Cache.Reader = compactcache.Reader{Reader: co.Cache.Reader, Match: o.Compact}
			}
			c, err := client.New(cfg, co)
			if err != nil || !o.MetadataAnswers {
				return c, err
			}
			return MetadataAnswers(c, cfg, co.HTTPClient)
		}
	}
	if len(o.WatchNamespaces) > 0 {
		mo.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.WatchNamespaces {
			mo.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if sel, _ := o.Selector(); sel != nil {
		if o.Sharded == nil {
			mo.Cache.DefaultLabelSelector = sel
		} else {
			mo.NewCache = shardedCache(sel, o.Sharded, o.wire)
		}
	}
	return mo
}

// metricsOptions serves the metrics on MetricsAddr: plain HTTP, or with
// MetricsSecure HTTPS where every request's bearer token must authenticate
// (TokenReview) and be allowed get on /metrics (SubjectAccessReview), so
// tenants' object names in the metrics' labels reach authorized scrapers
// only.
func (o *Options) metricsOptions() metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		m.SecureServing = true
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		if o.MetricsCertDir != "" {
			m.CertDir, m.CertName, m.KeyName = o.MetricsCertDir, "tls.crt", "tls.key"
		}
	}
	return m
}

// durationOrNil is &d, or nil (controller-runtime's default) for zero.
func durationOrNil(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}

// Customize adjusts the manager options a controller needs beyond the
// common ones (e.g. a label-filtered cache for a kind).
type Customize func(*ctrl.Options)

// New validates the options, sets up logging and returns a manager with
// health and readiness checks installed.
func New(o Options, scheme *runtime.Scheme, customize ...Customize) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
	if soft := setMemoryLimit(); soft > 0 {
		ctrl.Log.WithName("setup").Info("Go soft memory limit set from the container's", "bytes", soft)
	}
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the client configuration: %w", err)
	}
	return NewWithConfig(o, cfg, scheme, customize...)
}

// NewWithConfig is New with an explicit client configuration (tests).
func NewWithConfig(o Options, cfg *rest.Config, scheme *runtime.Scheme, customize ...Customize) (ctrl.Manager, error) {
	w := &wire{compact: o.Compact}
	o.wire = w
	mo := o.ManagerOptions(scheme)
	for _, c := range customize {
		c(&mo)
	}
	if mo.Cache.NewInformer == nil && !objectTransforms(mo.Cache.ByObject) {
		// Each cache's informers list in pages, and those of the packed
		// kinds read the API server's JSON themselves (wire.go).
		w.transform, w.enabled = mo.Cache.DefaultTransform, true
		newCache := mo.NewCache
		if newCache == nil {
			newCache = cache.New
		}
		mo.NewCache = func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
			opts.NewInformer = w.informers(cfg, opts)
			return newCache(cfg, opts)
		}
	}
	mgr, err := ctrl.NewManager(o.ApplyTo(cfg), mo)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("informers", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("informers not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sender, err := record.NewSender(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetLogger().WithName("events"))
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(sender); err != nil {
		return nil, err
	}
	return recordingManager{Manager: mgr, sender: sender}, nil
}

// recordingManager is a manager whose event recorders write through one
// record.Sender, which folds series keeping little of each event, rather
// than through the manager's own broadcaster, which keeps a copy of every
// event of the last six minutes.
type recordingManager struct {
	ctrl.Manager
	sender *record.Sender
}

// GetEventRecorder returns the recorder of the controller named name.
func (m recordingManager) GetEventRecorder(name string) events.EventRecorder {
	return m.sender.Recorder(m.GetScheme(), name)
}

// Start runs the manager until SIGTERM or SIGINT and exits the process with
// a non-zero status on failure.
func Start(mgr ctrl.Manager) {
	log := ctrl.Log.WithName("setup")
	log.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped with an error")
		os.Exit(1)
	}
}
