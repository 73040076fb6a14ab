package manager

import (
	"context"
	"flag"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func parse(t *testing.T, args ...string) Options {
	t.Helper()
	o := NewOptions("cozystack-helm")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestShardFlags(t *testing.T) {
	o := parse(t, "--watch-label-selector=cozystack.io/shard in (a, b)", "--pprof-bind-address=127.0.0.1:6060")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	sel, err := o.Selector()
	if err != nil || sel == nil || !sel.Matches(labels.Set{"cozystack.io/shard": "b"}) || sel.Matches(labels.Set{"cozystack.io/shard": "c"}) {
		t.Fatalf("selector %v, %v", sel, err)
	}
	mo := o.ManagerOptions(runtime.NewScheme())
	if mo.PprofBindAddress != "127.0.0.1:6060" {
		t.Fatalf("pprof address %q", mo.PprofBindAddress)
	}
	// Without Sharded the selector applies to every kind, as in Flux.
	if mo.Cache.DefaultLabelSelector == nil || mo.NewCache != nil {
		t.Fatalf("selector not applied to the default cache: %+v", mo.Cache)
	}
	o.Sharded = func(gvk schema.GroupVersionKind) bool { return gvk.Group == "apps.cozystack.io" }
	mo = o.ManagerOptions(runtime.NewScheme())
	if mo.Cache.DefaultLabelSelector != nil || mo.NewCache == nil {
		t.Fatalf("sharded kinds need their own cache: %+v", mo.Cache)
	}

	// Unsharded: no selector, no cache of its own, the usual lease.
	plain := parse(t)
	if sel, err := plain.Selector(); sel != nil || err != nil {
		t.Fatalf("empty selector parsed as %v, %v", sel, err)
	}
	if plain.LeaseName() != "cozystack-helm.cozystack.io" || plain.ManagerOptions(runtime.NewScheme()).NewCache != nil {
		t.Fatalf("unsharded lease %q", plain.LeaseName())
	}
}

func TestLeaseName(t *testing.T) {
	a := parse(t, "--watch-label-selector=cozystack.io/shard=a")
	b := parse(t, "--watch-label-selector=cozystack.io/shard=b")
	a2 := parse(t, "--watch-label-selector= cozystack.io/shard = a ")
	if a.LeaseName() == b.LeaseName() || a.LeaseName() == "cozystack-helm.cozystack.io" {
		t.Fatalf("shards share a lease: %q %q", a.LeaseName(), b.LeaseName())
	}
	if a.LeaseName() != a2.LeaseName() {
		t.Fatalf("one selector, two spellings, two leases: %q %q", a.LeaseName(), a2.LeaseName())
	}
	if !strings.HasPrefix(a.LeaseName(), "cozystack-helm-") {
		t.Fatalf("lease %q does not name the controller", a.LeaseName())
	}
	id := parse(t, "--watch-label-selector=cozystack.io/shard=a", "--leader-election-id=helm-shard-a")
	if err := id.Validate(); err != nil || id.LeaseName() != "helm-shard-a" ||
		id.ManagerOptions(runtime.NewScheme()).LeaderElectionID != "helm-shard-a" {
		t.Fatalf("explicit lease %q (%v)", id.LeaseName(), err)
	}
}

func TestShardValidate(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"--watch-label-selector=a in b", "--watch-label-selector"},
		{"--watch-label-selector=!!", "--watch-label-selector"},
		{"--leader-election-id=Not_A_Name", "--leader-election-id"},
	} {
		o := parse(t, tt.arg)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want mention of %s", tt.arg, err, tt.want)
		}
	}
}

func TestPrefixedRequirements(t *testing.T) {
	sel, err := labels.Parse("cozystack.io/shard=a,tier!=gold,zone in (x,y),!legacy")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := PrefixedRequirements(sel, "apps.cozystack.io-")
	if err != nil {
		t.Fatal(err)
	}
	got := labels.NewSelector().Add(reqs...)
	want := "apps.cozystack.io-cozystack.io/shard=a,!apps.cozystack.io-legacy,apps.cozystack.io-tier!=gold,apps.cozystack.io-zone in (x,y)"
	if got.String() != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if !got.Matches(labels.Set{"apps.cozystack.io-cozystack.io/shard": "a", "apps.cozystack.io-zone": "y"}) ||
		got.Matches(labels.Set{"cozystack.io/shard": "a", "zone": "y"}) {
		t.Fatal("prefixed selector matches the wrong objects")
	}
	if r, err := PrefixedRequirements(nil, "p-"); r != nil || err != nil {
		t.Fatalf("nil selector: %v %v", r, err)
	}
	long, _ := labels.Parse(strings.Repeat("k", 60) + "=v")
	if _, err := PrefixedRequirements(long, "apps.cozystack.io-"); err == nil {
		t.Fatal("a key too long once prefixed was accepted")
	}
}

// recorder is a cache that records which objects reached it.
type recorder struct {
	cache.Cache
	got []string
}

func (r *recorder) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.got = append(r.got, "get "+obj.GetObjectKind().GroupVersionKind().Kind+" "+key.Name)
	return nil
}

func (r *recorder) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	r.got = append(r.got, "list "+list.GetObjectKind().GroupVersionKind().Kind)
	return nil
}

func (r *recorder) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	r.got = append(r.got, "informer "+obj.GetObjectKind().GroupVersionKind().Kind)
	return nil, nil
}

func (r *recorder) GetInformerForKind(_ context.Context, gvk schema.GroupVersionKind, _ ...cache.InformerGetOption) (cache.Informer, error) {
	r.got = append(r.got, "informer "+gvk.Kind)
	return nil, nil
}

func TestByKindCacheRoutes(t *testing.T) {
	shard, all := &recorder{}, &recorder{}
	c := &byKindCache{scheme: runtime.NewScheme(), shard: shard, all: all,
		sharded: func(gvk schema.GroupVersionKind) bool { return gvk.Group == "apps.cozystack.io" }}
	ctx := context.Background()
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "Bench"})
	instList := &unstructured.UnstructuredList{}
	instList.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.cozystack.io", Version: "v1alpha1", Kind: "BenchList"})
	hr := &metav1.PartialObjectMetadata{}
	hr.SetGroupVersionKind(schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"})
	mustNil(t, c.Get(ctx, client.ObjectKey{Name: "x"}, inst))
	mustNil(t, c.List(ctx, instList))
	_, err := c.GetInformer(ctx, inst)
	mustNil(t, err)
	mustNil(t, c.Get(ctx, client.ObjectKey{Name: "y"}, hr))
	_, err = c.GetInformerForKind(ctx, hr.GroupVersionKind())
	mustNil(t, err)
	if strings.Join(shard.got, ",") != "get Bench x,list BenchList,informer Bench" {
		t.Errorf("shard cache got %v", shard.got)
	}
	if strings.Join(all.got, ",") != "get HelmRelease y,informer HelmRelease" {
		t.Errorf("whole cache got %v", all.got)
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
