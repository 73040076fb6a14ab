package gatewayruntime

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/compactcache"
	"github.com/cozyplane/cozyplane/pkg/manager"
)

// SpecOrDeletionChanged passes creations, deletions and the updates that
// change an object's generation (its spec) or its deletion timestamp: for a
// watch whose objects' status and other metadata are no input of the
// controller. A TenantGateway's status changes a dozen times while it
// settles, as each controller writes its part.
func SpecOrDeletionChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld != nil && e.ObjectNew != nil &&
				e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	})
}

// A Trim drops from a cached object, in place, fields its controller never
// reads. It is given every object the cache stores, of any kind, and leaves
// the kinds it does not know alone.
//
// Every read through the cache then sees the object without them. A trim is
// therefore only for a field no code of the controller reads from the cache:
// not for an object it compares with what it wants (its own, applied with
// server-side apply), nor for a field its status writes compare. A status
// update sent with a trimmed object changes nothing else: the API server
// takes only the status from a write to the status subresource.
type Trim func(obj any)

// TrimmedCache is a manager.Program's Cache: it adds trims to the manager's
// cache transform, after the transforms already there (managed fields
// stripped).
func TrimmedCache(trims ...Trim) func(*manager.Options) ([]manager.Customize, error) {
	return func(*manager.Options) ([]manager.Customize, error) {
		return []manager.Customize{func(mo *ctrl.Options) {
			mo.Cache.DefaultTransform = trimmed(mo.Cache.DefaultTransform, trims)
		}}, nil
	}
}

func trimmed(next toolscache.TransformFunc, trims []Trim) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if next != nil {
			var err error
			if obj, err = next(obj); err != nil {
				return nil, err
			}
		}
		for _, t := range trims {
			t(obj)
		}
		return obj, nil
	}
}

// TrimTenantGatewayListeners drops status.listeners from TenantGateways: for
// the controllers that neither write nor read them (all but
// gateway-listeners). A TenantGateway of 13 listeners is less than half its
// size without them.
func TrimTenantGatewayListeners(obj any) {
	if t, ok := obj.(*gatewayv1alpha1.TenantGateway); ok {
		t.Status.Listeners = nil
	}
}

// TrimListenerRoutes drops spec.listeners[].allowedRoutes from Gateways: for
// gateway-certs, which reads a Gateway's listeners for their hostnames and
// certificates only. A label selector and a list of kinds on each of a
// Gateway's listeners are most of its size.
func TrimListenerRoutes(obj any) {
	if g, ok := obj.(*gatewayv1.Gateway); ok {
		for i := range g.Spec.Listeners {
			g.Spec.Listeners[i].AllowedRoutes = nil
		}
	}
}

// ShareAllowedRoutes makes the listeners of a Gateway whose allowedRoutes
// are equal share one copy: a Gateway that TenantGateway controls has the
// same on every HTTPS and passthrough listener, some dozen of them. Reads
// through the cache get deep copies, so no reader sees the sharing.
func ShareAllowedRoutes(obj any) {
	g, ok := obj.(*gatewayv1.Gateway)
	if !ok {
		return
	}
	var seen []*gatewayv1.AllowedRoutes
	for i := range g.Spec.Listeners {
		a := g.Spec.Listeners[i].AllowedRoutes
		if a == nil {
			continue
		}
		for _, s := range seen {
			if reflect.DeepEqual(s, a) {
				g.Spec.Listeners[i].AllowedRoutes = s
				a = nil
				break
			}
		}
		if a != nil {
			seen = append(seen, a)
		}
	}
}

// TrimRoutes drops spec.rules from HTTPRoutes and TLSRoutes that no
// TenantGateway controls and, when annotations, their annotations too: what
// a route asks of a Gateway is in its parentRefs and hostnames, and its
// verdicts in its status. Annotations only for a controller that never
// writes those routes: a status update carries the object's metadata. The
// routes a TenantGateway controls (the redirect route) are compared with
// what gateway-listeners wants, and are kept whole.
func TrimRoutes(annotations bool) Trim {
	return func(obj any) {
		var m *metav1.ObjectMeta
		switch r := obj.(type) {
		case *gatewayv1.HTTPRoute:
			if controlledByTenantGateway(&r.ObjectMeta) {
				return
			}
			r.Spec.Rules, m = nil, &r.ObjectMeta
		case *gatewayv1.TLSRoute:
			if controlledByTenantGateway(&r.ObjectMeta) {
				return
			}
			r.Spec.Rules, m = nil, &r.ObjectMeta
		default:
			return
		}
		if annotations {
			m.Annotations = nil
		}
	}
}

// controlledByTenantGateway reports whether m names a TenantGateway as its
// controller, any one: it only decides what the cache keeps of a route
// (keeping more is never wrong). Whether a route is a given TenantGateway's
// own is decided on the whole identity (ControlledBy).
func controlledByTenantGateway(m *metav1.ObjectMeta) bool {
	ref := metav1.GetControllerOfNoCopy(m)
	return ref != nil && ref.Kind == TenantGatewayGVK.Kind && ref.APIVersion == gatewayv1alpha1.GroupVersion.String()
}

// ShareStrings makes the strings of a cached typed object share one copy
// with the equal strings of the objects cached before it
// (compactcache.Intern): namespaces, label keys and values, the group,
// kind and namespace of every reference, condition types, reasons and
// messages repeat across thousands of TenantGateways, routes, Gateways and
// Certificates, and the decoder allocates each anew. The object's uid and
// resourceVersion, its own, are left as they are. Strings behind a pointer
// (a reference's group or kind) share their bytes too; the pointers stay
// the object's own. A read through the cache gets a deep copy, whose strings
// share the same bytes, which is safe: Go strings are immutable.
func ShareStrings(obj any) {
	shareValue(reflect.ValueOf(obj), "")
}

func shareValue(v reflect.Value, field string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			shareValue(v.Elem(), field)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				shareValue(f, t.Field(i).Name)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes (raw JSON): not strings
		}
		for i := range v.Len() {
			shareValue(v.Index(i), "")
		}
	case reflect.Map:
		if v.Len() == 0 || v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String || !v.CanSet() {
			return
		}
		shared := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.SetString(compactcache.Intern(it.Key().String()))
			e.SetString(compactcache.Intern(it.Value().String()))
			shared.SetMapIndex(k, e)
		}
		v.Set(shared)
	case reflect.String:
		if v.CanSet() && field != "UID" && field != "ResourceVersion" {
			v.SetString(compactcache.Intern(v.String()))
		}
	}
}
