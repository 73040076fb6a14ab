// Package quota writes the default object-count quota of every tenant
// namespace: one ResourceQuota, Name, capping the instances of each kind of
// apps.cozystack.io (count/<plural>.apps.cozystack.io) and the child
// tenants (the Tenant kind), so that one tenant cannot exhaust the API
// server's storage or the backends' capacity with instances.
//
// The decisions (Limits, Hard, Decide) are pure; Reconciler applies them.
package quota

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// Name is the ResourceQuota the controller writes in each tenant
	// namespace.
	Name = "cozystack-instances"
	// LabelManagedBy marks the quota as the appdef controller's; a quota at
	// Name without it is someone else's and is never changed.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "cozystack-appdef"
	// AnnotationInstances on a tenant namespace overrides the instance
	// limit of every kind there: a non-negative integer, or Unlimited.
	AnnotationInstances = "apps.cozystack.io/instance-quota"
	// AnnotationTenants on a tenant namespace overrides the child tenant
	// limit there: a non-negative integer, or Unlimited.
	AnnotationTenants = "apps.cozystack.io/tenant-quota"
	// Unlimited, as an annotation value, lifts the limit.
	Unlimited = "unlimited"
	// TenantKind is the kind whose instances are child tenants.
	TenantKind = "Tenant"
	// Group is the group of the instances counted.
	Group = "apps.cozystack.io"

	// DefaultInstances is the default limit of instances of one kind in
	// one tenant namespace.
	DefaultInstances = 100
	// DefaultTenants is the default limit of child tenants in one tenant
	// namespace.
	DefaultTenants = 20
	// DefaultNamespacePrefix starts the names of tenant namespaces.
	DefaultNamespacePrefix = "tenant-"
	// DefaultKindDelay is how long a kind is served before the quota
	// counts it. kube-controller-manager's quota controller counts a
	// resource only once its discovery (every 30 s) has found it, and
	// computes a quota's usage when the quota changes: a limit on a kind it
	// cannot count yet leaves the usage unknown, and the API server refuses
	// every instance of the kind ("status unknown for quota") until the
	// controller's next full pass (5 minutes). Added after this delay, the
	// change itself makes it count at once.
	DefaultKindDelay = time.Minute
)

// Config is what the flags say. A limit of zero or less writes no limit of
// that class (a namespace annotation may still set one).
type Config struct {
	Instances       int
	Tenants         int
	NamespacePrefix string
	// KindDelay: see DefaultKindDelay; zero or less means the default.
	KindDelay time.Duration
}

// Kind is one served kind: its name and plural.
type Kind struct {
	Kind   string
	Plural string
}

// Covers says whether the namespace named ns gets a default quota.
func (c Config) Covers(ns string) bool {
	p := c.NamespacePrefix
	if p == "" {
		p = DefaultNamespacePrefix
	}
	return strings.HasPrefix(ns, p) && len(ns) > len(p)
}

// Limits are the limits of one namespace; a negative value is no limit.
type Limits struct {
	Instances int64
	Tenants   int64
}

// LimitsFor resolves the limits of a namespace from the configuration and
// the namespace's annotations. An annotation that is neither a
// non-negative integer nor Unlimited is an error naming it (the caller
// keeps whatever quota there is and reports it).
func LimitsFor(c Config, annotations map[string]string) (Limits, error) {
	l := Limits{Instances: flagLimit(c.Instances), Tenants: flagLimit(c.Tenants)}
	for _, a := range []struct {
		key string
		to  *int64
	}{{AnnotationInstances, &l.Instances}, {AnnotationTenants, &l.Tenants}} {
		v, ok := annotations[a.key]
		if !ok {
			continue
		}
		n, err := parseLimit(v)
		if err != nil {
			return Limits{}, fmt.Errorf("annotation %s=%q: %w", a.key, v, err)
		}
		*a.to = n
	}
	return l, nil
}

func flagLimit(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

func parseLimit(v string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(v), Unlimited) {
		return -1, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a non-negative integer or %q", Unlimited)
	}
	return n, nil
}

// ResourceName is the quota resource that counts the instances of plural.
func ResourceName(plural string) corev1.ResourceName {
	return corev1.ResourceName("count/" + plural + "." + Group)
}

