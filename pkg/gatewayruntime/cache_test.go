package gatewayruntime

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ssa"
)

func admitting(ns string) *gatewayv1.AllowedRoutes {
	return &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSelector),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{gatewayv1alpha1.LabelNamespaceGateway: ns}}}}
}

// TestShareAllowedRoutes: listeners with equal allowedRoutes end up sharing
// one copy, a different one keeps its own, and a deep copy of the Gateway
// (what a read through the cache returns) is equal to the Gateway before.
func TestShareAllowedRoutes(t *testing.T) {
	gw := &gatewayv1.Gateway{Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{
		{Name: "http", AllowedRoutes: admitting("cozy-cert-manager")},
		{Name: "a", AllowedRoutes: admitting("tenant-a")},
		{Name: "b", AllowedRoutes: admitting("tenant-a")},
		{Name: "c", AllowedRoutes: admitting("tenant-a")},
		{Name: "d"},
	}}}
	before := gw.DeepCopy()
	ShareAllowedRoutes(gw)
	ls := gw.Spec.Listeners
	if ls[1].AllowedRoutes != ls[2].AllowedRoutes || ls[2].AllowedRoutes != ls[3].AllowedRoutes {
		t.Error("equal allowedRoutes are not shared")
	}
	if ls[0].AllowedRoutes == ls[1].AllowedRoutes || ls[4].AllowedRoutes != nil {
		t.Error("different allowedRoutes were merged")
	}
	read := gw.DeepCopy()
	if !reflect.DeepEqual(read, before) {
		t.Errorf("a read of the shared Gateway differs:\n%+v\nwant\n%+v", read.Spec.Listeners, before.Spec.Listeners)
	}
	if read.Spec.Listeners[1].AllowedRoutes == read.Spec.Listeners[2].AllowedRoutes {
		t.Error("a deep copy shares what the cache shares: a reader changing one listener would change another")
	}
}

// TestTrims: each trim drops its fields from its kind and leaves other kinds
// and the controlled routes alone.
func TestTrims(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: gatewayv1alpha1.GroupVersion.String(), Kind: "TenantGateway", Name: "cozystack",
		UID: "u", Controller: ptr.To(true)}
	rules := []gatewayv1.HTTPRouteRule{{Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: ptr.To("/")}}}}}
	route := func(controlled bool) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "app", Annotations: map[string]string{"a": "b"}},
			Spec: gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"app.example.org"}, Rules: rules}}
		if controlled {
			r.OwnerReferences = []metav1.OwnerReference{owner}
		}
		return r
	}
	tlsRoute := &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}},
		Spec: gatewayv1.TLSRouteSpec{Rules: []gatewayv1.TLSRouteRule{{}}}}

	for _, annotations := range []bool{false, true} {
		r := route(false)
		TrimRoutes(annotations)(r)
		if r.Spec.Rules != nil || len(r.Spec.Hostnames) != 1 {
			t.Errorf("TrimRoutes(%v) left rules %v, hostnames %v", annotations, r.Spec.Rules, r.Spec.Hostnames)
		}
		if (r.Annotations == nil) != annotations {
			t.Errorf("TrimRoutes(%v) left annotations %v", annotations, r.Annotations)
		}
		own := route(true)
		TrimRoutes(annotations)(own)
		if !reflect.DeepEqual(own, route(true)) {
			t.Errorf("TrimRoutes(%v) trimmed a route the TenantGateway controls: %+v", annotations, own)
		}
	}
	tls := tlsRoute.DeepCopy()
	TrimRoutes(true)(tls)
	if tls.Spec.Rules != nil || tls.Annotations != nil {
		t.Errorf("TrimRoutes left a TLSRoute's rules or annotations: %+v", tls)
	}

	tgw := &gatewayv1alpha1.TenantGateway{Status: gatewayv1alpha1.TenantGatewayStatus{
		Conditions: []metav1.Condition{{Type: "Ready"}}, Listeners: []gatewayv1alpha1.TenantGatewayListenerStatus{{Name: "http"}}}}
	TrimTenantGatewayListeners(tgw)
	if tgw.Status.Listeners != nil || len(tgw.Status.Conditions) != 1 {
		t.Errorf("TrimTenantGatewayListeners left %+v", tgw.Status)
	}

	gw := &gatewayv1.Gateway{Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "a", AllowedRoutes: admitting("t")}}}}
	TrimListenerRoutes(gw)
	if gw.Spec.Listeners[0].AllowedRoutes != nil || gw.Spec.Listeners[0].Name != "a" {
		t.Errorf("TrimListenerRoutes left %+v", gw.Spec.Listeners[0])
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"a": "b"}}}
	for _, trim := range []Trim{TrimRoutes(true), TrimTenantGatewayListeners, TrimListenerRoutes, ShareAllowedRoutes} {
		trim(ns)
	}
	if ns.Annotations["a"] != "b" {
		t.Error("a trim changed an object of another kind")
	}
}

