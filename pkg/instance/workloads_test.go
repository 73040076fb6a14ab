package instance

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
)

func TestWorkloadsReady(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	for _, tc := range []struct {
		name        string
		operational []*bool
		want        metav1.ConditionStatus // "" means no condition
		reason      string
	}{
		{"no monitor: no condition", nil, "", ""},
		{"one operational", []*bool{yes}, metav1.ConditionTrue, appsv1alpha1.ReasonWorkloadMonitorCheck},
		{"all operational", []*bool{yes, yes}, metav1.ConditionTrue, appsv1alpha1.ReasonWorkloadMonitorCheck},
		{"one not operational", []*bool{yes, no}, metav1.ConditionFalse, appsv1alpha1.ReasonWorkloadMonitorCheck},
		{"not reconciled yet", []*bool{nil}, metav1.ConditionUnknown, appsv1alpha1.ReasonWorkloadsPending},
		{"pending beside operational", []*bool{yes, nil}, metav1.ConditionUnknown, appsv1alpha1.ReasonWorkloadsPending},
		{"a failure wins over pending", []*bool{nil, no}, metav1.ConditionFalse, appsv1alpha1.ReasonWorkloadMonitorCheck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := WorkloadsReady(tc.operational, 4)
			if tc.want == "" {
				if c != nil {
					t.Fatalf("got %+v, want no condition", c)
				}
				return
			}
			if c == nil {
				t.Fatalf("got no condition, want %s", tc.want)
			}
			if c.Type != appsv1alpha1.ConditionWorkloadsReady || c.Status != tc.want || c.Reason != tc.reason || c.ObservedGeneration != 4 || c.Message == "" {
				t.Fatalf("got %+v, want %s/%s at generation 4 with a message", c, tc.want, tc.reason)
			}
		})
	}
}

func TestMonitorOperational(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   *bool
	}{
		{"no status", nil, nil},
		{"status without operational", map[string]any{"availableReplicas": int64(0)}, nil},
		{"operational", map[string]any{"operational": true}, ptr.To(true)},
		{"not operational", map[string]any{"operational": false}, ptr.To(false)},
		{"not a boolean", map[string]any{"operational": "yes"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &unstructured.Unstructured{Object: map[string]any{}}
			if tc.status != nil {
				m.Object["status"] = tc.status
			}
			got := MonitorOperational(m)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTenantNamespace(t *testing.T) {
	for _, tc := range []struct{ ns, name, want string }{
		{"tenant-root", "root", "tenant-root"},
		{"tenant-root", "a", "tenant-a"},
		{"tenant-a", "b", "tenant-a-b"},
		{"tenant-a-b", "c", "tenant-a-b-c"},
	} {
		if got := TenantNamespace(tc.ns, tc.name); got != tc.want {
			t.Errorf("TenantNamespace(%q, %q) = %q, want %q", tc.ns, tc.name, got, tc.want)
		}
	}
	if got := WorkloadsNamespace("Tenant", "tenant-root", "a"); got != "tenant-a" {
		t.Errorf("a Tenant's monitors live in its own namespace: got %q", got)
	}
	if got := WorkloadsNamespace("Postgres", "tenant-a", "db"); got != "tenant-a" {
		t.Errorf("other kinds' monitors live beside the instance: got %q", got)
	}
	l := WorkloadMonitorLabels("Postgres", "db")
	if l[appsv1alpha1.LabelApplicationKind] != "Postgres" || l[appsv1alpha1.LabelApplicationName] != "db" || l[appsv1alpha1.LabelApplicationGroup] != "apps.cozystack.io" {
		t.Errorf("labels: %v", l)
	}
}

func TestVersionColumn(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"", "<unknown>"},
		{"0.1.4", "0.1.4"},
		{"0.1.4+abcdef", "abcdef"},
		{"1.0.0+a+b", "b"},
		{"1.0.0+", "1.0.0+"},
	} {
		if got := VersionColumn(tc.version); got != tc.want {
			t.Errorf("VersionColumn(%q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

func TestMapMonitor(t *testing.T) {
	for _, tc := range []struct {
		name, ns, kind, app string
		want                string // namespace/name of the instance; "" for none
	}{
		{"beside the instance", "tenant-a", "Postgres", "db", "tenant-a/db"},
		{"root tenant", "tenant-root", "Tenant", "root", "tenant-root/root"},
		{"a tenant of the root", "tenant-a", "Tenant", "a", "tenant-root/a"},
		{"a nested tenant", "tenant-a-b", "Tenant", "b", "tenant-a/b"},
		{"beside a Tenant, not in its namespace", "tenant-a", "Tenant", "b", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &unstructured.Unstructured{Object: map[string]any{}}
			m.SetNamespace(tc.ns)
			m.SetLabels(WorkloadMonitorLabels(tc.kind, tc.app))
			reqs := mapMonitor(m)
			if tc.want == "" {
				if len(reqs) != 0 {
					t.Fatalf("got %v, want none", reqs)
				}
				return
			}
			if len(reqs) != 1 || reqs[0].NamespacedName.String() != tc.want || reqs[0].GVK.Kind != tc.kind {
				t.Fatalf("got %v, want %s %s", reqs, tc.kind, tc.want)
			}
			// The mapping is the inverse of where the instance reads its monitors.
			if WorkloadsNamespace(tc.kind, reqs[0].Namespace, reqs[0].Name) != tc.ns {
				t.Fatalf("%s reads its monitors elsewhere than %s", tc.want, tc.ns)
			}
		})
	}
}
