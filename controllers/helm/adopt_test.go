package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/controllers/helm/internal/helmbackend"
	"github.com/cozyplane/cozyplane/pkg/instance"
	"github.com/cozyplane/cozyplane/pkg/manager"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestAdoptUpstreamHelmRelease plays a cluster switching from upstream
// Cozystack: a HelmRelease written the way upstream's API writes it (full
// create by its own field manager, status from helm-controller, a shard key
// moved by the shard operator, a values key of the platform's own) exists
// before its instance. Without proof the instance refuses it and changes
// nothing; with a wrong proof too; with the right proof it adopts it keeping
// its uid, generation and spec, mirrors its status, and from then on owns
// its fields: a value the tenant drops goes away, the platform's key and the
// shard operator's label stay, and a later shard move is never reverted.
func TestAdoptUpstreamHelmRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startEnvKinds(t, apiextensionsv1.CustomResourceDefinitionNames{Kind: "Adoptee", Plural: "adoptees", ListKind: "AdopteeList", Singular: "adoptee"})
	defer func() { _ = env.Stop() }()

	c := newClient(t, env)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	opts := manager.NewOptions(Name)
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	backend := helmbackend.Backend{}
	instance.Configure(&opts, backend)
	mgr, err := manager.NewWithConfig(opts, env.Config, c.Scheme(), instance.CacheOptions(backend))
	must(err)
	r := &instance.Reconciler{Name: Name, Backend: backend, Components: backend.Components(), Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder(Name), ForeignRecheck: time.Second}
	must(r.SetupWithManager(mgr))
	go func() { _ = mgr.Start(ctx) }()

	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-u"}}))
	def := &cozyv1alpha1.ApplicationDefinition{}
	must(yaml.Unmarshal([]byte(`
metadata:
  name: adoptee
  annotations: {release.cozystack.io/helm-install-timeout: 15m}
spec:
  application: {kind: Adoptee, plural: adoptees, singular: adoptee, openAPISchema: '{"type":"object"}'}
  release:
    prefix: ad-
    labels: {sharding.fluxcd.io/key: tenants}
    chartRef: {kind: ExternalArtifact, name: adoptee, namespace: cozy-system}
`), def))
	must(c.Create(ctx, def))
	def.Status.CRDName = "adoptees.apps.cozystack.io"
	must(c.Status().Update(ctx, def))

	// Upstream's HelmRelease, created by its API with a full create.
	hr := &helmv2.HelmRelease{}
	must(yaml.Unmarshal([]byte(`
metadata:
  name: ad-app
  namespace: tenant-u
  labels:
    sharding.fluxcd.io/key: tenants
    apps.cozystack.io-team: a
    apps.cozystack.io/application.kind: Adoptee
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: app
  annotations: {apps.cozystack.io-note: kept}
spec:
  chartRef: {kind: ExternalArtifact, name: adoptee, namespace: cozy-system}
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
  values: {size: 1Gi, replicas: 2, _cluster: {oidc: "true"}}
`), hr))
	must(c.Create(ctx, hr, client.FieldOwner("cozystack-api")))
	hr.Status = helmv2.HelmReleaseStatus{ObservedGeneration: 1, LastAttemptedRevision: "1.0.0", Conditions: []metav1.Condition{
		{Type: "Ready", Status: "True", Reason: "InstallSucceeded", Message: "Helm install succeeded", LastTransitionTime: metav1.Now(), ObservedGeneration: 1},
	}}
	must(c.Status().Update(ctx, hr, client.FieldOwner("helm-controller")))
	shardMove := func(to string) {
		t.Helper()
		must(c.Patch(ctx, &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "ad-app", Namespace: "tenant-u"}},
			client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, helmbackend.ShardKeyLabel, to))),
			client.FieldOwner("flux-shard-operator")))
	}
	shardMove("shard2")
	before := &helmv2.HelmRelease{}
	must(c.Get(ctx, client.ObjectKeyFromObject(hr), before))

	gvk := appsv1alpha1.GroupVersion.WithKind("Adoptee")
	getInst := func() (*unstructured.Unstructured, *metav1.Condition, string) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		must(c.Get(ctx, types.NamespacedName{Namespace: "tenant-u", Name: "app"}, u))
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var list []metav1.Condition
		b, _ := json.Marshal(conds)
		_ = json.Unmarshal(b, &list)
		v, _, _ := unstructured.NestedString(u.Object, "status", "version")
		return u, meta.FindStatusCondition(list, "Ready"), v
	}
	waitReady := func(what string, ok func(*metav1.Condition, string) error) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
			_, ready, version := getInst()
			if err := ok(ready, version); err != nil {
				return false, what + ": " + err.Error(), nil
			}
			return true, "", nil
		})
	}
	untouched := func() {
		t.Helper()
		now := &helmv2.HelmRelease{}
		must(c.Get(ctx, client.ObjectKeyFromObject(hr), now))
		if now.ResourceVersion != before.ResourceVersion {
			t.Fatalf("the HelmRelease was written before it was adopted: %s", cmp.Diff(before, now))
		}
	}
	notOwned := func(want string) func(*metav1.Condition, string) error {
		return func(ready *metav1.Condition, _ string) error {
			if ready == nil || ready.Reason != appsv1alpha1.ReasonBackingObjectNotOwned || !strings.Contains(ready.Message, want) ||
				!strings.Contains(ready.Message, "cozyplane migrate") {
				return fmt.Errorf("Ready = %+v, want BackingObjectNotOwned saying %q and naming cozyplane migrate", ready, want)
			}
			return nil
		}
	}

	inst := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": "1Gi", "replicas": int64(2)}}}
	inst.SetGroupVersionKind(gvk)
	inst.SetNamespace("tenant-u")
	inst.SetName("app")
	inst.SetLabels(map[string]string{"team": "a"})
	inst.SetAnnotations(map[string]string{"note": "kept"})
	must(c.Create(ctx, inst))
	waitReady("no proof", notOwned("has no controller owner"))
	untouched()

	annotate := func(v string) {
		t.Helper()
		p, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{appsv1alpha1.AnnotationAdopt: v}}})
		must(c.Patch(ctx, inst, client.RawPatch(types.MergePatchType, p)))
	}
	annotate("00000000-0000-0000-0000-000000000000")
	waitReady("a proof for another object", notOwned("the adoption proof names uid 00000000-0000-0000-0000-000000000000"))
	untouched()

	annotate(string(before.UID))
	waitReady("adopted and mirrored", func(ready *metav1.Condition, version string) error {
		if ready == nil || ready.Status != "True" || ready.Reason != "InstallSucceeded" || version != "1.0.0" {
			return fmt.Errorf("Ready = %+v, version %q", ready, version)
		}
		return nil
	})
	after := &helmv2.HelmRelease{}
	must(c.Get(ctx, client.ObjectKeyFromObject(hr), after))
	cur, _, _ := getInst()
	if ref := metav1.GetControllerOf(after); ref == nil || ref.UID != cur.GetUID() || ref.Kind != "Adoptee" {
		t.Fatalf("controller reference %+v, want the instance", ref)
	}
	if after.UID != before.UID || after.Generation != before.Generation {
		t.Fatalf("uid %s→%s, generation %d→%d: adoption must keep both", before.UID, after.UID, before.Generation, after.Generation)
	}
	if diff := cmp.Diff(before.Spec, after.Spec); diff != "" {
		t.Fatalf("adoption changed the spec:\n%s", diff)
	}
	if after.Labels[helmbackend.ShardKeyLabel] != "shard2" || after.Annotations["apps.cozystack.io-note"] != "kept" {
		t.Fatalf("labels %v annotations %v", after.Labels, after.Annotations)
	}
	for _, e := range after.ManagedFields {
		if e.Manager == "cozystack-api" && strings.Contains(string(e.FieldsV1.Raw), `"f:size"`) {
			t.Fatalf("upstream's writer still owns values the instance sets: %s", e.FieldsV1.Raw)
		}
	}

	// The tenant drops a value and changes another; meanwhile the shard
	// operator moves the release again.
	shardMove("shard3")
	must(c.Get(ctx, client.ObjectKeyFromObject(cur), cur))
	must(unstructured.SetNestedField(cur.Object, map[string]any{"size": "2Gi"}, "spec"))
	must(c.Update(ctx, cur))
	var last *helmv2.HelmRelease
	var values map[string]any
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		last = &helmv2.HelmRelease{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(hr), last); err != nil {
			return false, "", err
		}
		values = nil
		_ = json.Unmarshal(last.Spec.Values.Raw, &values)
		return values["size"] == "2Gi", "values never changed: " + string(last.Spec.Values.Raw), nil
	})
	if _, ok := values["replicas"]; ok {
		t.Fatalf("a value the tenant dropped after the adoption lingers: %v", values)
	}
	if _, ok := values["_cluster"]; !ok {
		t.Fatalf("the platform's _cluster key was removed: %v", values)
	}
	if got := last.Labels[helmbackend.ShardKeyLabel]; got != "shard3" {
		t.Fatalf("shard key %q after the spec change, want the shard operator's shard3", got)
	}
	if last.UID != before.UID {
		t.Fatal("the HelmRelease was replaced")
	}
}
