package tenantgateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
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

func TestObjectLabels(t *testing.T) {
	if got := ObjectLabels("cozystack", ""); !reflect.DeepEqual(got, map[string]string{"cozystack.io/gateway": "cozystack", "cozystack.io/tenantgateway": "cozystack"}) {
		t.Fatalf("without managed-by: %v", got)
	}
	a, b := ObjectLabels("x", "y"), ObjectLabels("x", "y")
	a["extra"] = "1"
	if _, shared := b["extra"]; shared {
		t.Fatal("ObjectLabels returns a shared map")
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

// TestStalledReasons: every error of this package is a stalled state with
// its condition reason; an API error is not.
func TestStalledReasons(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&TooManyListenersError{Count: 70}, gatewayv1alpha1.ReasonTooManyListeners},
		{fmt.Errorf("apply gateway: %w", &UnknownIssuerError{Name: "x"}), gatewayv1alpha1.ReasonUnknownIssuer},
		{&SpecError{Field: "apex"}, gatewayv1alpha1.ReasonInvalidSpec},
	}
	for _, tt := range tests {
		if got, ok := reasonOf(tt.err); !ok || got != tt.want {
			t.Errorf("reasonOf(%v) = %q, %v; want %q", tt.err, got, ok, tt.want)
		}
	}
	if got, ok := reasonOf(errors.New("connection refused")); ok || got != "" {
		t.Errorf("a foreign error has reason %q", got)
	}
	if got, ok := reasonOf(nil); ok || got != "" {
		t.Errorf("nil has reason %q", got)
	}
}
