package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/testenv"
	"github.com/cozyplane/cozyplane/pkg/writemetric"
)

func TestServesKind(t *testing.T) {
	def := newHelmDef("it-redis", "ItRedis", "itredises", `{"type":"object","properties":{"replicas":{"type":"integer","minimum":1,"default":2,"description":"Number of replicas."},"size":{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}}}`)
	create(t, def)
	cleanup(t, def.Name)

	d := waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	if d.Status.Backend != cozyv1alpha1.BackendHelm || d.Status.CRDName != "itredises.apps.cozystack.io" {
		t.Errorf("status %+v", d.Status)
	}
	if !controllerutilContains(d.Finalizers, cozyv1alpha1.FinalizerInstances) {
		t.Errorf("finalizers %v", d.Finalizers)
	}
	// kstatus reads the definition as Current.
	u := &unstructured.Unstructured{}
	m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	u.Object = m
	if res, err := status.Compute(u); err != nil || res.Status != status.CurrentStatus {
		t.Errorf("kstatus %v %v", res, err)
	}

	crd, ok := getCRD(t, "itredises.apps.cozystack.io")
	if !ok {
		t.Fatal("no CRD")
	}
	if crd.Labels[cozyschema.LabelDefinition] != def.Name || crd.Labels[cozyschema.LabelBackend] != "Helm" {
		t.Errorf("labels %v", crd.Labels)
	}
	ref := metav1.GetControllerOf(crd)
	if ref == nil || ref.UID != d.UID || ref.Kind != "ApplicationDefinition" {
		t.Errorf("owner %+v", ref)
	}
	for _, mf := range crd.ManagedFields {
		if mf.Operation == metav1.ManagedFieldsOperationApply && mf.Manager != "cozystack-appdef" {
			t.Errorf("applied by %s", mf.Manager)
		}
	}
	// Its writes are counted with every controller's.
	for _, kind := range []string{"CustomResourceDefinition", "ClusterRole"} {
		if n := writemetric.Counted("cozystack-appdef", kind, "created"); n < 1 {
			t.Errorf("%s created = %v, want at least 1", kind, n)
		}
	}

	// The kind is served and validated against the schema.
	ctx := context.Background()
	if err := k8s.Create(ctx, newInstance("ItRedis", "cache", map[string]any{"size": "1Gi"})); err != nil {
		t.Fatalf("valid instance refused: %v", err)
	}
	inst := newInstance("ItRedis", "cache", nil)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(inst.Object, "spec", "replicas"); v != 2 {
		t.Errorf("default not applied: %v", inst.Object["spec"])
	}
	err := k8s.Create(ctx, newInstance("ItRedis", "bad", map[string]any{"replicas": 0}))
	if err == nil || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("invalid instance: %v", err)
	}
	err = k8s.Create(ctx, newInstance("ItRedis", strings.Repeat("a", 53-len("itredis-")+1), map[string]any{}))
	if err == nil || !strings.Contains(err.Error(), `"itredis-" + metadata.name`) {
		t.Errorf("long name: %v", err)
	}
	if err := k8s.Delete(ctx, newInstance("ItRedis", "cache", nil)); err != nil {
		t.Fatal(err)
	}
}

