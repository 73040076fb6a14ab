package check

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func workload(kind, ns, name string, containers ...map[string]any) *unstructured.Unstructured {
	cs := make([]any, len(containers))
	for i, c := range containers {
		cs[i] = c
	}
	return obj("apps/v1", kind, ns, name, map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}})
}

func ctr(name, image string, args ...string) map[string]any {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	return map[string]any{"name": name, "image": image, "args": a}
}

func items(us ...*unstructured.Unstructured) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, len(us))
	for i, u := range us {
		out[i] = *u
	}
	return out
}

func TestEvaluateHelmController(t *testing.T) {
	const image = "ghcr.io/fluxcd/helm-controller:v1.4.0"
	dep := func(ns, name string, c map[string]any) []unstructured.Unstructured {
		return items(workload("Deployment", ns, name, c))
	}
	for _, tc := range []struct {
		name    string
		w       []unstructured.Unstructured
		verdict Verdict
		detail  string
	}{
		{"none", items(workload("Deployment", "x", "y", ctr("app", "nginx"))), Unknown, "no helm-controller"},
		{"Flux's defaults, found by image", dep("flux-system", "helm-controller", ctr("manager", image, "--watch-all-namespaces", "--log-level=info")),
			Pass, "flux-system/helm-controller container manager installs the platform's HelmReleases"},
		{"flux-aio, found by container name", dep("cozy-fluxcd", "flux", ctr("helm-controller", "registry.example/aio:1", "--concurrent=5")), Pass, "cozy-fluxcd/flux"},
		{"refs explicitly allowed", dep("flux-system", "helm-controller", ctr("manager", image, "--no-cross-namespace-refs=false")), Pass, "flux-system/helm-controller"},
		{"lockdown", dep("flux-system", "helm-controller", ctr("manager", image, "--no-cross-namespace-refs=true", "--default-service-account=flux-tenant")),
			Fail, "runs with --no-cross-namespace-refs=true and --default-service-account=flux-tenant: the platform's backing HelmReleases"},
		{"bare boolean and separate words", dep("cozy-fluxcd", "flux", ctr("helm-controller", "registry.example/aio:1", "--no-cross-namespace-refs", "--default-service-account", "flux")),
			Fail, "runs with --no-cross-namespace-refs=true and --default-service-account=flux"},
		{"cross-namespace refs refused only", dep("flux-system", "helm-controller", ctr("manager", image, "--no-cross-namespace-refs=true")), Fail, "runs with --no-cross-namespace-refs=true:"},
		{"default service account only", dep("flux-system", "helm-controller", ctr("manager", image, "--default-service-account=x")), Fail, "runs with --default-service-account=x:"},
		{"empty default service account", dep("flux-system", "helm-controller", ctr("manager", image, "--default-service-account=")), Pass, "installs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := EvaluateHelmController(tc.w)
			if r.Verdict != tc.verdict || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("got %s %q, want %s containing %q", r.Verdict, r.Detail, tc.verdict, tc.detail)
			}
			if (r.Verdict != Pass) != strings.Contains(r.Fix, "cozyplane-tenant-flux-identity-policy") {
				t.Errorf("fix %q for verdict %s", r.Fix, r.Verdict)
			}
		})
	}
}

func TestEvaluateIngressNginx(t *testing.T) {
	cms := map[string]map[string]any{
		"ingress/off":      {"allow-snippet-annotations": "false"},
		"ingress/on":       {"allow-snippet-annotations": "true"},
		"ingress/critical": {"allow-snippet-annotations": "false", "annotations-risk-level": "Critical"},
		"ingress/empty":    {},
	}
	get := func(ns, name string) (*unstructured.Unstructured, error) {
		d, ok := cms[ns+"/"+name]
		if !ok {
			return nil, nil
		}
		return obj("v1", "ConfigMap", ns, name, map[string]any{"data": d}), nil
	}
	ctl := func(image, cm string) []unstructured.Unstructured {
		return items(workload("DaemonSet", "ingress", "ingress-nginx-controller",
			ctr("controller", image, "/nginx-ingress-controller", "--configmap=$(POD_NAMESPACE)/"+cm)))
	}
	for _, tc := range []struct {
		name    string
		w       []unstructured.Unstructured
		verdict Verdict
		detail  string
	}{
		{"no controller", items(workload("Deployment", "x", "y", ctr("app", "nginx:1.27"))), Pass, "no ingress-nginx controller"},
		{"snippets off", ctl("registry.k8s.io/ingress-nginx/controller:v1.8.0", "off"), Pass, "snippet annotations are off"},
		{"snippets on", ctl("registry.k8s.io/ingress-nginx/controller:v1.12.1", "on"), Fail, `ConfigMap ingress/on sets allow-snippet-annotations "true"`},
		{"critical risk level", ctl("registry.k8s.io/ingress-nginx/controller:v1.12.1", "critical"), Fail, "annotations-risk-level"},
		{"default of a recent controller", ctl("registry.k8s.io/ingress-nginx/controller:v1.12.1@sha256:abc", "empty"), Pass, ""},
		{"absent ConfigMap, recent controller", ctl("registry.k8s.io/ingress-nginx/controller:v1.10.0", "gone"), Pass, ""},
		{"default of an old controller", ctl("registry.k8s.io/ingress-nginx/controller:v1.8.4", "empty"), Unknown, "before v1.9.0"},
		{"default of an unknown version", ctl("mirror.example/ingress-nginx/controller:latest", "empty"), Unknown, "may default it to true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := EvaluateIngressNginx(tc.w, get)
			if r.Verdict != tc.verdict || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("got %s %q, want %s containing %q", r.Verdict, r.Detail, tc.verdict, tc.detail)
			}
			if (r.Verdict != Pass) != strings.Contains(r.Fix, `allow-snippet-annotations: "false"`) {
				t.Errorf("fix %q for verdict %s", r.Fix, r.Verdict)
			}
		})
	}
}