// TestTrimmedAfterNext: the trims run on what the transform before them
// returned, and its error stops them.
func TestTrimmedAfterNext(t *testing.T) {
	var order []string
	next := func(o any) (any, error) { order = append(order, "next"); return o, nil }
	trim := func(any) { order = append(order, "trim") }
	if _, err := trimmed(next, []Trim{trim, trim})(&corev1.Namespace{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"next", "trim", "trim"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	failing := func(any) (any, error) { return nil, errors.New("no") }
	order = nil
	if _, err := trimmed(failing, []Trim{trim})(&corev1.Namespace{}); err == nil || len(order) != 0 {
		t.Errorf("err %v, trims run %v", err, order)
	}
	if o, err := trimmed(nil, []Trim{trim})("x"); err != nil || o != "x" {
		t.Errorf("no next: %v, %v", o, err)
	}
}

// TestSpecOrDeletionChanged: a status-only update is ignored; a spec change
// (generation) and the start of a deletion pass, as do creations and
// deletions.
func TestSpecOrDeletionChanged(t *testing.T) {
	obj := func(gen int64, deleting bool, conds int) *gatewayv1alpha1.TenantGateway {
		o := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		if deleting {
			o.DeletionTimestamp = ptr.To(metav1.Now())
		}
		for range conds {
			o.Status.Conditions = append(o.Status.Conditions, metav1.Condition{Type: "Ready"})
		}
		return o
	}
	p := SpecOrDeletionChanged()
	for _, c := range []struct {
		name     string
		old, new *gatewayv1alpha1.TenantGateway
		want     bool
	}{
		{"status only", obj(1, false, 0), obj(1, false, 1), false},
		{"spec", obj(1, false, 1), obj(2, false, 1), true},
		{"deletion starts", obj(1, false, 1), obj(1, true, 1), true},
		{"deleting, status", obj(1, true, 1), obj(1, true, 2), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: c.old, ObjectNew: c.new}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: obj(1, false, 0)}) || !p.Delete(event.DeleteEvent{Object: obj(1, false, 0)}) {
		t.Error("a creation or a deletion was ignored")
	}
}

// TestPlainCreates: an absent object is created with one create; one the
// cache does not show yet but that exists (the cache lags) is left as it is,
// whoever made it: no write, no takeover, no error, no event.
func TestPlainCreates(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{gatewayv1.Install, gatewayv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	tgw := &gatewayv1alpha1.TenantGateway{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "cozystack", UID: "tgw-uid"}}
	theirs := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "taken"},
		Spec: gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"theirs.example.org"}}}
	var created, gets []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tgw, theirs).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			created = append(created, obj.GetName())
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets = append(gets, key.Name)
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	a := OwnedApplier{Client: c, APIReader: c, FieldManager: "cozystack-test", PlainCreates: true}
	gvk := gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute")
	want := func(name string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: name},
			Spec: gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"ours.example.org"}}}
	}
	ctx := context.Background()

	fresh := want("fresh")
	res, err := a.Apply(ctx, tgw, fresh, gvk, nil)
	if err != nil || res != ssa.Created || fresh.ResourceVersion == "" {
		t.Errorf("absent: %v, %v, resourceVersion %q; want created, and desired as the API server returned it", res, err, fresh.ResourceVersion)
	}
	res, err = a.Apply(ctx, tgw, want("taken"), gvk, nil)
	if err != nil || res != ssa.Unchanged {
		t.Errorf("the cache lags: %v, %v; want unchanged, no error", res, err)
	}
	if len(gets) != 0 {
		t.Errorf("reads %v: a plain create asks nothing first", gets)
	}
	var live gatewayv1.HTTPRoute
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), &live); err != nil || live.Spec.Hostnames[0] != "theirs.example.org" || len(live.OwnerReferences) != 0 {
		t.Errorf("the existing route changed: %+v, %v", live, err)
	}
	if want := []string{"fresh", "taken"}; !reflect.DeepEqual(created, want) {
		t.Errorf("creates %v, want %v", created, want)
	}
}

// TestShareStrings: equal strings of two objects share their bytes after
// the trim, the objects are unchanged, and their uids and versions are left
// as they are.
func TestShareStrings(t *testing.T) {
	route := func() *gatewayv1.HTTPRoute {
		// Each string built at run time: nothing shared to begin with.
		s := func(v string) string { return strings.Clone(v) }
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: s("tenant-a"), Name: s("app"), UID: types.UID(s("uid-1")), ResourceVersion: s("7"),
				Labels: map[string]string{s("app.kubernetes.io/name"): s("shop")}},
			Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Group: ptr.To(gatewayv1.Group(s("gateway.networking.k8s.io"))), Name: gatewayv1.ObjectName(s("cozystack"))}}}},
			Status: gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{
				ControllerName: gatewayv1.GatewayController(s("gateway.cozystack.io/route-conflicts")),
				Conditions:     []metav1.Condition{{Type: s("Accepted"), Reason: s("Accepted"), Message: s("no other namespace claims its hostnames")}},
			}}}},
		}
	}
	a, b := route(), route()
	want := route()
	ShareStrings(a)
	ShareStrings(b)
	if !reflect.DeepEqual(a, want) || !reflect.DeepEqual(b, want) {
		t.Fatalf("the trim changed the route:\n%+v\nwant\n%+v", a, want)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for _, c := range []struct {
		what string
		x, y string
	}{
		{"namespace", a.Namespace, b.Namespace},
		{"name", a.Name, b.Name},
		{"a parentRef's group", string(*a.Spec.ParentRefs[0].Group), string(*b.Spec.ParentRefs[0].Group)},
		{"a controller name", string(a.Status.Parents[0].ControllerName), string(b.Status.Parents[0].ControllerName)},
		{"a condition message", a.Status.Parents[0].Conditions[0].Message, b.Status.Parents[0].Conditions[0].Message},
	} {
		if !same(c.x, c.y) {
			t.Errorf("%s: not shared", c.what)
		}
	}
	for k, v := range a.Labels {
		for k2, v2 := range b.Labels {
			if !same(k, k2) || !same(v, v2) {
				t.Error("a label: not shared")
			}
		}
	}
	if same(string(a.UID), string(b.UID)) || same(a.ResourceVersion, b.ResourceVersion) {
		t.Error("a uid or a resourceVersion went into the shared table")
	}
}
