// Package readiness exports one gauge per managed object saying whether it
// is Ready, the way cert-manager and Flux do, so a platform team can alert on
// "this object has not been Ready for 15 minutes" without reading conditions.
//
// Each object has exactly one series, labelled with its current Ready status
// (True, False or Unknown) and valued 1; the series of a previous status is
// removed when the status changes, and Forget removes the object's series when
// the object is gone. The gauge is registered with controller-runtime's
// registry and served on the controller's metrics endpoint.
package readiness

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MetricName is the gauge's name, documented in docs/metrics.md.
const MetricName = "cozystack_resource_ready"

var (
	gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricName,
		Help: "1 for every managed object, labelled with its kind, namespace, name and the status of its Ready condition (True, False or Unknown).",
	}, []string{"kind", "namespace", "name", "status"})

	mu      sync.Mutex
	current = map[key]metav1.ConditionStatus{}
)

type key struct{ kind, namespace, name string }

func init() {
	metrics.Registry.MustRegister(gauge)
}

// Set records the Ready status of one object; an empty status reads as
// Unknown. Calling it again with the same status changes nothing.
func Set(kind, namespace, name string, status metav1.ConditionStatus) {
	if status != metav1.ConditionTrue && status != metav1.ConditionFalse {
		status = metav1.ConditionUnknown
	}
	k := key{kind, namespace, name}
	mu.Lock()
	defer mu.Unlock()
	if prev, ok := current[k]; ok {
		if prev == status {
			return
		}
		gauge.DeleteLabelValues(kind, namespace, name, string(prev))
	}
	current[k] = status
	gauge.WithLabelValues(kind, namespace, name, string(status)).Set(1)
}

// Forget removes the object's series (the object was deleted or is no longer
// managed by this controller).
func Forget(kind, namespace, name string) {
	k := key{kind, namespace, name}
	mu.Lock()
	defer mu.Unlock()
	if prev, ok := current[k]; ok {
		gauge.DeleteLabelValues(kind, namespace, name, string(prev))
		delete(current, k)
	}
}
