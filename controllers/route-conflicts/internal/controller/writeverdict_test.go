package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/route-conflicts/internal/verdicts"
	"github.com/cozyplane/cozyplane/pkg/gatewayruntime"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// countingReader counts the fresh reads writeVerdict makes.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestWriteVerdict checks that a verdict is written from the cached copy when
// it is current, and that a stale cached copy never overwrites an entry the
// Gateway implementation wrote after it: the write is refused and redone on
// a fresh read.
func TestWriteVerdict(t *testing.T) {
	const gwNS, gwName = "tenant-a", "public"
	cilium := gatewayv1.RouteParentStatus{
		ParentRef:      gatewayv1.ParentReference{Name: gwName},
		ControllerName: "io.cilium/gateway-controller",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
			LastTransitionTime: metav1.Now()}},
	}
	loser := verdicts.Verdict{Accepted: false, Reason: "HostnameConflict", Message: "lost to HTTPRoute tenant-a/web"}

	for _, tc := range []struct {
		name      string
		stale     bool // the implementation writes its entry after the cache was filled
		wantGets  int
		wantOther bool
	}{
		{name: "current cache", stale: false, wantGets: 0, wantOther: false},
		{name: "stale cache", stale: true, wantGets: 1, wantOther: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			scheme, route := attachedRoute(t, gwNS, gwName)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(route).WithStatusSubresource(route).Build()
			cached := &gatewayv1.HTTPRoute{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(route), cached); err != nil {
				t.Fatal(err)
			}
			if tc.stale {
				latest := cached.DeepCopy()
				latest.Status.Parents = []gatewayv1.RouteParentStatus{cilium}
				latest.Status.Parents[0].ParentRef.Namespace = ptr(gatewayv1.Namespace(gwNS))
				if err := c.Status().Update(ctx, latest); err != nil {
					t.Fatal(err)
				}
			}
			reader := &countingReader{Reader: c}
			r := &Reconciler{Base: gatewayruntime.Base{Client: c, APIReader: reader, Name: "route-conflicts"}}
			byRoute := map[tenantgateway.RouteKey]verdicts.Verdict{
				{Kind: tenantgateway.KindHTTPRoute, Namespace: "tenant-b", Name: "web"}: loser,
			}
			read := cached.DeepCopy()
			if err := r.writeVerdict(ctx, cached, gwNS, gwName, byRoute); err != nil {
				t.Fatal(err)
			}
			// The cache's own object, which reconcile passes uncopied, is
			// never changed: the write is made on a copy.
			if !equality.Semantic.DeepEqual(cached, read) {
				t.Errorf("writeVerdict changed the cached route: %+v, was %+v", cached.Status, read.Status)
			}
			if reader.gets != tc.wantGets {
				t.Errorf("fresh reads: got %d, want %d", reader.gets, tc.wantGets)
			}
			var got gatewayv1.HTTPRoute
			if err := c.Get(ctx, client.ObjectKeyFromObject(route), &got); err != nil {
				t.Fatal(err)
			}
			var ours, other int
			for _, p := range got.Status.Parents {
				switch string(p.ControllerName) {
				case gatewayv1alpha1.RouteConflictControllerName:
					ours++
					if len(p.Conditions) != 1 || p.Conditions[0].Reason != "HostnameConflict" || p.Conditions[0].Status != metav1.ConditionFalse {
						t.Errorf("our entry: %+v", p.Conditions)
					}
				case string(cilium.ControllerName):
					other++
				}
			}
			if ours != 1 {
				t.Errorf("our entries: got %d, want 1 (%+v)", ours, got.Status.Parents)
			}
			if (other == 1) != tc.wantOther {
				t.Errorf("implementation entries: got %d, want present=%v", other, tc.wantOther)
			}

			// Settled: a second pass with the current copy writes nothing.
			rv := got.ResourceVersion
			if err := r.writeVerdict(ctx, &got, gwNS, gwName, byRoute); err != nil {
				t.Fatal(err)
			}
			var again gatewayv1.HTTPRoute
			if err := c.Get(ctx, client.ObjectKeyFromObject(route), &again); err != nil {
				t.Fatal(err)
			}
			if again.ResourceVersion != rv {
				t.Errorf("a settled route was written again")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// attachedRoute is an HTTPRoute of tenant-b attached to the Gateway
// gwNS/gwName, and the scheme a fake client of it needs.
func attachedRoute(t *testing.T, gwNS string, gwName gatewayv1.ObjectName) (*runtime.Scheme, *gatewayv1.HTTPRoute) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := gatewayv1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme, &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "web", Generation: 1},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
			Name: gwName, Namespace: ptr(gatewayv1.Namespace(gwNS))}}}},
	}
}

