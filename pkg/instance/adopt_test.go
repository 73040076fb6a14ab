package instance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

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
