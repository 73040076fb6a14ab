package instance

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/readymetric"
)

// readyStatus is the status of an instance's Ready condition, Unknown when
// it has none yet.
func readyStatus(status *appsv1alpha1.ApplicationStatus) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(status.Conditions, appsv1alpha1.ConditionReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// recordReadiness exports the instance's Ready status on the
// cozystack_resource_ready gauge (pkg/readymetric).
func recordReadiness(kind, namespace, name string, status *appsv1alpha1.ApplicationStatus) {
	readymetric.Set(kind, namespace, name, readyStatus(status))
}
