package gateway

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

func TestDesiredGateway(t *testing.T) {
	listeners := []gatewayv1.Listener{httpListener("tenant-root", "")}
	got := DesiredGateway(GatewayInput{TenantGateway: "cozystack", Namespace: "tenant-root", GatewayClassName: "cilium", Listeners: listeners, ManagedBy: "gateway-listeners"})
	want := &gatewayv1.Gateway{
		TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: "tenant-root", Labels: map[string]string{
			"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack", "cozystack.io/managed-by": "gateway-listeners",
		}},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "cilium", Listeners: listeners},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestDesiredRedirectRoute(t *testing.T) {
	got := DesiredRedirectRoute(RedirectRouteInput{TenantGateway: "cozystack", Namespace: "tenant-root", Apex: "Example.org", ManagedBy: "gateway-listeners"})
	want := &gatewayv1.HTTPRoute{
		TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: "cozystack-http-redirect", Namespace: "tenant-root", Labels: map[string]string{
			"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack", "cozystack.io/managed-by": "gateway-listeners",
		}},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Group:       ptr.To(gatewayv1.Group("gateway.networking.k8s.io")),
				Kind:        ptr.To(gatewayv1.Kind("Gateway")),
				Namespace:   ptr.To(gatewayv1.Namespace("tenant-root")),
				Name:        "cozystack",
				SectionName: ptr.To(gatewayv1.SectionName("http")),
			}}},
			Hostnames: []gatewayv1.Hostname{"example.org", "*.example.org"},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/"),
				}}},
				Filters: []gatewayv1.HTTPRouteFilter{{
					Type:            gatewayv1.HTTPRouteFilterRequestRedirect,
					RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https"), StatusCode: ptr.To(301)},
				}},
			}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("got  %s\nwant %s", g, w)
	}
}

// TestTooManyListenersIsStalled: the error is a stalled state with its
// condition reason.
func TestTooManyListenersIsStalled(t *testing.T) {
	err := fmt.Errorf("decide: %w", &TooManyListenersError{Count: 70})
	if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != gatewayv1alpha1.ReasonTooManyListeners {
		t.Errorf("AsStalled(%v) = %+v, %v; want reason %s", err, s, ok, gatewayv1alpha1.ReasonTooManyListeners)
	}
}
