package check

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ours is a Deployment of a controller chart: its labels, replicas, ready
// replicas and Available condition ("" for none).
func ours(ns, name, component string, replicas, ready int64, available string) *unstructured.Unstructured {
	d := workload("Deployment", ns, name, ctr("manager", "ghcr.io/cozyplane/"+component+":0.1.0"))
	d.SetLabels(map[string]string{PartOfLabel: "cozyplane", ComponentLabel: component, "app.kubernetes.io/name": name})
	_ = unstructured.SetNestedField(d.Object, replicas, "spec", "replicas")
	status := map[string]any{"readyReplicas": ready}
	if available != "" {
		status["conditions"] = []any{map[string]any{"type": "Available", "status": available, "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."}}
	}
	d.Object["status"] = status
	return d
}

func TestDeployedComponents(t *testing.T) {
	got := DeployedComponents(items(
		ours("cozy-system", "c-terraform", "terraform", 1, 1, "True"),
		ours("cozy-system", "c-terraform-shard-a", "terraform", 1, 1, "True"),
		ours("cozy-system", "c-helm", "helm", 1, 1, "True"),
		workload("Deployment", "cozy-fluxcd", "helm-controller", ctr("manager", "ghcr.io/fluxcd/helm-controller:v1.4.0")),
	))
	if !slices.Equal(got, []string{"helm", "terraform"}) {
		t.Errorf("components %v", got)
	}
}

func TestEvaluateInstalledCRDs(t *testing.T) {
	ourCRDs := []*unstructured.Unstructured{crd("applicationdefinitions.cozystack.io", "v1alpha1"), crd("tenantgateways.gateway.cozystack.io", "v1alpha1")}
	all := append(allCRDs(), ourCRDs...)
	for _, tc := range []struct {
		name       string
		crds       []*unstructured.Unstructured
		components []string
		want       map[string]string // check -> "" (pass), "-" (not needed) or a part of the failing detail
	}{
		{"every component, every CRD", all, Components, map[string]string{
			CheckCRDsCozyplane: "", CheckCRDsFlux: "", CheckCRDsTofu: "", CheckCRDsCertManager: "", CheckCRDsGatewayAPI: ""}},
		{"no component known: every CRD is required", ourCRDs, nil, map[string]string{
			CheckCRDsCozyplane: "", CheckCRDsFlux: "helmreleases.helm.toolkit.fluxcd.io is not installed",
			CheckCRDsTofu: "terraforms.infra.contrib.fluxcd.io is not installed", CheckCRDsCertManager: "issuers.cert-manager.io is not installed",
			CheckCRDsGatewayAPI: "gateways.gateway.networking.k8s.io is not installed"}},
		{"the terraform backend alone needs its CRD and ApplicationDefinition", []*unstructured.Unstructured{crd("applicationdefinitions.cozystack.io", "v1alpha1")},
			[]string{"terraform"}, map[string]string{
				CheckCRDsCozyplane: "", CheckCRDsFlux: "-", CheckCRDsTofu: "terraforms.infra.contrib.fluxcd.io is not installed", CheckCRDsCertManager: "-", CheckCRDsGatewayAPI: "-"}},
		{"the gateway stack without ApplicationDefinition", append(allCRDs(), crd("tenantgateways.gateway.cozystack.io", "v1alpha1")),
			[]string{"gateway-certs", "gateway-listeners", "ns-labels", "route-conflicts"}, map[string]string{
				CheckCRDsCozyplane: "", CheckCRDsFlux: "-", CheckCRDsTofu: "-", CheckCRDsCertManager: "", CheckCRDsGatewayAPI: ""}},
		{"our CRD removed", allCRDs(), []string{"helm"}, map[string]string{
			CheckCRDsCozyplane: "applicationdefinitions.cozystack.io is not installed", CheckCRDsFlux: "", CheckCRDsTofu: "-", CheckCRDsCertManager: "-", CheckCRDsGatewayAPI: "-"}},
		{"lineage needs HelmRelease v2", append(ourCRDs, crd("helmreleases.helm.toolkit.fluxcd.io", "v2beta1"), crd("helmcharts.source.toolkit.fluxcd.io", "v1")), []string{"lineage"}, map[string]string{
			CheckCRDsCozyplane: "-", CheckCRDsFlux: "helmreleases.helm.toolkit.fluxcd.io serves v2beta1, not v2", CheckCRDsTofu: "-", CheckCRDsCertManager: "-", CheckCRDsGatewayAPI: "-"}},
		{"TLSRoute v1 missing", append(append(allCRDs()[:8], crd("tlsroutes.gateway.networking.k8s.io", "v1alpha2")), ourCRDs...), []string{"route-conflicts"}, map[string]string{
			CheckCRDsCozyplane: "", CheckCRDsFlux: "-", CheckCRDsTofu: "-", CheckCRDsCertManager: "-", CheckCRDsGatewayAPI: "tlsroutes.gateway.networking.k8s.io serves v1alpha2, not v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EvaluateInstalledCRDs(items(tc.crds...), tc.components)
			if len(got) != len(tc.want) || got[0].Name != CheckCRDsCozyplane {
				t.Fatalf("results %+v", got)
			}
			for _, r := range got {
				want, ok := tc.want[r.Name]
				switch {
				case !ok:
					t.Errorf("unexpected check %s", r.Name)
				case want == "":
					if r.Verdict != Pass || !strings.HasPrefix(r.Detail, "served: ") {
						t.Errorf("%s: %s %q, want pass", r.Name, r.Verdict, r.Detail)
					}
				case want == "-":
					if r.Verdict != Pass || !strings.HasPrefix(r.Detail, "not needed") {
						t.Errorf("%s: %s %q, want not needed", r.Name, r.Verdict, r.Detail)
					}
				default:
					if r.Verdict != Fail || !strings.Contains(r.Detail, want) || r.Fix == "" {
						t.Errorf("%s: %s %q (fix %q), want fail with %q and a fix", r.Name, r.Verdict, r.Detail, r.Fix, want)
					}
				}
			}
		})
	}
}

