package instance

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func fields(t *testing.T, s string) *metav1.FieldsV1 {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return &metav1.FieldsV1{Raw: []byte(s)}
}

func TestHandOverFields(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: "cozystack-helm", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{"f:app":{},"f:sharding.fluxcd.io/key":{}}},"f:spec":{"f:interval":{},"f:values":{"f:size":{}}}}`)}
	upstream := metav1.ManagedFieldsEntry{Manager: "cozystack-api", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:interval":{},"f:values":{".":{},"f:_cluster":{},"f:size":{}}}}`)}
	shardOperator := metav1.ManagedFieldsEntry{Manager: "flux-shard-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:metadata":{"f:labels":{"f:sharding.fluxcd.io/key":{}}}}`)}
	onlyOurs := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(t,
		`{"f:spec":{"f:interval":{}}}`)}
	status := metav1.ManagedFieldsEntry{Manager: "helm-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields(t,
		`{"f:status":{"f:conditions":{}}}`)}
	otherApplier := metav1.ManagedFieldsEntry{Manager: "flux", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(t,
		`{"f:spec":{"f:interval":{}}}`)}

	got, changed, err := HandOverFields([]metav1.ManagedFieldsEntry{ours, upstream, shardOperator, onlyOurs, status, otherApplier}, "cozystack-helm",
		[]string{"sharding.fluxcd.io/key"})
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	byManager := map[string]string{}
	for _, e := range got {
		byManager[e.Manager] = string(e.FieldsV1.Raw)
	}
	want := map[string]string{
		// our own entry is untouched
		"cozystack-helm": string(ours.FieldsV1.Raw),
		// upstream keeps the containers and the _ key we never set
		"cozystack-api": `{"f:metadata":{"f:labels":{}},"f:spec":{".":{},"f:values":{".":{},"f:_cluster":{}}}}`,
		// the shard key stays with the shard operator
		"flux-shard-operator": string(shardOperator.FieldsV1.Raw),
		// status and other appliers are not full updates of the object
		"helm-controller": string(status.FieldsV1.Raw),
		"flux":            string(otherApplier.FieldsV1.Raw),
		// kubectl-edit owned nothing but fields we own: its entry goes
	}
	if len(byManager) != len(want) {
		t.Fatalf("entries %v, want %v", byManager, want)
	}
	for m, w := range want {
		if byManager[m] != w {
			t.Errorf("%s: %s, want %s", m, byManager[m], w)
		}
	}

	if _, changed, _ := HandOverFields([]metav1.ManagedFieldsEntry{upstream}, "cozystack-helm", nil); changed {
		t.Error("changed without an entry of ours")
	}
	if _, changed, _ := HandOverFields([]metav1.ManagedFieldsEntry{ours, shardOperator}, "cozystack-helm", []string{"sharding.fluxcd.io/key"}); changed {
		t.Error("took a kept label")
	}
}

func TestFollowLive(t *testing.T) {
	const shard = "sharding.fluxcd.io/key"
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{shard: "shard3", "other": "x"}}}
	tests := []struct {
		name   string
		labels map[string]string
		live   *corev1.ConfigMap
		want   map[string]string
	}{
		{"created with the definition's value", map[string]string{shard: "tenants"}, nil, map[string]string{shard: "tenants"}},
		{"the live value wins", map[string]string{shard: "tenants", "a": "1"}, live, map[string]string{shard: "shard3", "a": "1"}},
		{"kept even when the definition has none", map[string]string{"a": "1"}, live, map[string]string{shard: "shard3", "a": "1"}},
		{"other live labels are not followed", map[string]string{}, live, map[string]string{shard: "shard3"}},
		{"the definition's value returns when the live object lost it", map[string]string{shard: "tenants"},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"other": "x"}}}, map[string]string{shard: "tenants"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l = tt.live
			got := FollowLive(tt.labels, l, []string{shard})
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestInstanceAnnotations(t *testing.T) {
	inst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"team/owner":                       "a",
		"note":                             "b",
		appsv1alpha1.AnnotationAdopt:       "uid-1",
		appsv1alpha1.AnnotationApprovePlan: "plan-main-1",
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
	}}}
	got := InstanceAnnotations(inst)
	want := map[string]string{"apps.cozystack.io-team/owner": "a", "apps.cozystack.io-note": "b"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if InstanceAnnotations(&corev1.ConfigMap{}) != nil {
		t.Fatal("no annotations must give nil, so the intent carries none")
	}
}
