package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// timeout bounds each wait on the shared control plane. It is generous: the
// unit tests of every module run at once, and a CRD's deletion (its
// instances cleaned up first) can take the API server many seconds then.
const timeout = 90 * time.Second

func newHelmDef(name, kind, plural, schema string) *cozyv1alpha1.ApplicationDefinition {
	return &cozyv1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cozyv1alpha1.ApplicationDefinitionSpec{
			Application: cozyv1alpha1.ApplicationDefinitionApplication{Kind: kind, Plural: plural, Singular: strings.ToLower(kind), OpenAPISchema: schema},
			Backend: &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendHelm, Helm: &cozyv1alpha1.HelmBackend{
				HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
					ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "chart", Namespace: "cozy-system"},
					Prefix:   strings.ToLower(kind) + "-",
				},
			}},
		},
	}
}

func newTerraformDef(name, kind, plural, schema string) *cozyv1alpha1.ApplicationDefinition {
	d := newHelmDef(name, kind, plural, schema)
	d.Spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendTerraform, Terraform: &cozyv1alpha1.TerraformBackend{
		SourceRef: cozyv1alpha1.TerraformSourceReference{Kind: "OCIRepository", Name: "module", Namespace: "cozy-system"},
	}}
	return d
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// cleanup deletes a definition at the end of a test and waits until it is
// gone, so the next test starts from a clean slate.
func cleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		ctx := context.Background()
		d := &cozyv1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_ = k8s.Delete(ctx, d)
		eventually(t, "definition "+name+" deleted", func() (bool, string) {
			err := k8s.Get(ctx, types.NamespacedName{Name: name}, d)
			return apierrors.IsNotFound(err), "still there"
		})
	})
}

// eventually waits up to timeout for cond; on a timeout the test fails
// naming what it waited for and cond's last message.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testenv.Eventually(t, timeout, func() (bool, string, error) {
		ok, msg := cond()
		return ok, what + ": " + msg, nil
	})
}

func get(t *testing.T, name string) *cozyv1alpha1.ApplicationDefinition {
	t.Helper()
	d := &cozyv1alpha1.ApplicationDefinition{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Name: name}, d); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return d
}

// update changes the definition called name as change says and writes it,
// from a fresh read each time the API server answers Conflict: the
// controller writes the definition's status meanwhile. It returns the
// write's error otherwise (a refusal the caller expects included).
func update(t *testing.T, name string, change func(*cozyv1alpha1.ApplicationDefinition)) error {
	t.Helper()
	var err error
	for range 20 {
		d := get(t, name)
		change(d)
		if err = k8s.Update(context.Background(), d); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// waitReason waits until the definition's Ready condition has the reason
// (and the given status) for its latest generation.
func waitReason(t *testing.T, name, reason string, st metav1.ConditionStatus) *cozyv1alpha1.ApplicationDefinition {
	t.Helper()
	var d *cozyv1alpha1.ApplicationDefinition
	eventually(t, name+" "+reason, func() (bool, string) {
		d = get(t, name)
		c := meta.FindStatusCondition(d.Status.Conditions, cozyv1alpha1.ConditionReady)
		if c == nil {
			return false, "no Ready condition"
		}
		return c.Reason == reason && c.Status == st && d.Status.ObservedGeneration == d.Generation,
			string(c.Status) + " " + c.Reason + ": " + c.Message
	})
	return d
}

func readyMessage(d *cozyv1alpha1.ApplicationDefinition) string {
	if c := meta.FindStatusCondition(d.Status.Conditions, cozyv1alpha1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

func getCRD(t *testing.T, name string) (*apiextensionsv1.CustomResourceDefinition, bool) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := k8s.Get(context.Background(), types.NamespacedName{Name: name}, crd)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return crd, true
}

func newInstance(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("apps.cozystack.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

func controllerutilContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
