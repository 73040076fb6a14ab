package instance

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the backend controllers, served with controller-runtime's on
// the metrics endpoint. Their writes of backing objects are counted in
// pkg/writemetric, by the instance's kind.
var (
	// takeoverRefusalsTotal counts reconciles that found an object with the
	// derived name that the instance does not control.
	takeoverRefusalsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_takeover_refusals_total",
		Help: "Reconciles that left a foreign object with a backing object's name untouched, by controller and kind.",
	}, []string{"controller", "kind"})

	// adoptionsTotal counts objects taken over on an instance's adoption
	// proof (apps.cozystack.io/adopt).
	adoptionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cozystack_adoptions_total",
		Help: "Existing objects adopted on an instance's apps.cozystack.io/adopt proof, by controller and kind.",
	}, []string{"controller", "kind"})

	// servedKinds is the number of kinds a backend controller watches.
	servedKinds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cozystack_served_kinds",
		Help: "User-facing kinds a backend controller currently serves.",
	}, []string{"controller"})
)

func init() {
	metrics.Registry.MustRegister(takeoverRefusalsTotal, adoptionsTotal, servedKinds)
}
