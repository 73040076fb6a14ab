package gateway

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// ListenersInput is everything the listener set depends on.
type ListenersInput struct {
	// TenantGateway is the name of the TenantGateway; Namespace its
	// namespace (the owner namespace).
	TenantGateway string
	Namespace     string
	// Apex, CertMode (default applied), WildcardSecretName (certMode
	// existingSecret) and TLSPassthroughServices come from the spec.
	Apex                   string
	CertMode               gatewayv1alpha1.CertMode
	WildcardSecretName     string
	TLSPassthroughServices []string
	// RouteHostnames are the hostnames of the routes attached to the
	// Gateway. With certMode http01 each acceptable one gets a listener;
	// in the wildcard modes they are only checked for coverage.
	RouteHostnames []string
	// ChildApexes are the inheriting child apexes (InheritingChildApexes).
	// In the wildcard modes each gets a listener.
	ChildApexes []string
	// CertManagerNamespace is where cert-manager publishes HTTP-01
	// challenge routes; the port-80 listener admits routes from it. Empty
	// means gatewayv1alpha1.CertManagerNamespace (Cozystack's layout).
	CertManagerNamespace string
	// RouteKinds is what the port-443 listeners admit, chosen for the
	// Gateway's implementation by RouteKindsFor.
	RouteKinds RouteKinds
}

// RouteKinds says which route kinds the port-443 listeners admit.
type RouteKinds int

const (
	// RouteKindsShared443: every port-443 listener, HTTPS or passthrough,
	// admits both HTTPRoute and TLSRoute. Cilium merges the listeners of one
	// port and, when their allowed kinds differ, the merged listener drops
	// HTTPRoutes (cilium/cilium#45559); upstream Cozystack's workaround.
	RouteKindsShared443 RouteKinds = iota
	// RouteKindsPerProtocol: one kind per protocol, as the Gateway API
	// asks of a listener: HTTPS admits HTTPRoute, TLS passthrough
	// TLSRoute. A conformant implementation rejects a kind the protocol
	// cannot carry (Envoy Gateway: ResolvedRefs=False/InvalidRouteKinds).
	RouteKindsPerProtocol
)

// CiliumControllerName is the GatewayClass controllerName of Cilium's
// Gateway API implementation.
const CiliumControllerName = "io.cilium/gateway-controller"

// RouteKindsFor chooses the port-443 route kinds for the implementation of
// the Gateway's GatewayClass: its spec.controllerName, found false when the
// GatewayClass does not exist (or cannot be read). Cilium keeps its
// workaround; any other implementation gets one kind per protocol. With no
// GatewayClass no implementation serves the Gateway yet: the kinds stay
// those of Cozystack's default class (cilium), which is also what a Gateway
// gets until its GatewayClass is created, and they are chosen again when it
// is.
func RouteKindsFor(controllerName string, found bool) RouteKinds {
	if !found || controllerName == CiliumControllerName {
		return RouteKindsShared443
	}
	return RouteKindsPerProtocol
}

// NewListenersInput fills a ListenersInput from a TenantGateway, with the
// spec's defaults applied.
func NewListenersInput(tgw *gatewayv1alpha1.TenantGateway, routeHostnames, childApexes []string) ListenersInput {
	in := ListenersInput{
		TenantGateway:          tgw.Name,
		Namespace:              tgw.Namespace,
		Apex:                   tgw.Spec.Apex,
		CertMode:               tgw.Spec.EffectiveCertMode(),
		TLSPassthroughServices: tgw.Spec.TLSPassthroughServices,
		RouteHostnames:         routeHostnames,
		ChildApexes:            childApexes,
	}
	if tgw.Spec.WildcardSecretRef != nil {
		in.WildcardSecretName = tgw.Spec.WildcardSecretRef.Name
	}
	return in
}

