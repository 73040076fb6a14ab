package gatewayruntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// IndexParentGateway indexes HTTPRoutes and TLSRoutes by the Gateways their
// parentRefs name, as "<namespace>/<name>".
const IndexParentGateway = "gateway.cozystack.io/parent-gateway"

// Route is a route attached to a TenantGateway's Gateway.
type Route struct {
	Key       tenantgateway.RouteKey
	Hostnames []string
	Labels    map[string]string
	// Object is the *gatewayv1.HTTPRoute or *gatewayv1.TLSRoute read. Read
	// from a cache, it shares its fields with the cached object: it is
	// read, never changed (copy it first: DeepCopyObject).
	Object client.Object
}

// Ref is the route as conflict resolution sees it.
func (r Route) Ref() tenantgateway.RouteRef {
	return tenantgateway.RouteRef{Key: r.Key, Hostnames: r.Hostnames, Labels: r.Labels}
}

// IsSolver reports whether the route is one of cert-manager's HTTP-01
// challenge routes.
func (r Route) IsSolver() bool {
	return r.Labels[gatewayv1alpha1.LabelHTTP01Solver] == "true"
}

// ParentGateways returns the "<namespace>/<name>" of every Gateway the
// parentRefs point at (group and kind default to Gateway API's Gateway, the
// namespace to the route's own).
func ParentGateways(namespace string, refs []gatewayv1.ParentReference) []string {
	var out []string
	seen := map[string]bool{}
	for _, ref := range refs {
		if k, ok := tenantgateway.ParentRef(ref).GatewayKey(namespace); ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// SetupIndexes registers IndexParentGateway for HTTPRoutes and TLSRoutes.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	for _, obj := range []client.Object{&gatewayv1.HTTPRoute{}, &gatewayv1.TLSRoute{}} {
		if err := indexer.IndexField(ctx, obj, IndexParentGateway, func(o client.Object) []string {
			return ParentGateways(o.GetNamespace(), RouteParentRefs(o))
		}); err != nil {
			return fmt.Errorf("indexing %T: %w", obj, err)
		}
	}
	return nil
}

// Admits reports whether the Gateway of a TenantGateway in ownerNamespace
// admits routes from a namespace with these name and labels: the owner
// namespace itself, or one labelled namespace.cozystack.io/gateway=<owner>.
func Admits(ownerNamespace, namespace string, labels map[string]string) bool {
	return namespace == ownerNamespace || labels[gatewayv1alpha1.LabelNamespaceGateway] == ownerNamespace
}

// AttachedRoutes lists the HTTPRoutes and TLSRoutes whose parentRefs name the
// Gateway of tgw, from namespaces that Gateway admits, sorted by kind,
// namespace and name. Routes the TenantGateway itself controls (the redirect
// route) are left out. reader must have IndexParentGateway (a cache set up
// with SetupIndexes). A cache does not copy the routes it returns: a
// Gateway's routes, thousands of them, are read on every reconcile of it,
// and only read.
func AttachedRoutes(ctx context.Context, reader client.Reader, tgw *gatewayv1alpha1.TenantGateway) ([]Route, error) {
	gw := tgw.Namespace + "/" + names.Gateway(tgw.Name)
	admitted := map[string]bool{}
	admits := func(ns string) (bool, error) {
		if ok, seen := admitted[ns]; seen {
			return ok, nil
		}
		var n corev1.Namespace
		err := reader.Get(ctx, types.NamespacedName{Name: ns}, &n)
		switch {
		case apierrors.IsNotFound(err):
			admitted[ns] = false
		case err != nil:
			return false, fmt.Errorf("reading namespace %s: %w", ns, err)
		default:
			admitted[ns] = Admits(tgw.Namespace, ns, n.Labels)
		}
		return admitted[ns], nil
	}
	var out []Route
	add := func(kind string, obj client.Object, hostnames []gatewayv1.Hostname) error {
		if ControlledBy(obj, tgw) {
			return nil
		}
		ok, err := admits(obj.GetNamespace())
		if err != nil || !ok {
			return err
		}
		hs := make([]string, len(hostnames))
		for i, h := range hostnames {
			hs[i] = string(h)
		}
		out = append(out, Route{
			Key:       tenantgateway.RouteKey{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()},
			Hostnames: hs, Labels: obj.GetLabels(), Object: obj,
		})
		return nil
	}
	var https gatewayv1.HTTPRouteList
	if err := reader.List(ctx, &https, client.MatchingFields{IndexParentGateway: gw}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing HTTPRoutes: %w", err)
	}
	for i := range https.Items {
		if err := add(tenantgateway.KindHTTPRoute, &https.Items[i], https.Items[i].Spec.Hostnames); err != nil {
			return nil, err
		}
	}
	var tlss gatewayv1.TLSRouteList
	if err := reader.List(ctx, &tlss, client.MatchingFields{IndexParentGateway: gw}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing TLSRoutes: %w", err)
	}
	for i := range tlss.Items {
		if err := add(tenantgateway.KindTLSRoute, &tlss.Items[i], tlss.Items[i].Spec.Hostnames); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RouteParentRefs returns the spec.parentRefs of an HTTPRoute or TLSRoute.
func RouteParentRefs(obj client.Object) []gatewayv1.ParentReference {
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		return r.Spec.ParentRefs
	case *gatewayv1.TLSRoute:
		return r.Spec.ParentRefs
	}
	return nil
}

// RouteParents returns the status.parents of an HTTPRoute or TLSRoute.
func RouteParents(obj client.Object) []gatewayv1.RouteParentStatus {
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		return r.Status.Parents
	case *gatewayv1.TLSRoute:
		return r.Status.Parents
	}
	return nil
}
