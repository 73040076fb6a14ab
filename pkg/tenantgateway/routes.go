package tenantgateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/cozyplane/cozyplane/api/gateway/names"
)

// Route kinds a TenantGateway's Gateway admits.
const (
	KindHTTPRoute = "HTTPRoute"
	KindTLSRoute  = "TLSRoute"
)

// RouteKey identifies a route. Kind is part of it: an HTTPRoute and a
// TLSRoute may share a namespace and name.
type RouteKey struct {
	Kind      string
	Namespace string
	Name      string
}

func (k RouteKey) String() string { return k.Kind + " " + k.Namespace + "/" + k.Name }

// RouteRef is what conflict resolution needs of a route attached to one
// Gateway: its key, its spec.hostnames and its labels.
type RouteRef struct {
	Key       RouteKey
	Hostnames []string
	Labels    map[string]string
}

// ParentRef is ref as the naming contract reads it (api/gateway/names).
func ParentRef(ref gatewayv1.ParentReference) names.ParentRef {
	r := names.ParentRef{Name: string(ref.Name)}
	if ref.Group != nil {
		r.Group = string(*ref.Group)
	}
	if ref.Kind != nil {
		r.Kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		r.Namespace = string(*ref.Namespace)
	}
	return r
}