// DesiredListeners computes the Gateway's listeners, sorted by name:
//
//   - always http (port 80, admitting HTTPRoutes from the owner namespace and
//     cert-manager's (in.CertManagerNamespace) only, by
//     kubernetes.io/metadata.name);
//   - http01: one https-<first-label>-<8hex> listener per acceptable route
//     hostname, serving the Secret of its own Certificate;
//   - dns01 and existingSecret: https (*.<apex>), https-apex (<apex>) and one
//     https-child-<first-label>-<8hex> (*.<child apex>) per child apex, all
//     serving the wildcard Secret (<tgw>-gateway-tls, or
//     spec.wildcardSecretRef);
//   - one tls-<service> passthrough listener (<service>.<apex>) per
//     tlsPassthroughServices entry.
//
// Port-443 listeners admit routes from namespaces labelled
// namespace.cozystack.io/gateway=<owner namespace>, of the kinds in.RouteKinds
// says: with RouteKindsShared443 (Cilium) all of them admit both HTTPRoute
// and TLSRoute, because Cilium merges the listeners of one port and, when
// their allowed kinds differ, the merged listener drops HTTPRoutes
// (cilium/cilium#45559); a TLSRoute on an HTTPS listener, or an HTTPRoute on
// a passthrough one, is still refused by the protocol. With
// RouteKindsPerProtocol HTTPS listeners admit HTTPRoute and passthrough ones
// TLSRoute. Other route kinds stay excluded.
//
// Hostnames that get no listener, or that the wildcard certificate does not
// cover, come back as rejections, sorted. A spec that cannot work is a
// *tenantgateway.SpecError; more than MaxListeners listeners is a *TooManyListenersError,
// with no listeners, so that the caller applies nothing.
func DesiredListeners(in ListenersInput) ([]gatewayv1.Listener, []RejectedHostname, error) {
	apex := tenantgateway.NormalizeHostname(in.Apex)
	if why := validDNSName(apex); why != "" {
		return nil, nil, &tenantgateway.SpecError{Field: "apex", Message: why}
	}
	if len(apex) > maxWildcardBase {
		return nil, nil, &tenantgateway.SpecError{Field: "apex", Message: fmt.Sprintf("longer than %d characters, so *.<apex> is not a valid hostname", maxWildcardBase)}
	}
	services, err := passthroughServices(in.TLSPassthroughServices, apex)
	if err != nil {
		return nil, nil, err
	}
	children, rejected := usableChildren(in.ChildApexes, apex)
	scope := HostnameScope{Apex: apex, ChildApexes: children, Reserved: map[string]string{}}
	for _, svc := range services {
		scope.Reserved[names.PassthroughHostname(svc, apex)] = names.PassthroughListener(svc)
	}

	listeners := []gatewayv1.Listener{httpListener(in.Namespace, in.CertManagerNamespace)}
	switch in.CertMode {
	case gatewayv1alpha1.CertModeHTTP01:
		l, r := perHostListeners(in, scope)
		listeners, rejected = append(listeners, l...), append(rejected, r...)
	case gatewayv1alpha1.CertModeDNS01, gatewayv1alpha1.CertModeExistingSecret:
		secret := names.WildcardCertificate(in.TenantGateway)
		if in.CertMode == gatewayv1alpha1.CertModeExistingSecret {
			if in.WildcardSecretName == "" {
				return nil, nil, &tenantgateway.SpecError{Field: "wildcardSecretRef", Message: "certMode existingSecret needs the name of the Secret with the wildcard certificate"}
			}
			secret = in.WildcardSecretName
		}
		l, r := wildcardListeners(in, scope, secret)
		listeners, rejected = append(listeners, l...), append(rejected, r...)
	default:
		return nil, nil, &tenantgateway.SpecError{Field: "certMode", Message: fmt.Sprintf("unknown certMode %q: use http01, dns01 or existingSecret", in.CertMode)}
	}
	for _, svc := range services {
		listeners = append(listeners, passthroughListener(in.Namespace, svc, apex, in.RouteKinds))
	}

	slices.SortFunc(listeners, func(a, b gatewayv1.Listener) int { return strings.Compare(string(a.Name), string(b.Name)) })
	sortRejected(rejected)
	if len(listeners) > MaxListeners {
		return nil, rejected, &TooManyListenersError{Count: len(listeners), CertMode: in.CertMode}
	}
	return listeners, rejected, nil
}

