// Package helmbackend is the Helm backend: each instance of a Helm-backed
// kind becomes a Flux HelmRelease, and the HelmRelease's status is projected
// back onto the instance.
//
// The HelmRelease is the one upstream Cozystack's API writes for the same
// instance and definition (see upstream.go), so a cluster switches with no
// Helm upgrade:
//
//	metadata.name     <prefix><instance name>, in the instance's namespace
//	metadata.labels   apps.cozystack.io/application.{kind,group,name}, the
//	                  definition's labels, the instance's labels prefixed
//	                  apps.cozystack.io-; sharding.fluxcd.io/key follows the
//	                  live object once it exists (LiveLabels)
//	metadata.annotations the instance's annotations prefixed
//	                  apps.cozystack.io-, control annotations excepted
//	spec.chartRef     the definition's chartRef (upstream form: no apiVersion)
//	spec.values       the instance's spec, minus defaults the live
//	                  HelmRelease never carried (OmitUnwrittenDefaults)
//	spec.valuesFrom   Secret cozystack-values, then the definition's valuesFrom
//	                  (only platform values objects: a definition naming a
//	                  source a tenant could write gets no HelmRelease,
//	                  SourceNotPlatformOwned; nor does an instance with
//	                  reserved top-level keys, ReservedKey)
//	spec.interval     5m
//	spec.install      strategy RetryOnFailure every 30s, timeout 10m or the
//	spec.upgrade      definition's release.cozystack.io/helm-*-timeout
//	                  annotations (Timeouts); wait disabled by
//	                  helm-install-disable-wait (DisableWait)
//	spec.maxHistory   5
//	spec.waitStrategy the definition's (poller when healthCheckExprs are set)
//	spec.healthCheckExprs the definition's
//	spec.storageNamespace cozy-helm-<namespace> on a new HelmRelease; an
//	                  existing one keeps its own (DesiredStorageNamespace,
//	                  storage.go)
//
// A Tenant whose namespace would exceed 63 characters gets no HelmRelease
// (CheckTenantNamespace).
//
// Status: Ready and Released are copied with their reason and message;
// status.version is the HelmRelease's lastAttemptedRevision;
// LegacyReleaseStorage says when the release records are still in the
// tenant's namespace (storage.go).
package helmbackend

import (
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/api/encoding"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// Defaults of every HelmRelease.
const (
	ValuesSecretName = "cozystack-values"
	Interval         = 5 * time.Minute
	RetryInterval    = 30 * time.Second
	DefaultTimeout   = 10 * time.Minute
	MaxHistory       = 5
)

// Backend implements instance.Backend for Flux HelmReleases.
type Backend struct{}

var _ instance.Backend = Backend{}

// Type implements instance.Backend.
func (Backend) Type() cozyv1alpha1.BackendType { return cozyv1alpha1.BackendHelm }

// TargetGVK implements instance.Backend.
func (Backend) TargetGVK() schema.GroupVersionKind {
	return helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)
}

// TargetName implements instance.Backend.
func (Backend) TargetName(def *instance.Definition, inst *unstructured.Unstructured) string {
	return def.Prefix() + inst.GetName()
}

// Components are how the Helm backend differs from the common loop: the
// HelmRelease stays in the instance's namespace, owned by the instance (the
// default placement), and names a platform namespace for Helm's release
// records (storage.go); the shard key is set from the definition when the
// HelmRelease is created and belongs to Flux's shard operator afterwards.
func (b Backend) Components() instance.Components {
	return instance.Components{Storage: b, LiveLabels: []string{ShardKeyLabel}}
}

// Build implements instance.Backend.
func (b Backend) Build(def *instance.Definition, inst, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	hb := def.Backend.Helm
	if hb == nil || hb.ChartRef == nil {
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, fmt.Errorf("definition %s has no Helm chartRef", def.Name()))
	}
	// Fail closed: a chart or values source a tenant could write, or reserved
	// keys that would override the platform's values, and nothing is written.
	if err := def.Object.CheckSources(); err != nil {
		return nil, reconcileerr.Stalled(appsv1alpha1.ReasonSourceNotPlatformOwned,
			fmt.Errorf("definition %s: %w; ask the platform team to fix the definition", def.Name(), err))
	}
	if err := instance.CheckReservedKeys(inst.Object["spec"]); err != nil {
		return nil, err
	}
	if live == nil {
		// Upstream checks this when the tenant is created only; a
		// HelmRelease that exists is managed whatever its name.
		if err := CheckTenantNamespace(def.GVK.Kind, inst.GetNamespace(), def.Prefix(), inst.GetName()); err != nil {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, err)
		}
	}
	ann := def.Object.Annotations
	install, upgrade, err := Timeouts(ann)
	if err != nil {
		return nil, err
	}
	disableWait, err := DisableWait(ann)
	if err != nil {
		return nil, err
	}

	spec := helmv2.HelmReleaseSpec{
		ChartRef:   chartRef(def),
		Interval:   metav1.Duration{Duration: Interval},
		MaxHistory: ptr.To(MaxHistory),
		Install: &helmv2.Install{
			Timeout:     &metav1.Duration{Duration: install},
			DisableWait: disableWait,
			Strategy:    &helmv2.InstallStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure), RetryInterval: &metav1.Duration{Duration: RetryInterval}},
		},
		Upgrade: &helmv2.Upgrade{
			Timeout:     &metav1.Duration{Duration: upgrade},
			DisableWait: disableWait,
			Strategy:    &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure), RetryInterval: &metav1.Duration{Duration: RetryInterval}},
		},
		ValuesFrom:       append([]helmv2.ValuesReference{{Kind: "Secret", Name: ValuesSecretName}}, hb.ValuesFrom...),
		HealthCheckExprs: hb.HealthCheckExprs,
		WaitStrategy:     waitStrategy(hb.WaitStrategy, len(hb.HealthCheckExprs) > 0),
		StorageNamespace: DesiredStorageNamespace(inst.GetNamespace(), live),
	}
	if values, ok := inst.Object["spec"]; ok && values != nil {
		if vm, ok := values.(map[string]any); ok && live != nil {
			lv, _, _ := unstructured.NestedMap(live.Object, "spec", "values")
			if lv == nil {
				lv = map[string]any{}
			}
			vm = runtime.DeepCopyJSON(vm)
			if err := OmitUnwrittenDefaults(vm, lv, def.Object.Spec.Application.OpenAPISchema); err != nil {
				return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, err)
			}
			values = vm
		}
		b, err := encoding.ValuesJSON(values)
		if err != nil {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, fmt.Errorf("encoding spec as Helm values: %w", err))
		}
		spec.Values = &apiextensionsv1.JSON{Raw: b}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, err
	}
	instance.Prune(m, "values")
	out := &unstructured.Unstructured{Object: map[string]any{"spec": m}}
	if a := instance.InstanceAnnotations(inst); a != nil {
		if err := CheckAnnotationKeys(a, appsv1alpha1.InstanceAnnotationPrefix); err != nil {
			return nil, reconcileerr.Stalled(appsv1alpha1.ReasonInvalidSpec, err)
		}
		out.SetAnnotations(a)
	}
	return out, nil
}

