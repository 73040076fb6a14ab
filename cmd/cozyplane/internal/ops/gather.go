package ops

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ownerref"
)

// labelApplicationNamespace names the instance's namespace on a backing
// object kept in a platform namespace.
const labelApplicationNamespace = "apps.cozystack.io/application.namespace"

// Gatherer reads what the commands need from the API server.
type Gatherer struct {
	Client    dynamic.Interface
	Discovery discovery.DiscoveryInterface
	Mapper    meta.RESTMapper
}

// Kinds lists the kinds served in group/version (none when the group is not
// served at all).
func (g *Gatherer) Kinds(groupVersion string) ([]Resource, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		return nil, err
	}
	list, err := g.Discovery.ServerResourcesForGroupVersion(groupVersion)
	// A group the server does not serve: NotFound from the API server, or
	// the cached discovery client's ErrCacheNotFound.
	if apierrors.IsNotFound(err) || errors.Is(err, memory.ErrCacheNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", groupVersion, err)
	}
	var out []Resource
	for _, r := range list.APIResources {
		if containsSlash(r.Name) || !r.Namespaced {
			continue // subresources; instances are namespaced
		}
		out = append(out, Resource{Group: gv.Group, Version: gv.Version, Kind: r.Kind, Plural: r.Name,
			Singular: r.SingularName, ShortNames: r.ShortNames})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

func containsSlash(s string) bool {
	for _, c := range s {
		if c == '/' {
			return true
		}
	}
	return false
}

// InstanceKinds are the kinds ApplicationDefinitions serve.
func (g *Gatherer) InstanceKinds() ([]Resource, error) {
	return g.Kinds(appsv1alpha1.GroupVersion.String())
}

// TraceKinds are the instance kinds and TenantGateway.
func (g *Gatherer) TraceKinds() ([]Resource, error) {
	inst, err := g.InstanceKinds()
	if err != nil {
		return nil, err
	}
	gw, err := g.Kinds(gatewayv1alpha1.GroupVersion.String())
	if err != nil {
		return nil, err
	}
	for _, r := range gw {
		if r.Kind == TenantGatewayKind {
			inst = append(inst, r)
		}
	}
	return inst, nil
}

// Get reads one object.
func (g *Gatherer) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	return g.Client.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// List lists objects of a resource in ns ("" for all namespaces).
func (g *Gatherer) List(ctx context.Context, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) ([]unstructured.Unstructured, error) {
	l, err := g.Client.Resource(gvr).Namespace(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// resourceFor maps group/version/kind to its resource, with an error that
// says when the API server does not serve the kind at all.
func (g *Gatherer) resourceFor(gk schema.GroupKind, versions ...string) (schema.GroupVersionResource, error) {
	m, err := g.Mapper.RESTMapping(gk, versions...)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, fmt.Errorf("the API server does not serve %s (is its CRD installed?)", gk)
		}
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
}

// TraceInstance reads an instance's backing object (where status.backend
// says, else found by the application labels) and, for Terraform, its
// outputs Secret.
func (g *Gatherer) TraceInstance(ctx context.Context, inst *unstructured.Unstructured) InstanceTrace {
	t := InstanceTrace{Instance: inst}
	t.Ref, t.HasRef = BackingRef(inst)
	if !t.HasRef {
		return t
	}
	gv, err := schema.ParseGroupVersion(t.Ref.APIVersion)
	if err != nil {
		t.BackingErr = err
		return t
	}
	gvr, err := g.resourceFor(schema.GroupKind{Group: gv.Group, Kind: t.Ref.Kind}, gv.Version)
	if err != nil {
		t.BackingErr = err
		return t
	}
	obj, err := g.Get(ctx, gvr, t.Ref.Namespace, t.Ref.Name)
	switch {
	case err == nil:
		t.Backing = obj
	case apierrors.IsNotFound(err):
		if found := g.findByLabels(ctx, gvr, inst); found != nil {
			t.Backing = found
			t.Ref.Namespace = found.GetNamespace()
		}
	default:
		t.BackingErr = err
	}
	if t.Backing != nil && t.Ref.Kind == "Terraform" {
		if name := OutputsSecretName(t.Backing); name != "" {
			s := &SecretState{Namespace: t.Backing.GetNamespace(), Name: name}
			_, err := g.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, s.Namespace, name)
			switch {
			case err == nil:
				s.Exists = true
			case !apierrors.IsNotFound(err):
				s.Err = err
			}
			t.Outputs = s
		}
	}
	return t
}

// findByLabels looks for the backing object through the application labels
// in every namespace, for a backend that keeps it outside the instance's
// namespace. Nil when there is none, or it cannot be listed.
func (g *Gatherer) findByLabels(ctx context.Context, gvr schema.GroupVersionResource, inst *unstructured.Unstructured) *unstructured.Unstructured {
	sel := labels.SelectorFromSet(labels.Set{
		appsv1alpha1.LabelApplicationKind:  inst.GetKind(),
		appsv1alpha1.LabelApplicationGroup: inst.GroupVersionKind().Group,
		appsv1alpha1.LabelApplicationName:  inst.GetName(),
	})
	items, err := g.List(ctx, gvr, "", metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil
	}
	for i := range items {
		l := items[i].GetLabels()
		if items[i].GetNamespace() == inst.GetNamespace() || l[labelApplicationNamespace] == inst.GetNamespace() {
			return &items[i]
		}
	}
	return nil
}

// Gateway API and cert-manager kinds a TenantGateway trace reads.
var (
	gatewayGK     = schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "Gateway"}
	httpRouteGK   = schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}
	tlsRouteGK    = schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "TLSRoute"}
	issuerGK      = schema.GroupKind{Group: "cert-manager.io", Kind: "Issuer"}
	certificateGK = schema.GroupKind{Group: "cert-manager.io", Kind: "Certificate"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// TraceGateway reads what a TenantGateway produced.
func (g *Gatherer) TraceGateway(ctx context.Context, tgw *unstructured.Unstructured) GatewayTrace {
	t := GatewayTrace{TenantGateway: tgw}
	ns, name := tgw.GetNamespace(), tgw.GetName()
	t.Gateway, t.GatewayErr = g.getOptional(ctx, gatewayGK, ns, names.Gateway(name))
	t.Issuer, t.IssuerErr = g.getOptional(ctx, issuerGK, ns, names.Issuer(name))

	if gvr, err := g.resourceFor(certificateGK); err != nil {
		t.CertificatesErr = err
	} else if certs, err := g.List(ctx, gvr, ns, metav1.ListOptions{}); err != nil {
		t.CertificatesErr = err
	} else {
		for i := range certs {
			if controlledBy(&certs[i], tgw) {
				t.Certificates = append(t.Certificates, certs[i])
			}
		}
	}

	nsNames := []string{ns}
	seen := map[string]bool{ns: true}
	attached, _, _ := unstructured.NestedStringSlice(tgw.Object, "spec", "attachedNamespaces")
	for _, n := range attached {
		if !seen[n] {
			seen[n] = true
			nsNames = append(nsNames, n)
		}
	}
	for _, n := range nsNames {
		st := NamespaceState{Name: n}
		obj, err := g.Get(ctx, namespacesGVR, "", n)
		switch {
		case err == nil:
			st.Exists, st.Label = true, obj.GetLabels()[gatewayv1alpha1.LabelNamespaceGateway]
		case !apierrors.IsNotFound(err):
			st.Err = err
		}
		t.Namespaces = append(t.Namespaces, st)
	}

	for _, gk := range []schema.GroupKind{httpRouteGK, tlsRouteGK} {
		gvr, err := g.resourceFor(gk)
		if err != nil {
			if gk == tlsRouteGK {
				continue // TLSRoute is optional in Gateway API installs
			}
			t.RoutesErr = err
			continue
		}
		routes, err := g.routes(ctx, gvr, ns)
		if err != nil {
			t.RoutesErr = err
			continue
		}
		for i := range routes {
			if NamesGateway(&routes[i], ns, names.Gateway(name)) {
				t.Routes = append(t.Routes, routes[i])
			}
		}
	}
	return t
}

// routes lists the routes of every namespace, or, when that is forbidden,
// of the namespaces the Gateway admits that the caller may read.
func (g *Gatherer) routes(ctx context.Context, gvr schema.GroupVersionResource, owner string) ([]unstructured.Unstructured, error) {
	all, err := g.List(ctx, gvr, "", metav1.ListOptions{})
	if err == nil || !apierrors.IsForbidden(err) {
		return all, err
	}
	nss := []string{owner}
	if list, lerr := g.List(ctx, namespacesGVR, "", metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{gatewayv1alpha1.LabelNamespaceGateway: owner}).String(),
	}); lerr == nil {
		for _, n := range list {
			if n.GetName() != owner {
				nss = append(nss, n.GetName())
			}
		}
	}
	var out []unstructured.Unstructured
	for _, n := range nss {
		items, err := g.List(ctx, gvr, n, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsForbidden(err) {
				continue
			}
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (g *Gatherer) getOptional(ctx context.Context, gk schema.GroupKind, ns, name string) (*unstructured.Unstructured, error) {
	gvr, err := g.resourceFor(gk)
	if err != nil {
		return nil, err
	}
	obj, err := g.Get(ctx, gvr, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

func controlledBy(obj, owner *unstructured.Unstructured) bool {
	for _, r := range obj.GetOwnerReferences() {
		if ownerref.IsController(r) && ownerref.Names(r, owner.GroupVersionKind(), owner.GetName(), owner.GetUID()) {
			return true
		}
	}
	return false
}
