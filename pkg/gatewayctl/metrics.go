package gatewayctl

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// Metrics of the gateway controllers, served with controller-runtime's on the
// metrics endpoint.
var (
	// writesTotal counts applies of derived objects by outcome. A settled
	// system adds nothing.
	writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_gateway_object_writes_total",
		Help: "Objects derived from TenantGateways written, by controller, kind and outcome (created, updated, corrected, deleted).",
	}, []string{"controller", "kind", "outcome"})

	// refusalsTotal counts reconciles that found an object with a derived
	// name (or a namespace label) that the TenantGateway does not own.
	refusalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_gateway_takeover_refusals_total",
		Help: "Reconciles that left a foreign object with a derived name untouched, by controller and kind.",
	}, []string{"controller", "kind"})
)

func init() {
	metrics.Registry.MustRegister(writesTotal, refusalsTotal)
}

// Apply applies desired with applier and counts the write.
func Apply(ctx context.Context, applier ssa.Applier, desired, live *unstructured.Unstructured) (ssa.Result, error) {
	res, err := applier.Apply(ctx, desired, live)
	if err == nil && res != ssa.Unchanged {
		writesTotal.WithLabelValues(applier.FieldManager, desired.GetKind(), res.String()).Inc()
	}
	return res, err
}

// CountWrite counts a write Apply did not make (a delete, a patch).
func CountWrite(controller, kind, outcome string) {
	writesTotal.WithLabelValues(controller, kind, outcome).Inc()
}

// CountRefusal counts a takeover refusal.
func CountRefusal(controller, kind string) {
	refusalsTotal.WithLabelValues(controller, kind).Inc()
}