// chartRef is the definition's chart reference as upstream writes it. A
// definition in upstream's form (spec.release) gets exactly upstream's
// chartRef, which carries kind, name and namespace only; the backend form
// keeps an apiVersion it names.
func chartRef(def *instance.Definition) *helmv2.CrossNamespaceSourceReference {
	ref := def.Backend.Helm.ChartRef.DeepCopy()
	if def.Object.Spec.Backend == nil {
		ref.APIVersion = ""
	}
	return ref
}

// waitStrategy is the HelmRelease's waitStrategy as upstream resolves it: the
// definition's, else poller when health check expressions are set (only the
// poller evaluates them), else none (helm-controller's default).
func waitStrategy(name string, hasHealthChecks bool) *helmv2.WaitStrategy {
	switch {
	case name != "":
		return &helmv2.WaitStrategy{Name: helmv2.WaitStrategyName(name)}
	case hasHealthChecks:
		return &helmv2.WaitStrategy{Name: helmv2.WaitStrategyPoller}
	}
	return nil
}

// ProjectStatus implements instance.Backend.
func (Backend) ProjectStatus(def *instance.Definition, inst, target *unstructured.Unstructured, status *appsv1alpha1.ApplicationStatus) {
	h := conditions.Holder{Generation: inst.GetGeneration(), Conditions: &status.Conditions}
	status.Backend = &appsv1alpha1.BackendStatus{
		Type:       string(cozyv1alpha1.BackendHelm),
		Kind:       helmv2.HelmReleaseKind,
		APIVersion: helmv2.GroupVersion.String(),
	}
	if target == nil {
		status.Backend.Name = def.Prefix() + inst.GetName()
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "HelmRelease created; waiting for helm-controller")
		return
	}
	status.Backend.Name = target.GetName()
	projectStorage(h, target)
	// Project reads the name, the generation and the status: the spec
	// (values and all) is not converted.
	hr := &helmv2.HelmRelease{}
	hr.Name, hr.Generation = target.GetName(), target.GetGeneration()
	if st, ok := target.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(st, &hr.Status); err != nil {
			conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "cannot read the HelmRelease status: "+err.Error())
			return
		}
	}
	Project(hr, h, status)
}

// Project maps a HelmRelease's status onto an instance status. Pure.
func Project(hr *helmv2.HelmRelease, h conditions.Holder, status *appsv1alpha1.ApplicationStatus) {
	status.Version = hr.Status.LastAttemptedRevision
	if rel := meta.FindStatusCondition(hr.Status.Conditions, "Released"); rel != nil {
		conditions.Set(h, appsv1alpha1.ConditionReleased, rel.Status, rel.Reason, rel.Message)
	} else {
		conditions.Delete(h, appsv1alpha1.ConditionReleased)
	}
	ready := meta.FindStatusCondition(hr.Status.Conditions, "Ready")
	stale := hr.Status.ObservedGeneration < hr.Generation
	switch {
	case ready == nil:
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing, "waiting for helm-controller to report on HelmRelease "+hr.Name)
	case stale || ready.ObservedGeneration < hr.Generation && ready.ObservedGeneration != 0:
		conditions.MarkReconciling(h, appsv1alpha1.ReasonProgressing,
			fmt.Sprintf("helm-controller has not yet processed generation %d of HelmRelease %s", hr.Generation, hr.Name))
	case ready.Status == metav1.ConditionTrue:
		conditions.MarkReady(h, ready.Reason, ready.Message)
	case ready.Status == metav1.ConditionFalse && isTerminal(hr):
		conditions.MarkStalled(h, ready.Reason, ready.Message)
	case ready.Status == metav1.ConditionFalse:
		conditions.MarkNotReady(h, ready.Reason, ready.Message)
	default:
		conditions.MarkReconciling(h, ready.Reason, ready.Message)
	}
}

// isTerminal reports a HelmRelease that helm-controller gave up on (Stalled).
func isTerminal(hr *helmv2.HelmRelease) bool {
	return meta.IsStatusConditionTrue(hr.Status.Conditions, "Stalled")
}