// TestWriteVerdictBehindOwnWrite checks that a reconcile which still sees a
// route as it was before our own last write decides on that write: nothing
// is written when the verdict is the one written, and a new verdict is
// written over our write's version, not refused as a Conflict and read again.
func TestWriteVerdictBehindOwnWrite(t *testing.T) {
	const gwNS, gwName = "tenant-a", "public"
	ctx := context.Background()
	scheme, route := attachedRoute(t, gwNS, gwName)
	updates, conflicts := 0, 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(route).WithStatusSubresource(route).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			updates++
			err := c.SubResource(sub).Update(ctx, o, opts...)
			if apierrors.IsConflict(err) {
				conflicts++
			}
			return err
		}}).Build()
	// The cache's copy, before any write of ours; it stays so throughout.
	stale := &gatewayv1.HTTPRoute{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(route), stale); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: c}
	r := &Reconciler{Base: gatewayruntime.Base{Client: c, APIReader: reader, Name: "route-conflicts"}}
	key := tenantgateway.RouteKey{Kind: tenantgateway.KindHTTPRoute, Namespace: "tenant-b", Name: "web"}
	loser := verdicts.Verdict{Accepted: false, Reason: "HostnameConflict", Message: "lost to HTTPRoute tenant-a/web"}
	winner := verdicts.Verdict{Accepted: true}

	for _, step := range []struct {
		name        string
		verdict     verdicts.Verdict
		wantUpdates int
		wantReason  string
	}{
		{"first verdict", loser, 1, "HostnameConflict"},
		{"same verdict, cache behind", loser, 0, "HostnameConflict"},
		{"new verdict, cache behind", winner, 1, "Accepted"},
		{"same again, cache behind", winner, 0, "Accepted"},
	} {
		updates, conflicts, reader.gets = 0, 0, 0
		if err := r.writeVerdict(ctx, stale.DeepCopy(), gwNS, gwName, map[tenantgateway.RouteKey]verdicts.Verdict{key: step.verdict}); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if updates != step.wantUpdates || conflicts != 0 || reader.gets != 0 {
			t.Errorf("%s: %d status writes (want %d), %d conflicts, %d fresh reads (want 0, 0)",
				step.name, updates, step.wantUpdates, conflicts, reader.gets)
		}
		var got gatewayv1.HTTPRoute
		if err := c.Get(ctx, client.ObjectKeyFromObject(route), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Parents) != 1 || got.Status.Parents[0].Conditions[0].Reason != step.wantReason {
			t.Errorf("%s: status.parents = %+v, want one entry of reason %s", step.name, got.Status.Parents, step.wantReason)
		}
	}

	// The cache catches up: the write is forgotten and the current copy
	// decides, with nothing to write.
	var current gatewayv1.HTTPRoute
	if err := c.Get(ctx, client.ObjectKeyFromObject(route), &current); err != nil {
		t.Fatal(err)
	}
	updates = 0
	if err := r.writeVerdict(ctx, &current, gwNS, gwName, map[tenantgateway.RouteKey]verdicts.Verdict{key: winner}); err != nil {
		t.Fatal(err)
	}
	if updates != 0 || r.written.Len() != 0 {
		t.Errorf("caught up: %d writes, %d remembered; want 0, 0", updates, r.written.Len())
	}
}
