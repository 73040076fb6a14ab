package controller

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// One API server for the package; every test uses its own kinds.
var (
	k8s    client.Client // uncached, for the tests' own reads and writes
	writes *countingClient
	rec    *Reconciler
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("APPDEF_TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	crd, err := testenv.CRDFromFile("api/crds/cozystack.io_applicationdefinitions.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env, err := testenv.Start(crd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, cozyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	k8s, err = client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	// The instance keys policy and binding, as the policies chart installs them.
	policy, binding := instanceKeysObjects(fatalTB{})
	for _, o := range []client.Object{policy, binding} {
		if err := k8s.Create(context.Background(), o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}

	opts := manager.NewOptions("cozystack-appdef")
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme, CacheOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	writes = &countingClient{Client: mgr.GetClient()}
	md, err := metadata.NewForConfig(env.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rec = &Reconciler{
		Client:                 writes,
		APIReader:              mgr.GetAPIReader(),
		Metadata:               md,
		FieldManager:           "cozystack-appdef",
		Workers:                2,
		InstancePollInterval:   300 * time.Millisecond,
		ForeignRecheckInterval: time.Second,
	}
	if err := rec.SetupWithManager(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		cancel()
		return 1
	}
	code := m.Run()
	cancel()
	wg.Wait()
	return code
}

// fatalTB is the part of testing.TB instanceKeysObjects uses, for TestMain.
type fatalTB struct{ testing.TB }

func (fatalTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

func (fatalTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// countingClient counts the writes the reconciler makes.
type countingClient struct {
	client.Client
	n atomic.Int64
}

func (c *countingClient) Writes() int64 { return c.n.Load() }

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.n.Add(1)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.n.Add(1)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.n.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.n.Add(1)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.n.Add(1)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.n.Add(1)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), n: &c.n}
}

type countingStatus struct {
	client.SubResourceWriter
	n *atomic.Int64
}

func (s countingStatus) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (s countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}
