package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func crd(name string, versions ...string) *unstructured.Unstructured {
	vs := make([]any, 0, len(versions))
	for _, v := range versions {
		served := true
		if strings.HasPrefix(v, "-") {
			v, served = v[1:], false
		}
		vs = append(vs, map[string]any{"name": v, "served": served})
	}
	return obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name, map[string]any{"spec": map[string]any{"versions": vs}})
}

// allCRDs are the CRDs of a cluster ready for the platform.
func allCRDs() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		crd("helmreleases.helm.toolkit.fluxcd.io", "v2beta2", "v2"), crd("helmcharts.source.toolkit.fluxcd.io", "v1"),
		crd("ocirepositories.source.toolkit.fluxcd.io", "v1beta2", "v1"), crd("terraforms.infra.contrib.fluxcd.io", "v1alpha2"),
		crd("issuers.cert-manager.io", "v1"), crd("certificates.cert-manager.io", "v1"),
		crd("gateways.gateway.networking.k8s.io", "v1"), crd("httproutes.gateway.networking.k8s.io", "v1"),
		crd("tlsroutes.gateway.networking.k8s.io", "v1alpha2", "v1"),
	}
}

func TestEvaluateCRDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		crds []*unstructured.Unstructured
		want map[string]string // check -> "" (pass) or a part of the failing detail
	}{
		{"all there", allCRDs(), map[string]string{CheckCRDsFlux: "", CheckCRDsTofu: "", CheckCRDsCertManager: "", CheckCRDsGatewayAPI: ""}},
		{"empty cluster", nil, map[string]string{
			CheckCRDsFlux:        "helmreleases.helm.toolkit.fluxcd.io is not installed; helmcharts.source.toolkit.fluxcd.io is not installed",
			CheckCRDsTofu:        "terraforms.infra.contrib.fluxcd.io is not installed",
			CheckCRDsCertManager: "issuers.cert-manager.io is not installed",
			CheckCRDsGatewayAPI:  "tlsroutes.gateway.networking.k8s.io is not installed",
		}},
		{"TLSRoute of the experimental channel only", append(allCRDs()[:8], crd("tlsroutes.gateway.networking.k8s.io", "v1alpha2", "v1alpha3")),
			map[string]string{CheckCRDsFlux: "", CheckCRDsTofu: "", CheckCRDsCertManager: "",
				CheckCRDsGatewayAPI: "tlsroutes.gateway.networking.k8s.io serves v1alpha2, v1alpha3, not v1"}},
		{"a version present but not served", append(allCRDs()[1:], crd("helmreleases.helm.toolkit.fluxcd.io", "v2beta2", "-v2")),
			map[string]string{CheckCRDsFlux: "helmreleases.helm.toolkit.fluxcd.io serves v2beta2, not v2", CheckCRDsTofu: "", CheckCRDsCertManager: "", CheckCRDsGatewayAPI: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EvaluateCRDs(items(tc.crds...))
			if len(got) != len(tc.want) {
				t.Fatalf("%d results", len(got))
			}
			for _, r := range got {
				want := tc.want[r.Name]
				switch {
				case want == "" && r.Verdict != Pass:
					t.Errorf("%s: %s %q", r.Name, r.Verdict, r.Detail)
				case want != "" && (r.Verdict != Fail || !strings.Contains(r.Detail, want) || r.Fix == ""):
					t.Errorf("%s: %s %q (fix %q), want fail with %q", r.Name, r.Verdict, r.Detail, r.Fix, want)
				}
			}
		})
	}
}

func withSA(w *unstructured.Unstructured, sa string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(w.Object, sa, "spec", "template", "spec", "serviceAccountName")
	return w
}

