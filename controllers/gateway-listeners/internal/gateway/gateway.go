package gateway

import (
	"github.com/cozyplane/cozyplane/api/gateway/names"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/pkg/tenantgateway"
)

// GatewayInput: the TenantGateway's name and namespace, the GatewayClass, the
// listeners from DesiredListeners, and the managed-by label value.
type GatewayInput struct {
	TenantGateway    string
	Namespace        string
	GatewayClassName string
	Listeners        []gatewayv1.Listener
	ManagedBy        string
}

// DesiredGateway is the Gateway <tgw> in the owner namespace, with type
// meta set for server-side apply. The caller adds the owner reference.
func DesiredGateway(in GatewayInput) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		TypeMeta: metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.Gateway(in.TenantGateway),
			Namespace: in.Namespace,
			Labels:    tenantgateway.ObjectLabels(in.TenantGateway, in.ManagedBy),
		},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(in.GatewayClassName),
			Listeners:        in.Listeners,
		},
	}
}

// RedirectRouteInput: the TenantGateway's name, namespace and apex, and the
// managed-by label value.
type RedirectRouteInput struct {
	TenantGateway string
	Namespace     string
	Apex          string
	ManagedBy     string
}

// DesiredRedirectRoute is the HTTPRoute <tgw>-http-redirect on the Gateway's
// http listener: every request for the apex or a name below it (a Gateway API
// wildcard hostname matches any number of labels) is redirected to https
// with status 301. cert-manager's challenge routes match a longer path (and,
// below the apex, an exact hostname), so they take precedence. Every field
// the API server would default is set, so the desired and the live object
// compare equal. The caller adds the owner reference.
func DesiredRedirectRoute(in RedirectRouteInput) *gatewayv1.HTTPRoute {
	apex := tenantgateway.NormalizeHostname(in.Apex)
	return &gatewayv1.HTTPRoute{
		TypeMeta: metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      names.RedirectRoute(in.TenantGateway),
			Namespace: in.Namespace,
			Labels:    tenantgateway.ObjectLabels(in.TenantGateway, in.ManagedBy),
		},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{
				ParentRefs: []gatewayv1.ParentReference{tenantgateway.HTTPListenerRef(in.TenantGateway, in.Namespace)},
			},
			Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(apex), gatewayv1.Hostname("*." + apex)},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{
					Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")},
				}},
				Filters: []gatewayv1.HTTPRouteFilter{{
					Type: gatewayv1.HTTPRouteFilterRequestRedirect,
					RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
						Scheme:     ptr.To("https"),
						StatusCode: ptr.To(301),
					},
				}},
			}},
		},
	}
}
