package instance

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func TestReadyStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		conds []metav1.Condition
		want  metav1.ConditionStatus
	}{
		{"no conditions yet", nil, metav1.ConditionUnknown},
		{"other conditions only", []metav1.Condition{{Type: appsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue}}, metav1.ConditionUnknown},
		{"ready", []metav1.Condition{{Type: appsv1alpha1.ConditionReady, Status: metav1.ConditionTrue}}, metav1.ConditionTrue},
		{"not ready", []metav1.Condition{{Type: appsv1alpha1.ConditionStalled, Status: metav1.ConditionTrue}, {Type: appsv1alpha1.ConditionReady, Status: metav1.ConditionFalse}}, metav1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readyStatus(&appsv1alpha1.ApplicationStatus{Conditions: tc.conds}); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
