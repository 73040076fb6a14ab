package main

// The backends the shapes measure (--backend): what differs between the Helm
// and the Terraform backend for the bench is the kind of the backing object,
// the namespace it lands in, the definition's backend, the raw side's object
// and the definition change a fan-out makes. Everything else (the instances,
// the watches, the runs) is the same code.

import (
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
	"github.com/cozyplane/cozyplane/bench/internal/measure"
)

// rawNS holds the raw side's backing objects, which no controller caches or
// reconciles (their label keys differ from the application labels).
const rawNS = "bench-raw"

// tfNamespacePrefix starts the platform namespace that holds the Terraform
// objects of a tenant namespace (controllers/terraform's
// tfbackend.NamespacePrefix).
const tfNamespacePrefix = "cozy-tf-"

// backendKind is one backend as the shapes see it.
type backendKind struct {
	// name is the controller's name in hack/controllers.sh and in --metrics.
	name string
	// object is the backing object's kind, resource its plural (the API
	// server's counters name it so), items how the progress lines call them.
	object          schema.GroupVersionKind
	resource, items string
	// namespace is where the backing objects of the instances of tenant
	// namespace ns land.
	namespace func(ns string) string
	// define sets the definition's backend.
	define func(spec *cozyv1alpha1.ApplicationDefinitionSpec)
	// raw is the raw side's i-th object, of the controller's shape and size.
	raw func(i int) client.Object
	// change is fan-out run k's merge patch of the definition and the raw
	// merge patch of the same fields of one backing object: both put revLabel
	// rev on the backing object and change one field of its spec.
	change func(k int) (definition, raw map[string]any, rev string)
}

var backends = map[string]backendKind{
	"helm": {
		name: "helm", object: releaseGVK, resource: "helmreleases", items: "HelmReleases",
		namespace: func(ns string) string { return ns },
		define: func(spec *cozyv1alpha1.ApplicationDefinitionSpec) {
			spec.Release = &cozyv1alpha1.ApplicationDefinitionRelease{HelmReleaseTemplate: cozyv1alpha1.HelmReleaseTemplate{
				Prefix: "b-", ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "bench", Namespace: "cozy-system"},
				Labels: map[string]string{revLabel: firstRev}}}
		},
		raw: func(i int) client.Object { return rawRelease(i) },
		change: func(k int) (map[string]any, map[string]any, string) {
			chart, rev := fmt.Sprintf("bench-v%d", k+1), fmt.Sprintf("v%d", k+1)
			return map[string]any{"spec": map[string]any{"release": map[string]any{
					"labels": map[string]any{revLabel: rev}, "chartRef": map[string]any{"name": chart}}}},
				map[string]any{"metadata": map[string]any{"labels": map[string]any{revLabel: rev}},
					"spec": map[string]any{"chartRef": map[string]any{"name": chart}}},
				rev
		},
	},
	"terraform": {
		name: "terraform", object: tfv1alpha2.GroupVersion.WithKind(tfv1alpha2.TerraformKind), resource: "terraforms", items: "Terraform objects",
		namespace: func(ns string) string { return appsv1alpha1.PlatformNamespaceName(tfNamespacePrefix, ns) },
		define: func(spec *cozyv1alpha1.ApplicationDefinitionSpec) {
			spec.Backend = &cozyv1alpha1.ApplicationBackend{Type: cozyv1alpha1.BackendTerraform, Terraform: &cozyv1alpha1.TerraformBackend{
				SourceRef: cozyv1alpha1.TerraformSourceReference{Kind: "OCIRepository", Name: "bench", Namespace: "cozy-system"},
				Path:      "./modules/bench", Prefix: "b-", ApprovePlan: cozyv1alpha1.ApprovePlanAuto,
				Labels: map[string]string{revLabel: firstRev}}}
		},
		raw: func(i int) client.Object { return rawTerraform(i) },
		change: func(k int) (map[string]any, map[string]any, string) {
			path, rev := fmt.Sprintf("./modules/bench-v%d", k+1), fmt.Sprintf("v%d", k+1)
			return map[string]any{"spec": map[string]any{"backend": map[string]any{"terraform": map[string]any{
					"labels": map[string]any{revLabel: rev}, "path": path}}}},
				map[string]any{"metadata": map[string]any{"labels": map[string]any{revLabel: rev}},
					"spec": map[string]any{"path": path}},
				rev
		},
	},
}

// be is the backend of --backend.
var be backendKind

// rawTerraform is a Terraform object of the terraform controller's shape and
// size for instance i (tfbackend.Build with the bench's definition: the
// definition's source, path, interval and approval, one variable per key of
// the instance's spec with the schema's default, the platform namespace's
// labels naming the instance and the applied-hash and created-shape
// annotations; no empty
// runnerPodTemplate or status, which the typed object would send). Its label keys differ
// from the application labels by their prefix only, as rawRelease's.
func rawTerraform(i int) *unstructured.Unstructured {
	name := fmt.Sprintf("app-%05d", i)
	tf := &tfv1alpha2.Terraform{
		ObjectMeta: metav1.ObjectMeta{Name: "b-" + name, Namespace: rawNS,
			Labels: map[string]string{"bench.cozystack.io/application.kind": "Raw", "bench.cozystack.io/application.group": "apps.cozystack.io",
				"bench.cozystack.io/application.name": name, "bench.cozystack.io/application.namespace": ns,
				"bench.cozystack.io/application.uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), revLabel: firstRev},
			Annotations: map[string]string{"cozystack.io/applied-hash.cozystack-terraform": strings.Repeat("0", 24),
				"cozystack.io/created-shape.cozystack-terraform": strings.Repeat("0", 24)}},
		Spec: tfv1alpha2.TerraformSpec{
			SourceRef: tfv1alpha2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "bench", Namespace: "cozy-system"},
			Path:      "./modules/bench", Interval: metav1.Duration{Duration: 10 * time.Minute},
			Vars:              []tfv1alpha2.Variable{{Name: "replicas", Value: &apiextensionsv1.JSON{Raw: []byte("1")}}},
			ApprovePlan:       tfv1alpha2.ApprovePlanAutoValue,
			StoreReadablePlan: tfv1alpha2.StoreReadablePlanHuman,
		},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tf)
	measure.Check(err)
	unstructured.RemoveNestedField(m, "spec", "runnerPodTemplate")
	delete(m, "status")
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(tfv1alpha2.GroupVersion.WithKind(tfv1alpha2.TerraformKind))
	return u
}
