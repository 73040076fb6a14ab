package quota

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCovers(t *testing.T) {
	c := Config{}
	for ns, want := range map[string]bool{"tenant-root": true, "tenant-a-b": true, "tenant-": false, "cozy-system": false, "default": false, "xtenant-a": false} {
		if got := c.Covers(ns); got != want {
			t.Errorf("Covers(%q) = %v, want %v", ns, got, want)
		}
	}
	if !(Config{NamespacePrefix: "team-"}).Covers("team-a") || (Config{NamespacePrefix: "team-"}).Covers("tenant-a") {
		t.Error("a configured prefix is not the one used")
	}
}

func TestLimitsFor(t *testing.T) {
	c := Config{Instances: 100, Tenants: 20}
	for _, tc := range []struct {
		name string
		cfg  Config
		ann  map[string]string
		want Limits
		err  string
	}{
		{"flags", c, nil, Limits{100, 20}, ""},
		{"zero flags set no limit", Config{}, nil, Limits{-1, -1}, ""},
		{"annotations override", c, map[string]string{AnnotationInstances: "3", AnnotationTenants: "0"}, Limits{3, 0}, ""},
		{"unlimited", c, map[string]string{AnnotationInstances: "Unlimited"}, Limits{-1, 20}, ""},
		{"an annotation sets a limit the flags left off", Config{}, map[string]string{AnnotationTenants: " 7 "}, Limits{-1, 7}, ""},
		{"negative", c, map[string]string{AnnotationInstances: "-1"}, Limits{}, AnnotationInstances},
		{"not a number", c, map[string]string{AnnotationTenants: "lots"}, Limits{}, AnnotationTenants},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LimitsFor(tc.cfg, tc.ann)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), Unlimited) {
					t.Fatalf("err %v, want one naming %s and what is allowed", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func qty(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }

func TestHard(t *testing.T) {
	kinds := SortKinds([]Kind{{"Postgres", "postgreses"}, {"Tenant", "tenants"}, {"Bucket", "buckets"}, {"Zother", "postgreses"}, {"Broken", ""}})
	if len(kinds) != 3 || kinds[0].Plural != "buckets" || kinds[1] != (Kind{"Postgres", "postgreses"}) {
		t.Fatalf("SortKinds: %+v", kinds)
	}
	got := Hard(kinds, Limits{Instances: 5, Tenants: 2})
	want := corev1.ResourceList{
		"count/buckets.apps.cozystack.io":    qty(5),
		"count/postgreses.apps.cozystack.io": qty(5),
		"count/tenants.apps.cozystack.io":    qty(2),
	}
	if len(got) != len(want) {
		t.Fatalf("Hard = %v, want %v", got, want)
	}
	for k, v := range want {
		if g := got[k]; g.Cmp(v) != 0 {
			t.Errorf("%s = %s, want %s", k, g.String(), v.String())
		}
	}
	if h := Hard(kinds, Limits{Instances: -1, Tenants: 0}); len(h) != 1 || h.Name("count/tenants.apps.cozystack.io", resource.DecimalSI).Value() != 0 {
		t.Errorf("only tenants limited (to none): %v", h)
	}
	if h := Hard(kinds, Limits{-1, -1}); len(h) != 0 {
		t.Errorf("nothing limited: %v", h)
	}
}

func TestDecide(t *testing.T) {
	ours := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: Name, Labels: map[string]string{LabelManagedBy: ManagedBy}}}
	theirs := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: Name, Labels: map[string]string{LabelManagedBy: "Helm"}}}
	hard := corev1.ResourceList{"count/tenants.apps.cozystack.io": qty(1)}
	for _, tc := range []struct {
		name string
		live *corev1.ResourceQuota
		hard corev1.ResourceList
		want Action
	}{
		{"absent, limits wanted", nil, hard, Apply},
		{"ours, limits wanted", ours, hard, Apply},
		{"ours, none wanted", ours, nil, Delete},
		{"absent, none wanted", nil, nil, Leave},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := Decide(tc.live, tc.hard); err != nil || got != tc.want {
				t.Fatalf("Decide = %v %v, want %v", got, err, tc.want)
			}
		})
	}
	for _, h := range []corev1.ResourceList{hard, nil} {
		got, err := Decide(theirs, h)
		var no *NotOwnedError
		if got != Leave || !errors.As(err, &no) || !strings.Contains(err.Error(), `"Helm"`) || !strings.Contains(err.Error(), "tenant-a/"+Name) {
			t.Fatalf("someone else's quota: %v %v, want Leave and a NotOwnedError naming it", got, err)
		}
	}
}

func TestDesired(t *testing.T) {
	q := Desired("tenant-a", corev1.ResourceList{"count/tenants.apps.cozystack.io": qty(1)})
	if q.Namespace != "tenant-a" || q.Name != Name || q.Labels[LabelManagedBy] != ManagedBy || len(q.Spec.Hard) != 1 {
		t.Fatalf("Desired = %+v", q)
	}
	u, err := toUnstructured(q)
	if err != nil || u.GetKind() != "ResourceQuota" || u.GetAPIVersion() != "v1" {
		t.Fatalf("toUnstructured: %v %v", u, err)
	}
	if d := describe(q.Spec.Hard); d != "count/tenants.apps.cozystack.io=1" {
		t.Errorf("describe = %q", d)
	}
}
