package gatewayctl

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
)

func TestManagedObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := gatewayv1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	gw := func(ns, managedBy string) *gatewayv1.Gateway {
		g := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "cozystack", Namespace: ns}}
		if managedBy != "" {
			g.Labels = map[string]string{gatewayv1alpha1.LabelManagedBy: managedBy}
		}
		return g
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(gw("a", "test-ctl"), gw("b", "test-ctl"), gw("c", "someone-else"), gw("d", "")).Build()
	if err := ManagedObjects(c, "test-ctl", "Gateway", &gatewayv1.GatewayList{}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP cozystack_gateway_managed_objects Objects a gateway controller manages, by controller and kind.
# TYPE cozystack_gateway_managed_objects gauge
cozystack_gateway_managed_objects{controller="test-ctl",kind="Gateway"} 2
`
	if err := testutil.GatherAndCompare(metrics.Registry, strings.NewReader(want), "cozystack_gateway_managed_objects"); err != nil {
		t.Error(err)
	}
}
