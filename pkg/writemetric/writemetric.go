// Package writemetric counts every write a controller makes to the objects it
// manages, in one counter for all controllers: cozystack_object_writes_total,
// labelled with the controller, the kind and the outcome. A settled system
// adds nothing, so a steady rate means something keeps fighting a
// controller. The counter is registered with controller-runtime's registry
// and served on the controller's metrics endpoint (docs/metrics.md).
//
// A controller's own status (an instance's, a definition's, a
// TenantGateway's) is not counted: only the objects it writes for them.
package writemetric

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cozyplane/cozyplane/pkg/ssa"
)

// MetricName is the counter's name, documented in docs/metrics.md.
const MetricName = "cozystack_object_writes_total"

// Outcomes beside an apply's (ssa.Result: created, updated, corrected).
const (
	// Adopted: an object someone else created taken over (an instance's
	// adoption proof; managed fields handed over from upstream's manager).
	Adopted = "adopted"
	// Deleted: an object the controller controls removed.
	Deleted = "deleted"
	// Suspended and Resumed: spec.suspend set on a backing object for its
	// instance's suspend annotation.
	Suspended = "suspended"
	Resumed   = "resumed"
	// Attached and Detached: a namespace's gateway label set or removed.
	Attached = "attached"
	Detached = "detached"
	// Labelled: an object's lineage labels set.
	Labelled = "labelled"
	// Status: the status of an object the controller does not own written
	// (an HTTPRoute's condition, a ResourceQuota's usage).
	Status = "status"
)

var writes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: MetricName,
	Help: "Objects written, by controller, kind and outcome (created, updated, corrected, adopted, deleted, suspended, resumed, attached, detached, labelled, status).",
}, []string{"controller", "kind", "outcome"})

func init() {
	metrics.Registry.MustRegister(writes)
}

// Count counts one write by controller (its name, the same as its field
// manager) to an object of kind.
func Count(controller, kind, outcome string) {
	writes.WithLabelValues(controller, kind, outcome).Inc()
}

// Applied counts an apply that wrote (its result is not ssa.Unchanged).
func Applied(controller, kind string, res ssa.Result) {
	if res != ssa.Unchanged {
		Count(controller, kind, res.String())
	}
}

// Counted is the number of writes counted so far with these labels (for
// tests; it makes the series when there is none).
func Counted(controller, kind, outcome string) float64 {
	var m dto.Metric
	if err := writes.WithLabelValues(controller, kind, outcome).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}
