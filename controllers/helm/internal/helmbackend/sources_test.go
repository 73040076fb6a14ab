package helmbackend

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/instance/instancetest"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// TestBuildFailsClosed: a definition stored before the CRD's source rules
// (the API server refuses such a definition now, so these are built in
// memory) and an instance stored with reserved keys get no HelmRelease; the
// instance says why and what to do. Existing HelmReleases (live) are not
// rewritten either.
func TestBuildFailsClosed(t *testing.T) {
	def := func(helm string) string {
		return `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: app}
spec:
  application: {kind: App, plural: apps, singular: app, openAPISchema: '{}'}
  backend:
    type: Helm
    helm:
` + helm
	}
	const okChart = "      chartRef: {kind: OCIRepository, name: app, namespace: cozy-system}\n"
	const inst = "apiVersion: apps.cozystack.io/v1alpha1\nkind: App\nmetadata: {name: a, namespace: tenant-a}\nspec: "
	live := instancetest.Object(t, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: a, namespace: tenant-a}\nspec: {values: {replicas: 1}}")
	tests := []struct {
		name, def, spec string
		reason          string // empty: built
		want            []string
	}{{
		name: "platform values objects and a chart in cozy-system",
		def:  def(okChart + "      valuesFrom: [{kind: ConfigMap, name: cozystack-values-defaults}, {kind: Secret, name: cozystack-values-db}]\n"),
		spec: "{replicas: 2, config: {_private: true}}",
	}, {
		name: "upstream's legacy form",
		def: `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: app}
spec:
  application: {kind: App, plural: apps, singular: app, openAPISchema: '{}'}
  release: {prefix: app-, chartRef: {kind: ExternalArtifact, name: app, namespace: cozy-system}}`,
		spec: "{}",
	}, {
		name:   "a ConfigMap the tenant creates",
		def:    def(okChart + "      valuesFrom: [{kind: ConfigMap, name: platform-defaults}]\n"),
		spec:   "{}",
		reason: appsv1alpha1.ReasonSourceNotPlatformOwned,
		want:   []string{"definition app: spec.backend.helm.valuesFrom[0] (ConfigMap platform-defaults) is not a platform values object", "cozystack-values-<suffix>"},
	}, {
		name:   "a chart in the tenant's namespace",
		def:    def("      chartRef: {kind: OCIRepository, name: app}\n"),
		spec:   "{}",
		reason: appsv1alpha1.ReasonSourceNotPlatformOwned,
		want:   []string{"spec.backend.helm.chartRef (OCIRepository app) names no namespace"},
	}, {
		name:   "a chart in a tenant namespace",
		def:    def("      chartRef: {kind: OCIRepository, name: app, namespace: tenant-root}\n"),
		spec:   "{}",
		reason: appsv1alpha1.ReasonSourceNotPlatformOwned,
		want:   []string{"(OCIRepository tenant-root/app) is in a tenant namespace"},
	}, {
		name:   "reserved keys stored in the instance",
		def:    def(okChart),
		spec:   "{replicas: 2, _namespace: {host: victim.example.net}, _cluster: {}}",
		reason: appsv1alpha1.ReasonReservedKey,
		want:   []string{`"_cluster", "_namespace"`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, lv := range []*unstructured.Unstructured{nil, live} {
				what := []string{"new", "existing"}[i]
				got, err := Backend{}.Build(instancetest.Definition(t, tc.def), instancetest.Object(t, inst+tc.spec), lv)
				if tc.reason == "" {
					if err != nil || got == nil {
						t.Fatalf("%s HelmRelease: Build() = %v, %v; want it built", what, got, err)
					}
					continue
				}
				if got != nil {
					t.Errorf("%s HelmRelease: Build() wrote %v, want nothing", what, got.Object)
				}
				s, ok := reconcileerr.AsStalled(err)
				if !ok || s.Reason != tc.reason {
					t.Fatalf("%s HelmRelease: Build() error = %v, want Stalled %s", what, err, tc.reason)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q lacks %q", err.Error(), w)
					}
				}
			}
		})
	}
}