// Hard is the quota's spec.hard for kinds under limits: the tenant limit
// for the Tenant kind, the instance limit for every other; kinds without a
// limit are left out. Empty when nothing is limited. Pure.
func Hard(kinds []Kind, l Limits) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, k := range kinds {
		if k.Plural == "" {
			continue
		}
		n := l.Instances
		if k.Kind == TenantKind {
			n = l.Tenants
		}
		if n < 0 {
			continue
		}
		out[ResourceName(k.Plural)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	return out
}

// Action is what to do about a namespace's quota.
type Action int

const (
	// Leave: nothing to write (no quota wanted and none of ours there).
	Leave Action = iota
	// Apply: create or bring ours to the desired limits (the applier
	// sends nothing when it already matches).
	Apply
	// Delete: ours is there and no limit is wanted.
	Delete
)

// NotOwnedError says a ResourceQuota at Name is someone else's.
type NotOwnedError struct{ Namespace, Value string }

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("ResourceQuota %s/%s exists but was not created by the appdef controller (label %s is %q, want %q): "+
		"it is left untouched and the namespace's default instance quota is not written. "+
		"Delete it (or rename it; any other quota of the namespace applies too) to let the default apply, "+
		"or set the namespace annotations %s and %s to change the default",
		e.Namespace, Name, LabelManagedBy, e.Value, ManagedBy, AnnotationInstances, AnnotationTenants)
}

// Decide says what to do given live, the quota at Name (nil when absent),
// and hard, the desired limits. A quota not labelled as ours is never
// written: Decide returns a *NotOwnedError. Pure.
func Decide(live *corev1.ResourceQuota, hard corev1.ResourceList) (Action, error) {
	if live != nil && live.Labels[LabelManagedBy] != ManagedBy {
		return Leave, &NotOwnedError{Namespace: live.Namespace, Value: live.Labels[LabelManagedBy]}
	}
	switch {
	case len(hard) > 0:
		return Apply, nil
	case live != nil:
		return Delete, nil
	}
	return Leave, nil
}

// Desired is the quota of namespace ns with limits hard.
func Desired(ns string, hard corev1.ResourceList) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{}
	q.APIVersion, q.Kind = "v1", "ResourceQuota"
	q.Namespace, q.Name = ns, Name
	q.Labels = map[string]string{LabelManagedBy: ManagedBy}
	q.Spec.Hard = hard
	return q
}

func sortStrings(s []string) { sort.Strings(s) }

// ServedKinds are the kinds of the CRDs of Group that have been
// Established for at least delay at now, and how long until the next one
// of the others is (zero when none waits). A CRD being deleted is left out:
// it is deleted only once no instance is left. Pure.
func ServedKinds(crds []apiextensionsv1.CustomResourceDefinition, now time.Time, delay time.Duration) ([]Kind, time.Duration) {
	var kinds []Kind
	var wait time.Duration
	for i := range crds {
		crd := &crds[i]
		if crd.Spec.Group != Group || crd.DeletionTimestamp != nil {
			continue
		}
		for _, c := range crd.Status.Conditions {
			if c.Type != apiextensionsv1.Established || c.Status != apiextensionsv1.ConditionTrue {
				continue
			}
			if age := now.Sub(c.LastTransitionTime.Time); age < delay {
				if left := delay - age; wait == 0 || left < wait {
					wait = left
				}
				continue
			}
			kinds = append(kinds, Kind{Kind: crd.Spec.Names.Kind, Plural: crd.Spec.Names.Plural})
		}
	}
	return SortKinds(kinds), wait
}

// SortKinds orders kinds by plural and drops empty and repeated plurals (two
// definitions may claim one; only one of them is served), so the quota does
// not change with the order definitions are listed in.
func SortKinds(kinds []Kind) []Kind {
	sort.Slice(kinds, func(i, j int) bool {
		if kinds[i].Plural != kinds[j].Plural {
			return kinds[i].Plural < kinds[j].Plural
		}
		return kinds[i].Kind < kinds[j].Kind
	})
	out := kinds[:0]
	for i, k := range kinds {
		if k.Plural == "" || i > 0 && k.Plural == kinds[i-1].Plural {
			continue
		}
		out = append(out, k)
	}
	return out
}

// MissingUsage lists the instance counts (count/<plural>.apps.cozystack.io)
// that q's status enforces (status.hard) without a usage beside them
// (status.used), sorted. The API server refuses every create of such a kind
// in the namespace ("status unknown for quota") until a usage is written:
// kube-controller-manager's quota controller writes one only once its
// discovery has found the kind, which can take longer than KindDelay on a
// busy control plane. Pure.
func MissingUsage(q *corev1.ResourceQuota) []corev1.ResourceName {
	if q == nil {
		return nil
	}
	var out []corev1.ResourceName
	for r := range q.Status.Hard {
		if _, ok := q.Status.Used[r]; ok || PluralOf(r) == "" {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// PluralOf is the plural a quota resource counts the instances of
// (ResourceName's inverse), or "" when r counts something else.
func PluralOf(r corev1.ResourceName) string {
	s, ok := strings.CutPrefix(string(r), "count/")
	if !ok {
		return ""
	}
	plural, ok := strings.CutSuffix(s, "."+Group)
	if !ok || plural == "" || strings.Contains(plural, ".") {
		return ""
	}
	return plural
}
