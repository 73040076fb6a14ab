package helmbackend

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/conditions"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

const legacyDef = `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: postgres
spec:
  application: {kind: Postgres, plural: postgreses, singular: postgres, openAPISchema: '{}'}
  release:
    prefix: postgres-
    labels: {cozystack.io/ui: "true"}
    chartRef: {kind: ExternalArtifact, name: postgres-chart, namespace: cozy-system}
`

const instanceYAML = `
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-a, labels: {team: data}, generation: 3}
spec:
  replicas: 2
  size: 10Gi
  users: {app: {readonly: false}}
`

func TestBuildLegacyDefinition(t *testing.T) {
	def := instancetest.Definition(t, legacyDef)
	got, err := Backend{}.Build(def, instancetest.Object(t, instanceYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := instancetest.Object(t, `
spec:
  chartRef: {kind: ExternalArtifact, name: postgres-chart, namespace: cozy-system}
  interval: 5m0s
  maxHistory: 5
  install:
    timeout: 10m0s
    strategy: {name: RetryOnFailure, retryInterval: 30s}
  upgrade:
    timeout: 10m0s
    strategy: {name: RetryOnFailure, retryInterval: 30s}
  valuesFrom:
  - {kind: Secret, name: cozystack-values}
  values:
    replicas: 2
    size: 10Gi
    users: {app: {readonly: false}}
  storageNamespace: cozy-helm-tenant-a
`)
	if diff := cmp.Diff(want.Object, instancetest.Normalise(t, got.Object)); diff != "" {
		t.Fatalf("HelmRelease spec (-want +got):\n%s", diff)
	}
	if name := (Backend{}).TargetName(def, instancetest.Object(t, instanceYAML)); name != "postgres-db" {
		t.Fatalf("TargetName = %q", name)
	}
}

// normalise round-trips through YAML so numbers and durations compare as the
// API server would store them.

func TestBuildBackendFormWithAnnotations(t *testing.T) {
	def := instancetest.Definition(t, `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: kafka
  annotations:
    release.cozystack.io/helm-install-timeout: 20m
    release.cozystack.io/helm-upgrade-timeout: 1h
    release.cozystack.io/helm-install-disable-wait: "true"
spec:
  application: {kind: Kafka, plural: kafkas, singular: kafka, openAPISchema: '{}'}
  backend:
    type: Helm
    helm:
      chartRef: {kind: OCIRepository, name: kafka, namespace: cozy-system}
      valuesFrom:
      - {kind: ConfigMap, name: cozystack-values-kafka, valuesKey: values.yaml}
      healthCheckExprs:
      - apiVersion: kafka.strimzi.io/v1beta2
        kind: Kafka
        current: status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')
`)
	got, err := Backend{}.Build(def, instancetest.Object(t, `{apiVersion: apps.cozystack.io/v1alpha1, kind: Kafka, metadata: {name: k, namespace: t}, spec: {}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	hr := &helmv2.HelmRelease{}
	b, _ := yaml.Marshal(got.Object)
	if err := yaml.UnmarshalStrict(b, hr); err != nil {
		t.Fatalf("not a valid HelmRelease: %v", err)
	}
	s := hr.Spec
	if s.Install.Timeout.Duration.String() != "20m0s" || s.Upgrade.Timeout.Duration.String() != "1h0m0s" {
		t.Errorf("timeouts from annotations not applied: %v %v", s.Install.Timeout, s.Upgrade.Timeout)
	}
	if !s.Install.DisableWait || !s.Upgrade.DisableWait {
		t.Error("disable-wait annotation not applied")
	}
	if len(s.ValuesFrom) != 2 || s.ValuesFrom[0].Name != "cozystack-values" || s.ValuesFrom[1].Name != "cozystack-values-kafka" || s.ValuesFrom[1].ValuesKey != "values.yaml" {
		t.Errorf("valuesFrom = %+v, want cozystack-values first then the definition's", s.ValuesFrom)
	}
	if s.WaitStrategy == nil || s.WaitStrategy.Name != helmv2.WaitStrategyPoller {
		t.Errorf("waitStrategy = %+v, want poller because healthCheckExprs are set", s.WaitStrategy)
	}
	if len(s.HealthCheckExprs) != 1 || s.HealthCheckExprs[0] != (kustomize.CustomHealthCheck{APIVersion: "kafka.strimzi.io/v1beta2", Kind: "Kafka",
		HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')"}}) {
		t.Errorf("healthCheckExprs = %+v", s.HealthCheckExprs)
	}
	if v, ok := got.Object["spec"].(map[string]any)["values"].(map[string]any); !ok || len(v) != 0 {
		t.Errorf("values = %#v, want the empty spec carried as {}", got.Object["spec"].(map[string]any)["values"])
	}
}

func TestBuildRejectsBadTimeout(t *testing.T) {
	def := instancetest.Definition(t, legacyDef)
	def.Object.Annotations = map[string]string{cozyv1alpha1.AnnotationHelmInstallTimeout: "ten minutes"}
	_, err := Backend{}.Build(def, instancetest.Object(t, instanceYAML), nil)
	s, ok := reconcileerr.AsStalled(err)
	if !ok || s.Reason != appsv1alpha1.ReasonInvalidTimeoutAnnotation || !strings.Contains(err.Error(), "release.cozystack.io/helm-install-timeout") {
		t.Fatalf("error = %v, want a stalled error naming the annotation", err)
	}
}

func TestProject(t *testing.T) {
	cond := func(typ string, st metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, ObservedGeneration: gen}
	}
	tests := []struct {
		name        string
		hr          helmv2.HelmRelease
		wantReady   metav1.ConditionStatus
		wantReason  string
		wantStalled bool
		wantRecon   bool
		wantVersion string
	}{
		{
			name:      "no status yet",
			hr:        helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 1}},
			wantReady: metav1.ConditionUnknown, wantReason: appsv1alpha1.ReasonProgressing, wantRecon: true,
		},
		{
			name: "installed",
			hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: helmv2.HelmReleaseStatus{
				ObservedGeneration: 2, LastAttemptedRevision: "0.4.1",
				Conditions: []metav1.Condition{cond("Ready", "True", "InstallSucceeded", "Helm install succeeded", 2), cond("Released", "True", "InstallSucceeded", "ok", 2)},
			}},
			wantReady: metav1.ConditionTrue, wantReason: "InstallSucceeded", wantVersion: "0.4.1",
		},
		{
			name: "upgrade in progress for a newer generation",
			hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: helmv2.HelmReleaseStatus{
				ObservedGeneration: 2, LastAttemptedRevision: "0.4.1",
				Conditions: []metav1.Condition{cond("Ready", "True", "InstallSucceeded", "", 2)},
			}},
			wantReady: metav1.ConditionUnknown, wantReason: appsv1alpha1.ReasonProgressing, wantRecon: true, wantVersion: "0.4.1",
		},
		{
			name: "install failed, retrying",
			hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: helmv2.HelmReleaseStatus{
				ObservedGeneration: 1, LastAttemptedRevision: "0.5.0",
				Conditions: []metav1.Condition{cond("Ready", "False", "InstallFailed", "timeout", 1), cond("Released", "False", "InstallFailed", "timeout", 1)},
			}},
			wantReady: metav1.ConditionFalse, wantReason: "InstallFailed", wantVersion: "0.5.0",
		},
		{
			name: "stalled",
			hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: helmv2.HelmReleaseStatus{
				ObservedGeneration: 1,
				Conditions:         []metav1.Condition{cond("Ready", "False", "InvalidCELExpression", "bad expr", 1), cond("Stalled", "True", "InvalidCELExpression", "bad expr", 1)},
			}},
			wantReady: metav1.ConditionFalse, wantReason: "InvalidCELExpression", wantStalled: true,
		},
		{
			name: "helm-controller reconciling",
			hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: helmv2.HelmReleaseStatus{
				ObservedGeneration: 1,
				Conditions:         []metav1.Condition{cond("Ready", "Unknown", "Progressing", "Fresh install in progress", 1)},
			}},
			wantReady: metav1.ConditionUnknown, wantReason: "Progressing", wantRecon: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := &appsv1alpha1.ApplicationStatus{}
			h := conditions.Holder{Generation: 7, Conditions: &status.Conditions}
			tt.hr.Name = "postgres-db"
			Project(&tt.hr, h, status)
			ready := conditions.Get(h, appsv1alpha1.ConditionReady)
			if ready == nil || ready.Status != tt.wantReady || ready.Reason != tt.wantReason || ready.ObservedGeneration != 7 {
				t.Fatalf("Ready = %+v, want %s/%s at generation 7", ready, tt.wantReady, tt.wantReason)
			}
			if conditions.IsTrue(h, conditions.Stalled) != tt.wantStalled || conditions.IsTrue(h, conditions.Reconciling) != tt.wantRecon {
				t.Fatalf("Stalled/Reconciling = %v/%v, want %v/%v", conditions.IsTrue(h, conditions.Stalled), conditions.IsTrue(h, conditions.Reconciling), tt.wantStalled, tt.wantRecon)
			}
			if status.Version != tt.wantVersion {
				t.Fatalf("version = %q, want %q", status.Version, tt.wantVersion)
			}
			if rel := findCondition(tt.hr.Status.Conditions, "Released"); rel != nil {
				got := conditions.Get(h, appsv1alpha1.ConditionReleased)
				if got == nil || got.Status != rel.Status || got.Reason != rel.Reason || got.Message != rel.Message {
					t.Fatalf("Released = %+v, want a copy of %+v", got, rel)
				}
			}
			// ProjectStatus, on the HelmRelease as the cache holds it (with a
			// spec it does not convert), gives the same status.
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tt.hr)
			if err != nil {
				t.Fatal(err)
			}
			obj["spec"] = map[string]any{"values": map[string]any{"replicas": int64(2)}, "interval": "5m", "storageNamespace": "cozy-helm-tenant-a"}
			inst := &unstructured.Unstructured{}
			inst.SetGeneration(7)
			viaCache := &appsv1alpha1.ApplicationStatus{}
			Backend{}.ProjectStatus(nil, inst, &unstructured.Unstructured{Object: obj}, viaCache)
			viaCache.Backend = nil
			if diff := cmp.Diff(status, viaCache, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Fatalf("ProjectStatus differs from Project (-Project +ProjectStatus):\n%s", diff)
			}
		})
	}
}

func findCondition(c []metav1.Condition, typ string) *metav1.Condition {
	for i := range c {
		if c[i].Type == typ {
			return &c[i]
		}
	}
	return nil
}

// TestBuildMatchesUpstream compares, field by field, what Build asks for with
// the HelmRelease upstream Cozystack's API writes for the same definition and
// instance (a fixture written from its convertApplicationToHelmRelease and
// Create: chartRef without apiVersion, 5m interval, maxHistory 5, the
// install timeout for upgrades too, RetryOnFailure every 30s, cozystack-values
// only, the values as the tenant wrote them, the instance's labels and
// annotations prefixed apps.cozystack.io-).
func TestBuildMatchesUpstream(t *testing.T) {
	def := instancetest.Definition(t, `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: tenant
  annotations: {release.cozystack.io/helm-install-timeout: 15m}
spec:
  application:
    kind: Tenant
    plural: tenants
    singular: tenant
    openAPISchema: '{"type":"object","properties":{"host":{"type":"string","default":""},"etcd":{"type":"boolean","default":false},"isolated":{"type":"boolean","default":true}}}'
  release:
    prefix: tenant-
    labels: {sharding.fluxcd.io/key: tenants}
    chartRef: {apiVersion: source.toolkit.fluxcd.io/v1, kind: ExternalArtifact, name: cozystack-tenant-application-default-tenant, namespace: cozy-system}
`)
	inst := instancetest.Object(t, `
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata:
  name: alpha
  namespace: tenant-root
  labels: {team: a}
  annotations:
    note/owner: ops
    apps.cozystack.io/adopt: 0d6c6a51-0000-4000-8000-000000000001
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{}}'
spec: {host: "", etcd: true, isolated: true}
`)
	// As upstream stored it when the tenant created it with {etcd: true}.
	upstream := instancetest.Object(t, `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: tenant-alpha
  namespace: tenant-root
  uid: 0d6c6a51-0000-4000-8000-000000000001
  labels:
    sharding.fluxcd.io/key: shard2
    apps.cozystack.io-team: a
    apps.cozystack.io/application.kind: Tenant
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: alpha
  annotations:
    apps.cozystack.io-note/owner: ops
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-tenant-application-default-tenant, namespace: cozy-system}
  interval: 5m0s
  maxHistory: 5
  install:
    timeout: 15m0s
    strategy: {name: RetryOnFailure, retryInterval: 30s}
  upgrade:
    timeout: 15m0s
    strategy: {name: RetryOnFailure, retryInterval: 30s}
  valuesFrom:
  - {kind: Secret, name: cozystack-values}
  values: {etcd: true}
`)
	got, err := Backend{}.Build(def, inst, upstream)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(upstream.Object["spec"], instancetest.Normalise(t, got.Object)["spec"]); diff != "" {
		t.Errorf("spec differs from upstream's (-upstream +ours):\n%s", diff)
	}
	if diff := cmp.Diff(upstream.GetAnnotations(), got.GetAnnotations()); diff != "" {
		t.Errorf("annotations differ from upstream's (-upstream +ours):\n%s", diff)
	}
	// The labels come from the reconciler's common contract; the shard key
	// follows the live object.
	labels := instance.FollowLive(instance.CommonLabels(def, inst), upstream, Backend{}.Components().LiveLabels)
	if diff := cmp.Diff(upstream.GetLabels(), labels); diff != "" {
		t.Errorf("labels differ from upstream's (-upstream +ours):\n%s", diff)
	}

	// Before the HelmRelease exists, every value goes in, and the tenant
	// namespace is checked.
	fresh, err := Backend{}.Build(def, inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedMap(fresh.Object, "spec", "values"); len(v) != 3 {
		t.Errorf("values of a new HelmRelease = %v, want the whole spec", v)
	}
	deep := inst.DeepCopy()
	deep.SetNamespace("tenant-" + strings.Repeat("n", 50))
	deep.SetName(strings.Repeat("x", 10))
	_, err = Backend{}.Build(def, deep, nil)
	if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != appsv1alpha1.ReasonInvalidSpec || !strings.Contains(err.Error(), "at most 63") {
		t.Fatalf("too deep a tenant: %v, want a stalled InvalidSpec naming the limit", err)
	}
	if _, err := (Backend{}).Build(def, deep, upstream); err != nil {
		t.Fatalf("an existing HelmRelease is managed whatever its tenant's namespace: %v", err)
	}
}

func TestBuildRefusesAnnotationKeyTooLong(t *testing.T) {
	def := instancetest.Definition(t, legacyDef)
	inst := instancetest.Object(t, instanceYAML)
	inst.SetAnnotations(map[string]string{strings.Repeat("k", 60): "v"})
	_, err := Backend{}.Build(def, inst, nil)
	if s, ok := reconcileerr.AsStalled(err); !ok || s.Reason != appsv1alpha1.ReasonInvalidSpec || !strings.Contains(err.Error(), "shorten its key") {
		t.Fatalf("error %v, want a stalled InvalidSpec", err)
	}
}

func TestBuildBackendFormKeepsChartAPIVersion(t *testing.T) {
	def := instancetest.Definition(t, `
metadata: {name: k}
spec:
  application: {kind: K, plural: ks, singular: k, openAPISchema: '{}'}
  backend:
    type: Helm
    helm:
      chartRef: {apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, name: k, namespace: cozy-system}
`)
	got, err := Backend{}.Build(def, instancetest.Object(t, `{apiVersion: apps.cozystack.io/v1alpha1, kind: K, metadata: {name: k, namespace: t}, spec: {}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "chartRef", "apiVersion"); v != "source.toolkit.fluxcd.io/v1" {
		t.Fatalf("chartRef.apiVersion = %q", v)
	}
}