func policy(name, failure string) *unstructured.Unstructured {
	spec := map[string]any{}
	if failure != "" {
		spec["failurePolicy"] = failure
	}
	return obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", name, map[string]any{"spec": spec})
}

func binding(name, policy string, actions ...any) *unstructured.Unstructured {
	return obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", name,
		map[string]any{"spec": map[string]any{"policyName": policy, "validationActions": actions}})
}

func TestEvaluatePolicies(t *testing.T) {
	req := []string{"a", "b", "c", "d"}
	r := EvaluatePolicies(items(policy("a", "Fail"), policy("b", ""), policy("c", "Ignore"), policy("e", "Fail")),
		items(binding("a", "a", "Deny"), binding("b", "b", "Warn", "Audit"), binding("c", "c", "Deny")), req)
	for _, want := range []string{"b has no binding with validationActions [Deny]", "c has failurePolicy Ignore", "d is not installed"} {
		if r.Verdict != Fail || !strings.Contains(r.Detail, want) {
			t.Errorf("got %s %q, want fail naming %q", r.Verdict, r.Detail, want)
		}
	}
	if strings.Contains(r.Detail, "a ") {
		t.Errorf("a is fine: %q", r.Detail)
	}
	if r := EvaluatePolicies(items(policy("a", "Fail")), items(binding("x", "a", "Deny")), []string{"a"}); r.Verdict != Pass {
		t.Errorf("all fine: %s %q", r.Verdict, r.Detail)
	}
}

func ns(name string) *unstructured.Unstructured { return obj("v1", "Namespace", "", name, nil) }

func quota(namespace, name string, hard map[string]any, used bool) *unstructured.Unstructured {
	f := map[string]any{"spec": map[string]any{"hard": hard}}
	if used {
		f["status"] = map[string]any{"hard": hard, "used": map[string]any{}}
	}
	return obj("v1", "ResourceQuota", namespace, name, f)
}

func TestEvaluateQuotas(t *testing.T) {
	counts := map[string]any{"count/postgreses.apps.cozystack.io": "100"}
	namespaces := items(ns("tenant-root"), ns("tenant-a"), ns("tenant-b"), ns("cozy-system"))
	r := EvaluateQuotas(namespaces, items(
		quota("tenant-root", "cozystack-instances", counts, true),
		quota("tenant-a", "cozystack-instances", counts, false),
		quota("tenant-b", "pods-only", map[string]any{"pods": "10"}, true),
	), "tenant-")
	if r.Verdict != Fail || !strings.Contains(r.Detail, "without an instance quota: tenant-b") || !strings.Contains(r.Detail, "not enforced") ||
		!strings.Contains(r.Detail, "tenant-a/cozystack-instances") || strings.Contains(r.Detail, "cozy-system") {
		t.Errorf("got %s %q", r.Verdict, r.Detail)
	}
	if r := EvaluateQuotas(items(ns("tenant-root"), ns("default")), items(quota("tenant-root", "own", counts, true)), "tenant-"); r.Verdict != Pass {
		t.Errorf("a quota of another name counts too: %s %q", r.Verdict, r.Detail)
	}
}

