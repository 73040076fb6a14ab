package quota

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

func TestServedKinds(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	crd := func(group, kind, plural string, establishedAgo time.Duration, deleting bool) apiextensionsv1.CustomResourceDefinition {
		c := apiextensionsv1.CustomResourceDefinition{}
		c.Spec.Group = group
		c.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural}
		if establishedAgo >= 0 {
			c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-establishedAgo))},
			}
		}
		if deleting {
			c.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return c
	}
	kinds, wait := ServedKinds([]apiextensionsv1.CustomResourceDefinition{
		crd(Group, "Tenant", "tenants", time.Hour, false),
		crd(Group, "Bucket", "buckets", 2*time.Minute, false),
		crd(Group, "Fresh", "freshes", 20*time.Second, false),
		crd(Group, "Fresher", "freshers", 50*time.Second, false),
		crd(Group, "Pending", "pendings", -1, false),
		crd(Group, "Going", "goings", time.Hour, true),
		crd("example.org", "Other", "others", time.Hour, false),
	}, now, time.Minute)
	if len(kinds) != 2 || kinds[0] != (Kind{"Bucket", "buckets"}) || kinds[1] != (Kind{"Tenant", "tenants"}) {
		t.Errorf("kinds %+v, want Bucket and Tenant", kinds)
	}
	if wait != 10*time.Second {
		t.Errorf("wait %s, want 10s (the next kind to count)", wait)
	}
	if _, wait := ServedKinds(nil, now, time.Minute); wait != 0 {
		t.Errorf("nothing waits, yet %s", wait)
	}
}

func TestMissingUsage(t *testing.T) {
	q := func(hard, used corev1.ResourceList) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	}
	n := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	pg, tn := ResourceName("postgreses"), ResourceName("tenants")
	for _, tc := range []struct {
		name string
		q    *corev1.ResourceQuota
		want []corev1.ResourceName
	}{
		{"no quota", nil, nil},
		{"no status yet: nothing enforced", q(nil, nil), nil},
		{"every enforced kind counted", q(corev1.ResourceList{pg: n(5), tn: n(2)}, corev1.ResourceList{pg: n(1), tn: n(0)}), nil},
		{"a kind enforced before it is counted", q(corev1.ResourceList{pg: n(5), tn: n(2)}, corev1.ResourceList{tn: n(0)}), []corev1.ResourceName{pg}},
		{"sorted", q(corev1.ResourceList{pg: n(5), tn: n(2)}, nil), []corev1.ResourceName{pg, tn}},
		{"other resources are the quota controller's", q(corev1.ResourceList{"pods": n(5), "count/secrets": n(1), "count/x.example.com": n(1)}, nil), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MissingUsage(tc.q); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("MissingUsage = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPluralOf(t *testing.T) {
	for r, want := range map[corev1.ResourceName]string{
		ResourceName("postgreses"):        "postgreses",
		"count/tenants.apps.cozystack.io": "tenants",
		"count/.apps.cozystack.io":        "",
		"count/a.b.apps.cozystack.io":     "",
		"count/tenants.cozystack.io":      "",
		"pods":                            "",
		"tenants.apps.cozystack.io":       "",
	} {
		if got := PluralOf(r); got != want {
			t.Errorf("PluralOf(%q) = %q, want %q", r, got, want)
		}
	}
}