func TestSettledDefinitionMakesNoWrites(t *testing.T) {
	def := newTerraformDef("it-settled", "ItSettled", "itsettleds", `{"type":"object","additionalProperties":true,"properties":{"region":{"type":"string","default":"eu"}}}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	// Let the reconciles our own writes triggered run out: no write for a
	// second.
	before := int64(testenv.Settled(t, timeout, time.Second, func() int { return int(writes.Writes()) }))

	for i := 0; i < 3; i++ {
		if _, err := rec.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: def.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	// Neither these reconciles nor any they might trigger write.
	testenv.Consistently(t, 500*time.Millisecond, func() (bool, string, error) {
		n := writes.Writes() - before
		return n == 0, fmt.Sprintf("a settled definition made %d writes", n), nil
	})
}

func TestInvalidJSON(t *testing.T) {
	def := newHelmDef("it-badjson", "ItBadJSON", "itbadjsons", `{"type":"object",`)
	create(t, def)
	cleanup(t, def.Name)
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonInvalidJSON, metav1.ConditionFalse)
	if !strings.Contains(readyMessage(d), "offset") {
		t.Errorf("message %q", readyMessage(d))
	}
	if !meta.IsStatusConditionTrue(d.Status.Conditions, cozyv1alpha1.ConditionStalled) {
		t.Errorf("not stalled: %+v", d.Status.Conditions)
	}
	if _, ok := getCRD(t, "itbadjsons.apps.cozystack.io"); ok {
		t.Errorf("a CRD was created")
	}
}

func TestTerraformInvalidVariableName(t *testing.T) {
	def := newTerraformDef("it-badvar", "ItBadVar", "itbadvars", `{"type":"object","properties":{"cidr":{"type":"string"},"Bad-Key":{"type":"string"}}}`)
	create(t, def)
	cleanup(t, def.Name)
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonInvalidVariableName, metav1.ConditionFalse)
	if !strings.Contains(readyMessage(d), `"Bad-Key"`) {
		t.Errorf("message %q", readyMessage(d))
	}
}

func TestNameClash(t *testing.T) {
	first := newHelmDef("it-clash-a", "ItClash", "itclashes", `{"type":"object"}`)
	create(t, first)
	cleanup(t, first.Name)
	waitReason(t, first.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	second := newHelmDef("it-clash-b", "ItClash", "itclashbs", `{"type":"object"}`)
	create(t, second)
	cleanup(t, second.Name)
	d := waitReason(t, second.Name, cozyv1alpha1.ReasonNameClash, metav1.ConditionFalse)
	if !strings.Contains(readyMessage(d), "ApplicationDefinition it-clash-a") {
		t.Errorf("message %q", readyMessage(d))
	}
	if _, ok := getCRD(t, "itclashbs.apps.cozystack.io"); ok {
		t.Errorf("the younger definition got a CRD")
	}
	// The older one keeps serving.
	waitReason(t, first.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	// Once the older one is gone, the younger one is served.
	if err := k8s.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	waitReason(t, second.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
}

func TestForeignCRDIsLeftAlone(t *testing.T) {
	foreign := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "itforeigns.apps.cozystack.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "apps.cozystack.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Other", Plural: "itforeigns", Singular: "other", ListKind: "OtherList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	create(t, foreign)
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), foreign) })
	rv := foreign.ResourceVersion

	def := newHelmDef("it-foreign", "ItForeign", "itforeigns", `{"type":"object"}`)
	create(t, def)
	cleanup(t, def.Name)
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonForeignCRD, metav1.ConditionFalse)
	if !strings.Contains(readyMessage(d), "itforeigns.apps.cozystack.io") {
		t.Errorf("message %q", readyMessage(d))
	}
	crd, _ := getCRD(t, foreign.Name)
	// The API server may have updated its status, never its spec or labels.
	if crd.Generation != 1 || crd.Labels[cozyschema.LabelDefinition] != "" || len(crd.OwnerReferences) != 0 || crd.Spec.Names.Kind != "Other" {
		t.Errorf("foreign CRD touched: generation %d labels %v owners %v (rv %s → %s)", crd.Generation, crd.Labels, crd.OwnerReferences, rv, crd.ResourceVersion)
	}

	// Once the foreign CRD is gone, the definition is served.
	if err := k8s.Delete(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
}

func TestSchemaChangeUpdatesCRDInPlace(t *testing.T) {
	def := newHelmDef("it-change", "ItChange", "itchanges", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	crd, _ := getCRD(t, "itchanges.apps.cozystack.io")
	uid := crd.UID

	d := get(t, def.Name)
	d.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","description":"New."}}}`
	if err := k8s.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	crd, _ = getCRD(t, "itchanges.apps.cozystack.io")
	if crd.UID != uid {
		t.Errorf("the CRD was recreated")
	}
	if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["b"]; !ok {
		t.Errorf("new property missing")
	}
}

func TestKindRenameIsRefused(t *testing.T) {
	def := newHelmDef("it-rename", "ItRename", "itrenames", `{"type":"object"}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	// A new kind, same plural.
	d := get(t, def.Name)
	d.Spec.Application.Kind = "ItRenamed"
	if err := k8s.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d = waitReason(t, def.Name, cozyv1alpha1.ReasonKindRenamed, metav1.ConditionFalse)
	if !strings.Contains(readyMessage(d), "serves kind ItRename ") {
		t.Errorf("message %q", readyMessage(d))
	}
	crd, _ := getCRD(t, "itrenames.apps.cozystack.io")
	if crd.Spec.Names.Kind != "ItRename" {
		t.Errorf("CRD renamed to %s", crd.Spec.Names.Kind)
	}

	// A new plural: never a second CRD.
	d.Spec.Application.Kind = "ItRename"
	d.Spec.Application.Plural = "itrenameds"
	if err := k8s.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonKindRenamed, metav1.ConditionFalse)
	if _, ok := getCRD(t, "itrenameds.apps.cozystack.io"); ok {
		t.Errorf("a second CRD was created")
	}

	// Going back serves the kind again.
	d = get(t, def.Name)
	d.Spec.Application.Plural = "itrenames"
	if err := k8s.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
}

func TestDeletionWaitsForInstances(t *testing.T) {
	ctx := context.Background()
	def := newHelmDef("it-delete", "ItDelete", "itdeletes", `{"type":"object"}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	inst := newInstance("ItDelete", "keepme", map[string]any{"a": "b"})
	var err error
	eventually(t, "instance created", func() (bool, string) {
		err = k8s.Create(ctx, inst)
		return err == nil, errString(err)
	})

	if err := k8s.Delete(ctx, get(t, def.Name)); err != nil {
		t.Fatal(err)
	}
	d := waitReason(t, def.Name, cozyv1alpha1.ReasonInstancesRemain, metav1.ConditionUnknown)
	if d.Status.Instances == nil || *d.Status.Instances != 1 || !strings.Contains(readyMessage(d), "default/keepme") {
		t.Errorf("status %+v", d.Status)
	}
	// Both stay, for as long as the instance does: given a second (more
	// than three instance polls) to go wrong, they do not.
	testenv.Consistently(t, time.Second, func() (bool, string, error) {
		if err := k8s.Get(ctx, types.NamespacedName{Name: def.Name}, &cozyv1alpha1.ApplicationDefinition{}); err != nil {
			return false, "definition: " + err.Error(), nil
		}
		if _, ok := getCRD(t, "itdeletes.apps.cozystack.io"); !ok {
			return false, "CRD deleted while an instance exists", nil
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
			return false, "instance: " + err.Error(), nil
		}
		return true, "", nil
	})

	// The last instance goes: so do the definition and its CRD.
	if err := k8s.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "definition and CRD deleted", func() (bool, string) {
		err := k8s.Get(ctx, types.NamespacedName{Name: def.Name}, &cozyv1alpha1.ApplicationDefinition{})
		_, crdThere := getCRD(t, "itdeletes.apps.cozystack.io")
		return apierrors.IsNotFound(err) && !crdThere, "definition: " + errString(err)
	})
	if n := writemetric.Counted("cozystack-appdef", "CustomResourceDefinition", "deleted"); n < 1 {
		t.Errorf("CustomResourceDefinition deleted = %v, want at least 1", n)
	}
}

// TestShadowingAPIServiceIsReported: an APIService that proxies
// apps.cozystack.io/v1alpha1 to a Service (as upstream Cozystack's
// aggregated API does) makes every definition Ready=False GroupShadowed;
// once it is deleted, kube-apiserver's own local APIService comes back and
// the definition is served again, without any change to the definition.
func TestShadowingAPIServiceIsReported(t *testing.T) {
	ctx := context.Background()
	def := newHelmDef("it-shadowed", "ItShadowed", "itshadoweds", `{"type":"object"}`)
	create(t, def)
	cleanup(t, def.Name)
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)

	key := types.NamespacedName{Name: instanceAPIServiceName}
	shadow := func() error {
		svc := newAPIService()
		if err := k8s.Get(ctx, key, svc); err != nil {
			if !apierrors.IsNotFound(err) {
				return err
			}
			svc = newAPIService()
			svc.SetName(instanceAPIServiceName)
		}
		// Not kube-apiserver's any more: its autoregistration leaves
		// APIServices without the automanaged label alone.
		svc.SetLabels(nil)
		svc.Object["spec"] = map[string]any{
			"group": "apps.cozystack.io", "version": "v1alpha1",
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": "cozy-system", "name": "cozystack-api"},
		}
		if svc.GetResourceVersion() == "" {
			return k8s.Create(ctx, svc)
		}
		return k8s.Update(ctx, svc)
	}
	unshadow := func() {
		svc := newAPIService()
		if err := k8s.Get(ctx, key, svc); err == nil && routeOf(svc).Service != "" {
			_ = k8s.Delete(ctx, svc)
		}
	}
	t.Cleanup(unshadow)
	eventually(t, "the APIService proxies the group", func() (bool, string) {
		err := shadow()
		return err == nil, fmt.Sprint(err)
	})

	d := waitReason(t, def.Name, cozyv1alpha1.ReasonGroupShadowed, metav1.ConditionFalse)
	if msg := readyMessage(d); !strings.Contains(msg, "Service cozy-system/cozystack-api") || !strings.Contains(msg, "kubectl delete apiservice v1alpha1.apps.cozystack.io") {
		t.Errorf("message %q", msg)
	}
	if c := meta.FindStatusCondition(d.Status.Conditions, cozyv1alpha1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Stalled %+v", c)
	}

	// Deleting it is enough: the watch brings the definition back to Served.
	unshadow()
	waitReason(t, def.Name, cozyv1alpha1.ReasonServed, metav1.ConditionTrue)
	eventually(t, "kube-apiserver's local APIService", func() (bool, string) {
		svc := newAPIService()
		err := k8s.Get(ctx, key, svc)
		return err == nil && routeOf(svc).Service == "", fmt.Sprint(err)
	})
}