func TestEvaluateIdentities(t *testing.T) {
	cozystack := []*unstructured.Unstructured{
		withSA(workload("Deployment", "cozy-fluxcd", "flux", ctr("helm-controller", "ghcr.io/fluxcd/helm-controller:v1.4.0"), ctr("source-controller", "ghcr.io/fluxcd/source-controller:v1.7.0")), "flux"),
		withSA(workload("Deployment", "cozy-fluxcd", "tofu-controller", ctr("manager", "ghcr.io/flux-iac/tofu-controller:v0.16.0")), "tofu-controller"),
		withSA(workload("Deployment", "cozy-cert-manager", "cert-manager", ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.19.0")), "cert-manager"),
	}
	stock := []*unstructured.Unstructured{
		withSA(workload("Deployment", "flux-system", "helm-controller", ctr("manager", "ghcr.io/fluxcd/helm-controller:v1.4.0")), "helm-controller"),
		withSA(workload("Deployment", "flux-system", "tofu-controller", ctr("manager", "ghcr.io/flux-iac/tofu-controller:v0.16.0")), "tofu-controller"),
		withSA(workload("Deployment", "cert-manager", "cert-manager", ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.19.0")), "cert-manager"),
	}
	check := func(t *testing.T, got []Result, want map[string]string) {
		t.Helper()
		for _, r := range got {
			w := want[r.Name]
			switch {
			case w == "" && r.Verdict != Pass:
				t.Errorf("%s: %s %q", r.Name, r.Verdict, r.Detail)
			case w != "" && (r.Verdict != Fail || !strings.Contains(r.Detail+" | "+r.Fix, w)):
				t.Errorf("%s: %s %q (fix %q), want fail with %q", r.Name, r.Verdict, r.Detail, r.Fix, w)
			}
		}
	}
	check(t, EvaluateIdentities(items(cozystack...), CozystackIdentities), nil)
	check(t, EvaluateIdentities(items(stock...), StockIdentities), nil)
	check(t, EvaluateIdentities(items(stock...), CozystackIdentities), map[string]string{
		CheckIdentityHelm: "Deployment flux-system/helm-controller runs as system:serviceaccount:flux-system:helm-controller, which the policies do not trust " +
			"(they trust system:serviceaccount:cozy-fluxcd:helm-controller, system:serviceaccount:cozy-fluxcd:flux) | install the policies chart (and give the other charts) the values identities.flux.namespace=flux-system",
		CheckIdentityTofu:    "identities.tofuController.namespace=flux-system",
		CheckIdentityCertMgr: "identities.certManager.namespace=cert-manager",
	})
	check(t, EvaluateIdentities(nil, CozystackIdentities), map[string]string{
		CheckIdentityHelm:    "no Flux helm-controller runs in the cluster",
		CheckIdentityTofu:    "or disable the terraform backend",
		CheckIdentityCertMgr: "no cert-manager runs",
	})
	// A controller run as the namespace's default ServiceAccount is named so.
	def := workload("Deployment", "cozy-cert-manager", "cert-manager", ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.19.0"))
	check(t, EvaluateIdentities(items(cozystack[0], cozystack[1], def), CozystackIdentities), map[string]string{
		CheckIdentityCertMgr: "runs as system:serviceaccount:cozy-cert-manager:default",
	})
}

func TestEvaluateValuesSecrets(t *testing.T) {
	has := map[string]bool{"tenant-root": true}
	lookup := func(ns string) (bool, error) {
		if ns == "tenant-locked" {
			return false, errors.New("forbidden")
		}
		return has[ns], nil
	}
	if r := EvaluateValuesSecrets(nil, lookup); r.Verdict != Pass || !strings.Contains(r.Detail, "no tenant namespace") {
		t.Errorf("none: %+v", r)
	}
	if r := EvaluateValuesSecrets([]string{"tenant-root"}, lookup); r.Verdict != Pass {
		t.Errorf("present: %+v", r)
	}
	if r := EvaluateValuesSecrets([]string{"tenant-root", "tenant-a", "tenant-b"}, lookup); r.Verdict != Fail ||
		!strings.Contains(r.Detail, "no Secret cozystack-values in tenant-a, tenant-b") || !strings.Contains(r.Fix, "kubectl -n NAMESPACE create secret generic cozystack-values") {
		t.Errorf("missing: %+v", r)
	}
	if r := EvaluateValuesSecrets([]string{"tenant-root", "tenant-locked"}, lookup); r.Verdict != Unknown {
		t.Errorf("unreadable: %+v", r)
	}
}

func TestRunPreOnAnEmptyCluster(t *testing.T) {
	lists := map[schema.GroupVersionResource]string{
		deploymentsGVR: "DeploymentList", daemonSetsGVR: "DaemonSetList", namespacesGVR: "NamespaceList",
		crdsGVR: "CustomResourceDefinitionList", helmReleasesGVR: "HelmReleaseList", secretsGVR: "SecretList",
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, ns("tenant-root"))
	r := RunPre(context.Background(), c, Options{})
	if r.Verdict != Fail || len(r.Checks) != 8 {
		t.Fatalf("report %+v", r)
	}
	for _, c := range r.Checks {
		if c.Verdict != Fail || c.Fix == "" {
			t.Errorf("%s: %s %q", c.Name, c.Verdict, c.Detail)
		}
	}
	var objs []runtime.Object
	for _, c := range allCRDs() {
		objs = append(objs, c)
	}
	objs = append(objs, ns("tenant-root"), obj("v1", "Secret", "tenant-root", "cozystack-values", nil),
		withSA(workload("Deployment", "cozy-fluxcd", "flux", ctr("helm-controller", "ghcr.io/fluxcd/helm-controller:v1.4.0")), "flux"),
		withSA(workload("Deployment", "cozy-fluxcd", "tofu-controller", ctr("manager", "ghcr.io/flux-iac/tofu-controller:v0.16.0")), "tofu-controller"),
		withSA(workload("Deployment", "cozy-cert-manager", "cert-manager", ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.19.0")), "cert-manager"))
	c = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)
	if r := RunPre(context.Background(), c, Options{}); r.Verdict != Pass {
		t.Errorf("ready cluster: %+v", r)
	}
}
