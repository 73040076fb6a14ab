package statusapply

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFingerprintIgnoresTransitionTimesOnly(t *testing.T) {
	part := func(ltt time.Time) Part {
		return Part{Conditions: []metav1.Condition{{Type: "NamespacesAttached", Status: metav1.ConditionTrue, Reason: "Ready",
			Message: "2 namespaces", LastTransitionTime: metav1.NewTime(ltt)}}}
	}
	print := fingerprint(part(time.Unix(1, 0)), 3)
	withListeners := part(time.Unix(1, 0))
	withListeners.Fields = map[string]any{"listeners": []any{}}
	for _, tc := range []struct {
		name  string
		print [sha256.Size]byte
		same  bool
	}{
		{"the same status at another transition time", fingerprint(part(time.Unix(2, 0)), 3), true},
		{"another status", fingerprint(Part{}, 3), false},
		{"another generation", fingerprint(part(time.Unix(1, 0)), 4), false},
		{"listeners owned", fingerprint(withListeners, 3), false},
	} {
		if got := tc.print == print; got != tc.same {
			t.Errorf("%s: same fingerprint %v, want %v", tc.name, got, tc.same)
		}
	}
}

func TestUpToDate(t *testing.T) {
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Served", Message: "ok", ObservedGeneration: 2}
	stalled := metav1.Condition{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Bad", Message: "no", ObservedGeneration: 2}
	status := map[string]any{"observedGeneration": int64(2), "crdName": "a.example", "listeners": []any{}}
	live := []metav1.Condition{ready, stalled}
	later := ready
	later.LastTransitionTime = metav1.NewTime(time.Unix(9, 0))
	for _, tc := range []struct {
		name string
		part Part
		want bool
	}{
		{"a part of the conditions", Part{Conditions: []metav1.Condition{ready}}, true},
		{"another transition time only", Part{Conditions: []metav1.Condition{later}}, true},
		{"all conditions, one left out", Part{Conditions: []metav1.Condition{ready}, AllConditions: true}, false},
		{"all conditions", Part{Conditions: live, AllConditions: true}, true},
		{"another message", Part{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Served", Message: "changed", ObservedGeneration: 2}}}, false},
		{"another generation", Part{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Served", Message: "ok", ObservedGeneration: 3}}}, false},
		{"an owned type that no longer holds, still there", Part{Conditions: []metav1.Condition{ready}, Absent: []string{"Reconciling", "Stalled"}}, false},
		{"an owned type that no longer holds, gone", Part{Conditions: []metav1.Condition{ready, stalled}, Absent: []string{"Reconciling", "Stalled"}}, true},
		{"a missing condition", Part{Conditions: []metav1.Condition{{Type: "Other", Status: "True"}}}, false},
		{"fields as they are", Part{Fields: map[string]any{"observedGeneration": int64(2), "crdName": "a.example"}}, true},
		{"a field changed", Part{Fields: map[string]any{"crdName": "b.example"}}, false},
		{"a field to remove", Part{Fields: map[string]any{"crdName": nil}}, false},
		{"absent and empty are the same", Part{Fields: map[string]any{"listeners": nil, "instances": nil, "backend": ""}}, true},
		{"a field to add", Part{Fields: map[string]any{"instances": int64(1)}}, false},
	} {
		if got := UpToDate(live, status, tc.part); got != tc.want {
			t.Errorf("%s: UpToDate = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFieldsOf(t *testing.T) {
	type status struct {
		ObservedGeneration int64              `json:"observedGeneration,omitempty"`
		Conditions         []metav1.Condition `json:"conditions,omitempty"`
		Version            string             `json:"version"`
		Internal           string             `json:"-"`
	}
	if got := FieldsOf(&status{}); !slices.Equal(got, []string{"observedGeneration", "version"}) {
		t.Errorf("FieldsOf = %v, want observedGeneration and version", got)
	}
}

func TestToFields(t *testing.T) {
	type status struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
		Version    string             `json:"version,omitempty"`
		Count      *int32             `json:"count,omitempty"`
	}
	got, err := ToFields(&status{Version: "1.0", Conditions: []metav1.Condition{{Type: "Ready"}}}, "version", "count")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["version"] != "1.0" || got["count"] != nil {
		t.Errorf("ToFields = %v, want version 1.0 and count owned and absent, no conditions", got)
	}
	if _, ok := got["count"]; !ok {
		t.Errorf("count is owned: it must be present (nil)")
	}
}

func TestPatchOf(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Done", Message: "ok", ObservedGeneration: 2, LastTransitionTime: at}
	waiting := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "not yet", ObservedGeneration: 2, LastTransitionTime: at}
	readyMap := map[string]any{"type": "Ready", "status": "True", "reason": "Done", "message": "ok", "observedGeneration": int64(2),
		"lastTransitionTime": "2026-01-01T00:00:00Z"}
	live := map[string]any{
		"conditions":         []any{readyMap},
		"observedGeneration": int64(2),
		"version":            "1.0",
		"backend":            map[string]any{"kind": "HelmRelease", "name": "a", "namespace": "t"},
		"notOwned":           "kept",
		"outputs":            []any{},
	}
	for _, tc := range []struct {
		name   string
		status map[string]any
		part   Part
		want   string
	}{
		{"nothing differs", live, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"observedGeneration": int64(2), "version": "1.0", "outputs": nil,
				"backend": map[string]any{"kind": "HelmRelease", "name": "a", "namespace": "t"}}}, `{}`},
		{"a condition changed: the list whole, nothing else", live, Part{Conditions: []metav1.Condition{waiting}, AllConditions: true,
			Fields: map[string]any{"observedGeneration": int64(2), "version": "1.0"}},
			`{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z","message":"not yet","observedGeneration":2,"reason":"Waiting","status":"False","type":"Ready"}]}`},
		{"a field left out is nulled, an empty one is not written", live, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"version": nil, "outputs": []any{}, "url": ""}}, `{"version":null}`},
		{"a map key by key", live, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"backend": map[string]any{"kind": "HelmRelease", "name": "b"}}}, `{"backend":{"name":"b","namespace":null}}`},
		{"no status yet", nil, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"observedGeneration": int64(2), "version": nil}},
			`{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z","message":"ok","observedGeneration":2,"reason":"Done","status":"True","type":"Ready"}],"observedGeneration":2}`},
		{"every condition gone", live, Part{AllConditions: true}, `{"conditions":null}`},
		{"a field no longer a map", live, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"backend": "none"}}, `{"backend":"none"}`},
		{"a field that becomes a map", live, Part{Conditions: []metav1.Condition{ready}, AllConditions: true,
			Fields: map[string]any{"version": map[string]any{"chart": "1.0"}}}, `{"version":{"chart":"1.0"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PatchOf(tc.status, tc.part)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("PatchOf = %s, want %s", b, tc.want)
			}
			// Applied to the status, the patch gives what the part says.
			if tc.status == nil {
				return
			}
			patched := mergeInto(tc.status, got)
			if !UpToDate(Conditions(patched), patched, tc.part) {
				t.Errorf("the status patched is not up to date with the part: %v", patched)
			}
			if patched["notOwned"] != "kept" {
				t.Errorf("a field the part does not own was touched: %v", patched)
			}
		})
	}
}

// mergeInto applies a JSON merge patch (RFC 7386) to a copy of doc.
func mergeInto(doc, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		out[k] = v
	}
	for k, p := range patch {
		switch pv := p.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			d, _ := out[k].(map[string]any)
			out[k] = mergeInto(d, pv)
		default:
			out[k] = pv
		}
	}
	return out
}