func TestRunWithAFakeCluster(t *testing.T) {
	scheme := runtime.NewScheme()
	lists := map[schema.GroupVersionResource]string{
		deploymentsGVR: "DeploymentList", daemonSetsGVR: "DaemonSetList", configMapsGVR: "ConfigMapList",
		namespacesGVR: "NamespaceList", quotasGVR: "ResourceQuotaList", policiesGVR: "ValidatingAdmissionPolicyList",
		bindingsGVR: "ValidatingAdmissionPolicyBindingList", crdsGVR: "CustomResourceDefinitionList",
	}
	objects := []runtime.Object{
		workload("Deployment", "cozy-fluxcd", "helm-controller", ctr("manager", "ghcr.io/fluxcd/helm-controller:v1.4.0", "--default-service-account=flux")),
		ours("cozy-system", "cozystack-terraform", "terraform", 1, 1, "True"),
		crd("applicationdefinitions.cozystack.io", "v1alpha1"), crd("terraforms.infra.contrib.fluxcd.io", "v1alpha2"),
		ns("tenant-root"),
		quota("tenant-root", "cozystack-instances", map[string]any{"count/tenants.apps.cozystack.io": "20"}, true),
		policy("p", "Fail"), binding("p", "p", "Deny"),
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, lists, objects...)
	r := Run(context.Background(), c, Options{Policies: []string{"p"}})
	if r.Verdict != Fail || len(r.Checks) != 10 {
		t.Fatalf("report %+v", r)
	}
	// Only the terraform backend is deployed: its CRDs are there, the
	// others are not needed.
	want := map[string]Verdict{CheckHelmController: Fail, CheckIngressNginx: Pass, CheckPolicies: Pass, CheckQuotas: Pass,
		CheckControllers: Pass, CheckCRDsCozyplane: Pass, CheckCRDsFlux: Pass, CheckCRDsTofu: Pass, CheckCRDsCertManager: Pass, CheckCRDsGatewayAPI: Pass}
	for _, c := range r.Checks {
		if want[c.Name] != c.Verdict {
			t.Errorf("%s: %s %q, want %s", c.Name, c.Verdict, c.Detail, want[c.Name])
		}
	}
	if s := Summarize([]Result{{Verdict: Pass}, {Verdict: Unknown}}); s.Verdict != Unknown {
		t.Errorf("pass+unknown summarized as %s", s.Verdict)
	}
}

// TestRunFindsAStockFlux: Flux installed from its own manifests (every
// controller in flux-system, none in cozy-fluxcd) is found by listing the
// whole cluster, next to the other Flux controllers, whatever the namespace.
func TestRunFindsAStockFlux(t *testing.T) {
	lists := map[schema.GroupVersionResource]string{
		deploymentsGVR: "DeploymentList", daemonSetsGVR: "DaemonSetList", configMapsGVR: "ConfigMapList",
		namespacesGVR: "NamespaceList", quotasGVR: "ResourceQuotaList", policiesGVR: "ValidatingAdmissionPolicyList",
		bindingsGVR: "ValidatingAdmissionPolicyBindingList", crdsGVR: "CustomResourceDefinitionList",
	}
	for _, tc := range []struct {
		name    string
		args    []string
		verdict Verdict
		detail  string
	}{
		{"stock flags", []string{"--watch-all-namespaces", "--log-level=info"}, Pass, "Deployment flux-system/helm-controller container manager installs the platform's HelmReleases"},
		{"locked down", []string{"--no-cross-namespace-refs=true"}, Fail, "Deployment flux-system/helm-controller container manager runs with --no-cross-namespace-refs=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := []runtime.Object{
				workload("Deployment", "flux-system", "source-controller", ctr("manager", "ghcr.io/fluxcd/source-controller:v1.7.0")),
				workload("Deployment", "flux-system", "kustomize-controller", ctr("manager", "ghcr.io/fluxcd/kustomize-controller:v1.7.0")),
				workload("Deployment", "flux-system", "helm-controller", ctr("manager", "ghcr.io/fluxcd/helm-controller:v1.4.0", tc.args...)),
			}
			c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objects...)
			for _, r := range Run(context.Background(), c, Options{Policies: []string{"p"}}).Checks {
				if r.Name != CheckHelmController {
					continue
				}
				if r.Verdict != tc.verdict || !strings.Contains(r.Detail, tc.detail) || strings.Contains(r.Detail, "source-controller") {
					t.Errorf("got %s %q, want %s containing %q", r.Verdict, r.Detail, tc.verdict, tc.detail)
				}
				return
			}
			t.Fatal("no flux-helm-controller check in the report")
		})
	}
}

// TestRequiredPoliciesAreTheRepositorys keeps RequiredPolicies equal to the
// ValidatingAdmissionPolicies in policies/, so a policy added there is
// checked on live clusters too.
func TestRequiredPoliciesAreTheRepositorys(t *testing.T) {
	files, err := filepath.Glob("../../../../policies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("policies/*.yaml: %v (%d files)", err, len(files))
	}
	var want []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj.Kind == "ValidatingAdmissionPolicy" {
				want = append(want, obj.Metadata.Name)
			}
		}
	}
	sort.Strings(want)
	got := slices.Clone(RequiredPolicies)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("RequiredPolicies = %v\npolicies/ holds %v", got, want)
	}
}
