package gatewayruntime

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	gatewayv1alpha1 "github.com/cozyplane/cozyplane/api/gateway/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/ssa"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

// Metrics of the gateway controllers, served with controller-runtime's on the
// metrics endpoint. Their writes are counted in pkg/writemetric.
var (
	// refusalsTotal counts reconciles that found an object with a derived
	// name (or a namespace label) that the TenantGateway does not own.
	refusalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_gateway_takeover_refusals_total",
		Help: "Reconciles that left a foreign object with a derived name untouched, by controller and kind.",
	}, []string{"controller", "kind"})
)

func init() {
	metrics.Registry.MustRegister(refusalsTotal)
}

// Apply applies desired with applier and counts the write.
func Apply(ctx context.Context, applier ssa.Applier, desired, live *unstructured.Unstructured) (ssa.Result, error) {
	res, err := applier.Apply(ctx, desired, live)
	if err == nil {
		writemetric.Applied(applier.FieldManager, desired.GetKind(), res)
	}
	return res, err
}

// CountRefusal counts a takeover refusal.
func CountRefusal(controller, kind string) {
	refusalsTotal.WithLabelValues(controller, kind).Inc()
}

// ManagedObjects registers the gauge cozystack_gateway_managed_objects for
// one kind: the number of objects of list's kind labelled
// cozystack.io/managed-by=<controller>, counted from the cache at each
// scrape.
func ManagedObjects(reader client.Reader, controller, kind string, list client.ObjectList) error {
	return metrics.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "cozystack_gateway_managed_objects",
		Help:        "Objects a gateway controller manages, by controller and kind.",
		ConstLabels: prometheus.Labels{"controller": controller, "kind": kind},
	}, func() float64 {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := reader.List(context.Background(), l, client.MatchingLabels{gatewayv1alpha1.LabelManagedBy: controller}); err != nil {
			return -1
		}
		return float64(meta.LenList(l))
	}))
}