// passthroughServices validates, deduplicates and sorts the services.
func passthroughServices(services []string, apex string) ([]string, error) {
	out := slices.Clone(services)
	slices.Sort(out)
	out = slices.Compact(out)
	for _, svc := range out {
		if errs := validation.IsDNS1123Label(svc); len(errs) > 0 || len(svc) > names.MaxPassthroughService {
			return nil, &tenantgateway.SpecError{Field: "tlsPassthroughServices", Message: fmt.Sprintf("service %q must be a DNS-1123 label of at most %d characters", svc, names.MaxPassthroughService)}
		}
		if h := names.PassthroughHostname(svc, apex); len(h) > validation.DNS1123SubdomainMaxLength {
			return nil, &tenantgateway.SpecError{Field: "tlsPassthroughServices", Message: fmt.Sprintf("hostname %s of service %q is longer than %d characters", h, svc, validation.DNS1123SubdomainMaxLength)}
		}
	}
	return out, nil
}

// perHostListeners returns one listener per acceptable route hostname
// (http01), and the rejected hostnames.
func perHostListeners(in ListenersInput, scope HostnameScope) ([]gatewayv1.Listener, []RejectedHostname) {
	var listeners []gatewayv1.Listener
	var rejected []RejectedHostname
	byName := map[string]string{}
	for _, h := range tenantgateway.NormalizeHostnames(in.RouteHostnames) {
		if _, rej := scope.CheckListenerHostname(h); rej != nil {
			rejected = append(rejected, *rej)
			continue
		}
		name := names.PerHostListener(h)
		if other, taken := byName[name]; taken {
			rejected = append(rejected, nameCollision(h, other, name))
			continue
		}
		byName[name] = h
		listeners = append(listeners, httpsListener(name, h, names.PerListenerCertificate(in.TenantGateway, h), in.Namespace, in.RouteKinds))
	}
	return listeners, rejected
}

// usableChildren keeps the child apexes a listener may serve: valid DNS
// names strictly below the apex. InheritingChildApexes already returns only
// those; anything else is rejected here too rather than dropped silently.
func usableChildren(childApexes []string, apex string) ([]string, []RejectedHostname) {
	var children []string
	var rejected []RejectedHostname
	for _, c := range tenantgateway.NormalizeHostnames(childApexes) {
		if c == apex {
			continue
		}
		if rej := checkChildApex("child apex", c, apex); rej != nil {
			rejected = append(rejected, *rej)
			continue
		}
		children = append(children, c)
	}
	return children, rejected
}

// wildcardListeners returns https, https-apex and one listener per child
// apex, all serving secret, and the route hostnames the certificate does not
// cover.
func wildcardListeners(in ListenersInput, scope HostnameScope, secret string) ([]gatewayv1.Listener, []RejectedHostname) {
	listeners := []gatewayv1.Listener{
		httpsListener(names.ListenerHTTPS, "*."+scope.Apex, secret, in.Namespace, in.RouteKinds),
		httpsListener(names.ListenerHTTPSApex, scope.Apex, secret, in.Namespace, in.RouteKinds),
	}
	var rejected []RejectedHostname
	byName := map[string]string{}
	var served []string
	for _, c := range scope.ChildApexes {
		name := names.ChildListener(c)
		if other, taken := byName[name]; taken {
			rejected = append(rejected, nameCollision(c, other, name))
			continue
		}
		byName[name] = c
		served = append(served, c)
		listeners = append(listeners, httpsListener(name, "*."+c, secret, in.Namespace, in.RouteKinds))
	}
	// Coverage is judged against the children that got a listener.
	scope.ChildApexes = served
	for _, h := range tenantgateway.NormalizeHostnames(in.RouteHostnames) {
		if _, rej := scope.CheckCoveredHostname(h); rej != nil {
			rejected = append(rejected, *rej)
		}
	}
	return listeners, rejected
}

