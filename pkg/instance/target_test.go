package instance

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSettledAtGeneration(t *testing.T) {
	cond := func(typ, status, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": "R", "message": msg,
			"lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	tests := []struct {
		name       string
		generation int64
		status     map[string]any // nil: none
		want       bool
	}{
		{name: "no status yet", generation: 1, want: false},
		{name: "a generation not observed yet", generation: 3,
			status: map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True", "ok")}}, want: false},
		{name: "ready at its generation", generation: 3,
			status: map[string]any{"observedGeneration": int64(3), "conditions": []any{cond("Ready", "True", "ok")}}, want: true},
		{name: "waiting for the backend at its generation", generation: 3,
			status: map[string]any{"observedGeneration": int64(3), "conditions": []any{
				cond("Ready", "Unknown", "waiting for helm-controller"), cond("Reconciling", "True", "waiting for helm-controller")}}, want: true},
		{name: "retrying an error of its own", generation: 3,
			status: map[string]any{"observedGeneration": int64(3), "conditions": []any{
				cond("Ready", "Unknown", retryingPrefix+"the server is unavailable"), cond("Reconciling", "True", retryingPrefix+"the server is unavailable")}}, want: false},
		{name: "stalled", generation: 3,
			status: map[string]any{"observedGeneration": int64(3), "conditions": []any{
				cond("Ready", "False", "refused"), cond("Stalled", "True", "refused")}}, want: false},
		{name: "a malformed status", generation: 3, status: map[string]any{"observedGeneration": "three"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := &unstructured.Unstructured{Object: map[string]any{}}
			inst.SetGeneration(tt.generation)
			if tt.status != nil {
				inst.Object["status"] = tt.status
			}
			if got := settledAtGeneration(inst); got != tt.want {
				t.Fatalf("settledAtGeneration = %v, want %v", got, tt.want)
			}
		})
	}
}
