package helmbackend

// The decisions in this file keep a HelmRelease written here identical to the
// one upstream Cozystack's aggregated API writes for the same instance and
// definition (its convertApplicationToHelmRelease, Create and Update), so a
// cluster can switch with no Helm upgrade: applying our desired state over a
// HelmRelease upstream wrote leaves its spec, and so its generation, as it is.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// ShardKeyLabel is the label helm-controller shards select HelmReleases by.
// A definition may set it (upstream's Tenant definition sets
// sharding.fluxcd.io/key=tenants); after creation it belongs to Flux's shard
// operator, which moves tenants between shards by rewriting it.
const ShardKeyLabel = "sharding.fluxcd.io/key"

// helmDuration is the form helm-controller's CRD accepts for timeouts
// (ms, s, m and h units only); time.ParseDuration alone also accepts units the
// API server would then refuse.
var helmDuration = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

// Timeouts returns the install and upgrade timeouts of a definition's
// HelmReleases, as upstream decides them: helm-install-timeout sets both,
// helm-upgrade-timeout then overrides the upgrade one alone; an absent,
// empty or zero annotation leaves the default. A value helm-controller would
// refuse is a Stalled error naming the annotation. Pure.
func Timeouts(ann map[string]string) (install, upgrade time.Duration, err error) {
	install, upgrade = DefaultTimeout, DefaultTimeout
	d, err := parseTimeout(ann, cozyv1alpha1.AnnotationHelmInstallTimeout)
	if err != nil {
		return 0, 0, err
	}
	if d > 0 {
		install, upgrade = d, d
	}
	d, err = parseTimeout(ann, cozyv1alpha1.AnnotationHelmUpgradeTimeout)
	if err != nil {
		return 0, 0, err
	}
	if d > 0 {
		upgrade = d
	}
	return install, upgrade, nil
}

func parseTimeout(ann map[string]string, key string) (time.Duration, error) {
	v := ann[key]
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if !helmDuration.MatchString(v) || err != nil {
		return 0, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidTimeoutAnnotation,
			fmt.Errorf("annotation %s=%q on the definition is not a duration helm-controller accepts (digits with ms, s, m or h, such as 15m or 1h30m)", key, v))
	}
	return d, nil
}

// DisableWait reads release.cozystack.io/helm-install-disable-wait as upstream
// does: "true" or "false" in any case, surrounding spaces ignored, absent or
// empty meaning false. Pure.
func DisableWait(ann map[string]string) (bool, error) {
	v := strings.TrimSpace(ann[cozyv1alpha1.AnnotationHelmInstallDisableWait])
	switch {
	case v == "":
		return false, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidDisableWaitAnnotation,
		fmt.Errorf("annotation %s=%q on the definition must be \"true\" or \"false\"", cozyv1alpha1.AnnotationHelmInstallDisableWait, v))
}

// TenantKind is the kind whose instances each get a namespace of their own.
const TenantKind = "Tenant"

// MaxNamespaceLength is the length limit of a namespace name (a DNS-1123
// label).
const MaxNamespaceLength = validation.DNS1123LabelMaxLength

// TenantNamespace is the namespace the tenant chart creates for a Tenant
// named name in namespace ns, as upstream computes it: tenant-root for the
// root tenant, tenant-<name> for a tenant in tenant-root, <ns>-<name> for one
// nested deeper. Pure.
func TenantNamespace(ns, prefix, name string) string {
	switch {
	case ns == "tenant-root" && prefix+name == "tenant-root":
		return "tenant-root"
	case ns == "tenant-root":
		return "tenant-" + name
	}
	return ns + "-" + name
}

// CheckTenantNamespace refuses a Tenant whose namespace would not be a valid
// namespace name because of its length, as upstream's API refuses to create
// it: the error names the computed namespace and the limit. Pure.
func CheckTenantNamespace(kind, ns, prefix, name string) error {
	if kind != TenantKind {
		return nil
	}
	computed := TenantNamespace(ns, prefix, name)
	if len(computed) <= MaxNamespaceLength {
		return nil
	}
	return fmt.Errorf("%s %s would get namespace %q, which is %d characters long; a namespace name may have at most %d: "+
		"shorten the tenant's name or nest it less deeply (nothing was created)", kind, name, computed, len(computed), MaxNamespaceLength)
}

// CheckAnnotationKeys reports the first annotation key that is not valid on
// a Kubernetes object (a prefixed instance annotation can outgrow the limits
// the instance's own key met), with the instance key it came from.
func CheckAnnotationKeys(ann map[string]string, prefix string) error {
	for k := range ann {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("the instance's annotation %q cannot be copied to the HelmRelease as %q (%s): shorten its key",
				strings.TrimPrefix(k, prefix), k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// OmitUnwrittenDefaults removes from values (the instance's spec) the entries
// the live HelmRelease's values lack and whose value is exactly what the
// schema's defaults would give an absent key, recursively through objects
// both sides have. The API server writes schema defaults into every
// instance, but upstream's API stored values as the tenant wrote them on
// create: without this, the first apply over such a HelmRelease would add
// every default, change its spec and start a Helm upgrade that renders the
// same thing (the charts' values.yaml hold the same defaults as their
// schemas). A key the tenant set to something else, or that the live values
// already carry, is kept. schema is the definition's openAPISchema; live is
// nil when there is no HelmRelease yet, and then nothing is removed. values
// is modified. Pure.
func OmitUnwrittenDefaults(values, live map[string]any, schema string) error {
	if live == nil || !missesAny(values, live) {
		return nil
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return fmt.Errorf("reading the definition's openAPISchema: %w", err)
	}
	omitDefaults(values, live, s)
	return nil
}

func missesAny(values, live map[string]any) bool {
	for k, v := range values {
		lv, ok := live[k]
		if !ok {
			return true
		}
		if vm, ok := v.(map[string]any); ok {
			if lm, ok := lv.(map[string]any); ok && missesAny(vm, lm) {
				return true
			}
		}
	}
	return false
}

func omitDefaults(values, live, schema map[string]any) {
	props, _ := schema["properties"].(map[string]any)
	for k, v := range values {
		ps, _ := props[k].(map[string]any)
		if ps == nil {
			continue
		}
		lv, inLive := live[k]
		if !inLive {
			if d, ok := defaulted(ps); ok && sameJSON(v, d) {
				delete(values, k)
			}
			continue
		}
		vm, ok1 := v.(map[string]any)
		lm, ok2 := lv.(map[string]any)
		if ok1 && ok2 {
			omitDefaults(vm, lm, ps)
		}
	}
}

// defaulted is the value the API server gives an absent property: its
// default, with the defaults of the default's own absent properties applied
// in turn.
func defaulted(schema map[string]any) (any, bool) {
	d, ok := schema["default"]
	if !ok {
		return nil, false
	}
	return applyNested(deepCopyJSON(d), schema), true
}

func applyNested(v any, schema map[string]any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	props, _ := schema["properties"].(map[string]any)
	for k, p := range props {
		ps, _ := p.(map[string]any)
		if ps == nil {
			continue
		}
		if cur, ok := m[k]; ok {
			m[k] = applyNested(cur, ps)
		} else if d, ok := defaulted(ps); ok {
			m[k] = d
		}
	}
	return m
}

func deepCopyJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// sameJSON compares two values as JSON documents (numbers by value, map keys
// in any order).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