func TestEvaluateControllers(t *testing.T) {
	flux := workload("Deployment", "cozy-fluxcd", "helm-controller", ctr("manager", "ghcr.io/fluxcd/helm-controller:v1.4.0"))
	for _, tc := range []struct {
		name    string
		deploys []*unstructured.Unstructured
		verdict Verdict
		detail  []string
		fix     string
	}{
		{"none of ours", []*unstructured.Unstructured{flux}, Fail,
			[]string{"no Deployment labelled app.kubernetes.io/part-of=cozyplane"}, "install the umbrella chart"},
		{"all ready", []*unstructured.Unstructured{flux, ours("cozy-system", "c-helm", "helm", 1, 1, "True"), ours("cozy-system", "c-appdef", "appdef", 2, 2, "True")}, Pass,
			[]string{"2 Deployments ready: cozy-system/c-helm (1/1 ready), cozy-system/c-appdef (2/2 ready)"}, ""},
		{"one not available", []*unstructured.Unstructured{ours("cozy-system", "c-helm", "helm", 1, 1, "True"), ours("cozy-system", "c-appdef", "appdef", 1, 0, "False")}, Fail,
			[]string{"Deployment cozy-system/c-appdef: not Available (MinimumReplicasUnavailable: Deployment does not have minimum availability.), 0/1 replicas ready"},
			"kubectl -n cozy-system describe deployment c-appdef; kubectl -n cozy-system logs deployment/c-appdef"},
		{"not yet rolled out", []*unstructured.Unstructured{ours("cozy-system", "c-helm", "helm", 1, 0, "")}, Fail,
			[]string{"Deployment cozy-system/c-helm: no Available condition yet, 0/1 replicas ready"}, "describe deployment c-helm"},
		{"available but no ready replica", []*unstructured.Unstructured{ours("cozy-system", "c-helm", "helm", 1, 0, "True")}, Fail,
			[]string{"c-helm: no ready replica"}, "logs deployment/c-helm"},
		{"scaled to zero", []*unstructured.Unstructured{ours("cozy-system", "c-helm", "helm", 0, 0, "True")}, Fail,
			[]string{"c-helm: scaled to 0 replicas"}, "kubectl -n cozy-system scale deployment c-helm --replicas=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := EvaluateControllers(items(tc.deploys...))
			if r.Name != CheckControllers || r.Verdict != tc.verdict {
				t.Fatalf("got %s %q, want %s", r.Verdict, r.Detail, tc.verdict)
			}
			for _, d := range tc.detail {
				if !strings.Contains(r.Detail, d) {
					t.Errorf("detail %q does not say %q", r.Detail, d)
				}
			}
			if (tc.fix == "") != (r.Fix == "") || !strings.Contains(r.Fix, tc.fix) {
				t.Errorf("fix %q, want one containing %q", r.Fix, tc.fix)
			}
		})
	}
}