func nameCollision(hostname, other, name string) RejectedHostname {
	return RejectedHostname{hostname, gatewayv1alpha1.ReasonListenerNameCollision,
		fmt.Sprintf("hostname %s maps to listener %s, which already serves %s (same first label and hash): use another hostname", hostname, name, other)}
}

// httpListener is the port-80 listener. Only the owner namespace (the
// redirect route) and cert-manager's namespace (ACME challenge routes; empty:
// gatewayv1alpha1.CertManagerNamespace) may attach, so that no application
// route can serve plaintext.
func httpListener(ownerNamespace, certManagerNamespace string) gatewayv1.Listener {
	if certManagerNamespace == "" {
		certManagerNamespace = gatewayv1alpha1.CertManagerNamespace
	}
	values := []string{ownerNamespace, certManagerNamespace}
	slices.Sort(values)
	values = slices.Compact(values)
	return gatewayv1.Listener{
		Name:     names.ListenerHTTP,
		Port:     80,
		Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{
			Namespaces: &gatewayv1.RouteNamespaces{
				From: ptr.To(gatewayv1.NamespacesFromSelector),
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key:      gatewayv1alpha1.LabelMetadataName,
					Operator: metav1.LabelSelectorOpIn,
					Values:   values,
				}}},
			},
			Kinds: routeKinds(tenantgateway.KindHTTPRoute),
		},
	}
}

// httpsListener terminates TLS on port 443 with one Secret in the owner
// namespace.
func httpsListener(name, hostname, secret, ownerNamespace string, kinds RouteKinds) gatewayv1.Listener {
	return gatewayv1.Listener{
		Name:     gatewayv1.SectionName(name),
		Hostname: ptr.To(gatewayv1.Hostname(hostname)),
		Port:     443,
		Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{
			Mode: ptr.To(gatewayv1.TLSModeTerminate),
			CertificateRefs: []gatewayv1.SecretObjectReference{{
				Group: ptr.To(gatewayv1.Group("")),
				Kind:  ptr.To(gatewayv1.Kind("Secret")),
				Name:  gatewayv1.ObjectName(secret),
			}},
		},
		AllowedRoutes: tenantRoutes(ownerNamespace, kinds, tenantgateway.KindHTTPRoute),
	}
}

// passthroughListener passes TLS for <service>.<apex> through to a TLSRoute.
func passthroughListener(ownerNamespace, service, apex string, kinds RouteKinds) gatewayv1.Listener {
	return gatewayv1.Listener{
		Name:          gatewayv1.SectionName(names.PassthroughListener(service)),
		Hostname:      ptr.To(gatewayv1.Hostname(names.PassthroughHostname(service, apex))),
		Port:          443,
		Protocol:      gatewayv1.TLSProtocolType,
		TLS:           &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)},
		AllowedRoutes: tenantRoutes(ownerNamespace, kinds, tenantgateway.KindTLSRoute),
	}
}

// tenantRoutes admits routes from every namespace of the owner's tree: those
// labelled namespace.cozystack.io/gateway=<owner namespace>; of the kind
// native to the listener's protocol, or, with RouteKindsShared443, of both
// kinds on every port-443 listener (see DesiredListeners).
func tenantRoutes(ownerNamespace string, kinds RouteKinds, native string) *gatewayv1.AllowedRoutes {
	admitted := []string{tenantgateway.KindHTTPRoute, tenantgateway.KindTLSRoute}
	if kinds == RouteKindsPerProtocol {
		admitted = []string{native}
	}
	return &gatewayv1.AllowedRoutes{
		Namespaces: &gatewayv1.RouteNamespaces{
			From: ptr.To(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				gatewayv1alpha1.LabelNamespaceGateway: ownerNamespace,
			}},
		},
		Kinds: routeKinds(admitted...),
	}
}

func routeKinds(kinds ...string) []gatewayv1.RouteGroupKind {
	out := make([]gatewayv1.RouteGroupKind, len(kinds))
	for i, k := range kinds {
		out[i] = gatewayv1.RouteGroupKind{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: gatewayv1.Kind(k)}
	}
	return out
}
