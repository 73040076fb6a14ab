package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Preflight checks (check --pre): what the platform needs from the cluster
// before its charts are installed.
const (
	CheckCRDsFlux          = "crds-flux"
	CheckCRDsTofu          = "crds-tofu-controller"
	CheckCRDsCertManager   = "crds-cert-manager"
	CheckCRDsGatewayAPI    = "crds-gateway-api"
	CheckIdentityHelm      = "identity-flux-helm-controller"
	CheckIdentityTofu      = "identity-tofu-controller"
	CheckIdentityCertMgr   = "identity-cert-manager"
	CheckValuesSecret      = "cozystack-values"
	valuesSecretName       = "cozystack-values"
	defaultServiceAccount  = "default"
	applicationKindLabel   = "apps.cozystack.io/application.kind"
	applicationGroupLabel  = "apps.cozystack.io/application.group"
	instanceGroup          = "apps.cozystack.io"
	stockFluxNamespace     = "flux-system"
	stockCertManagerNS     = "cert-manager"
	cozystackFluxNamespace = "cozy-fluxcd"
	cozystackCertManagerNS = "cozy-cert-manager"
)

// Identities are the ServiceAccounts the admission policies trust, as the
// policies chart's values `identities` name them.
type Identities struct {
	FluxNamespace string `json:"fluxNamespace"`
	// HelmController and FluxAllInOne are the ServiceAccounts trusted as
	// helm-controller (identities.flux.helmController, .allInOne).
	HelmController       string `json:"helmController"`
	FluxAllInOne         string `json:"fluxAllInOne"`
	TofuNamespace        string `json:"tofuNamespace"`
	TofuController       string `json:"tofuController"`
	CertManagerNamespace string `json:"certManagerNamespace"`
	CertManager          string `json:"certManager"`
}

// CozystackIdentities are the chart's defaults: Cozystack's layout.
var CozystackIdentities = Identities{
	FluxNamespace: cozystackFluxNamespace, HelmController: "helm-controller", FluxAllInOne: "flux",
	TofuNamespace: cozystackFluxNamespace, TofuController: "tofu-controller",
	CertManagerNamespace: cozystackCertManagerNS, CertManager: "cert-manager",
}

// StockIdentities are charts/policies/values-stock.yaml's: Flux, tofu-controller
// and cert-manager installed from their own manifests or charts.
var StockIdentities = Identities{
	FluxNamespace: stockFluxNamespace, HelmController: "helm-controller", FluxAllInOne: "helm-controller",
	TofuNamespace: stockFluxNamespace, TofuController: "tofu-controller",
	CertManagerNamespace: stockCertManagerNS, CertManager: "cert-manager",
}

// RequiredCRD is a CRD the platform needs at a served version.
type RequiredCRD struct {
	Name    string
	Version string
}

// crdGroups are the CRDs of each preflight check and what installs them.
var crdGroups = []struct {
	check string
	crds  []RequiredCRD
	fix   string
}{
	{CheckCRDsFlux, []RequiredCRD{
		{"helmreleases.helm.toolkit.fluxcd.io", "v2"},
		{"helmcharts.source.toolkit.fluxcd.io", "v1"},
	}, "install Flux 2.3 or later (helm-controller and source-controller: HelmRelease v2, HelmChart v1): the helm backend writes HelmReleases whose chartRef names the definitions' HelmCharts (an OCIRepository chartRef needs OCIRepository v1 too, Flux 2.6)"},
	{CheckCRDsTofu, []RequiredCRD{
		{"terraforms.infra.contrib.fluxcd.io", "v1alpha2"},
	}, "install tofu-controller (Terraform infra.contrib.fluxcd.io/v1alpha2), or disable the terraform backend (its chart's enabled=false in the umbrella chart) if no definition uses a Terraform module"},
	{CheckCRDsCertManager, []RequiredCRD{
		{"issuers.cert-manager.io", "v1"},
		{"certificates.cert-manager.io", "v1"},
	}, "install cert-manager (cert-manager.io/v1 Issuer and Certificate), or disable gateway-certs in the umbrella chart"},
	{CheckCRDsGatewayAPI, []RequiredCRD{
		{"gateways.gateway.networking.k8s.io", "v1"},
		{"httproutes.gateway.networking.k8s.io", "v1"},
		{"tlsroutes.gateway.networking.k8s.io", "v1"},
	}, "install the Gateway API standard channel v1.5 or later (Gateway, HTTPRoute and TLSRoute v1) and a Gateway implementation, or disable gateway-listeners, gateway-certs and route-conflicts in the umbrella chart"},
}

// EvaluateCRDs checks each group of required CRDs against those installed:
// each must exist and serve the version. One result per group. Pure.
func EvaluateCRDs(crds []unstructured.Unstructured) []Result {
	served := servedVersions(crds)
	var out []Result
	for _, g := range crdGroups {
		out = append(out, evaluateCRDGroup(served, g.check, g.crds, g.fix))
	}
	return out
}

// servedVersions maps each CRD's name to the versions it serves.
func servedVersions(crds []unstructured.Unstructured) map[string]map[string]bool {
	served := map[string]map[string]bool{}
	for _, c := range crds {
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		vs := map[string]bool{}
		for _, v := range versions {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if s, _ := m["served"].(bool); s {
				name, _ := m["name"].(string)
				vs[name] = true
			}
		}
		served[c.GetName()] = vs
	}
	return served
}

// evaluateCRDGroup is check's verdict on crds: each installed and serving
// its version.
func evaluateCRDGroup(served map[string]map[string]bool, check string, crds []RequiredCRD, fix string) Result {
	r := Result{Name: check, Verdict: Pass}
	var missing, ok []string
	for _, want := range crds {
		vs, exists := served[want.Name]
		switch {
		case !exists:
			missing = append(missing, want.Name+" is not installed")
		case !vs[want.Version]:
			have := make([]string, 0, len(vs))
			for v := range vs {
				have = append(have, v)
			}
			sort.Strings(have)
			missing = append(missing, fmt.Sprintf("%s serves %s, not %s", want.Name, orNone(strings.Join(have, ", ")), want.Version))
		default:
			ok = append(ok, want.Name+" "+want.Version)
		}
	}
	if len(missing) > 0 {
		r.Verdict, r.Detail, r.Fix = Fail, strings.Join(missing, "; "), fix
	} else {
		r.Detail = "served: " + strings.Join(ok, ", ")
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return "no version"
	}
	return s
}

// deployed is a controller found among workloads, with the identity it
// runs as.
type deployed struct {
	workload, ns, serviceAccount string
}

func findControllers(workloads []unstructured.Unstructured, match func(container) bool) []deployed {
	var out []deployed
	for _, w := range workloads {
		for _, c := range containersOf(w) {
			if !match(c) {
				continue
			}
			sa, _, _ := unstructured.NestedString(w.Object, "spec", "template", "spec", "serviceAccountName")
			if sa == "" {
				sa = defaultServiceAccount
			}
			out = append(out, deployed{workload: c.workload, ns: c.ns, serviceAccount: sa})
			break
		}
	}
	return out
}

func imageEndsWith(c container, names ...string) bool {
	for _, n := range names {
		if c.name == n || strings.HasSuffix(imageRepo(c.image), "/"+n) {
			return true
		}
	}
	return false
}

// EvaluateIdentities checks that Flux's helm-controller, tofu-controller
// and cert-manager run as the ServiceAccounts the policies trust (ids): a
// controller running as another identity is refused by the policies the
// platform's objects depend on. Pure.
func EvaluateIdentities(workloads []unstructured.Unstructured, ids Identities) []Result {
	type want struct {
		check, what, ns string
		sas             []string
		match           func(container) bool
		valuesKey       string
		missingFix      string
	}
	wants := []want{
		{CheckIdentityHelm, "Flux helm-controller", ids.FluxNamespace, []string{ids.HelmController, ids.FluxAllInOne},
			func(c container) bool { return imageEndsWith(c, "helm-controller") }, "identities.flux",
			"install Flux's helm-controller; the helm backend's HelmReleases are applied by it"},
		{CheckIdentityTofu, "tofu-controller", ids.TofuNamespace, []string{ids.TofuController},
			func(c container) bool { return imageEndsWith(c, "tofu-controller", "tf-controller") }, "identities.tofuController",
			"install tofu-controller, or disable the terraform backend if no definition uses a Terraform module"},
		{CheckIdentityCertMgr, "cert-manager", ids.CertManagerNamespace, []string{ids.CertManager},
			func(c container) bool { return imageEndsWith(c, "cert-manager-controller") }, "identities.certManager",
			"install cert-manager, or disable gateway-certs"},
	}
	var out []Result
	for _, w := range wants {
		trusted := make([]string, 0, len(w.sas))
		for _, sa := range w.sas {
			id := "system:serviceaccount:" + w.ns + ":" + sa
			if !slices.Contains(trusted, id) {
				trusted = append(trusted, id)
			}
		}
		r := Result{Name: w.check, Verdict: Pass}
		found := findControllers(workloads, w.match)
		if len(found) == 0 {
			r.Verdict, r.Detail, r.Fix = Fail, "no "+w.what+" runs in the cluster (looked for its image in every Deployment and DaemonSet)", w.missingFix
			out = append(out, r)
			continue
		}
		var good, bad []string
		var fix string
		for _, d := range found {
			id := "system:serviceaccount:" + d.ns + ":" + d.serviceAccount
			if slices.Contains(trusted, id) {
				good = append(good, d.workload+" runs as "+id)
				continue
			}
			bad = append(bad, fmt.Sprintf("%s runs as %s, which the policies do not trust (they trust %s)", d.workload, id, strings.Join(trusted, ", ")))
			if fix == "" {
				fix = fmt.Sprintf("install the policies chart (and give the other charts) the values %s.namespace=%s and the ServiceAccount %s (charts/policies/values.yaml, `identities`; docs/install.md, \"Beside a stock Flux and cert-manager\"), "+
					"or run %s as %s", w.valuesKey, d.ns, d.serviceAccount, w.what, trusted[0])
			}
		}
		if len(bad) > 0 {
			r.Verdict, r.Detail, r.Fix = Fail, strings.Join(bad, "; "), fix
		} else {
			r.Detail = strings.Join(good, "; ")
		}
		out = append(out, r)
	}
	return out
}

// EvaluateValuesSecrets checks that every namespace where the helm backend
// writes HelmReleases has the Secret cozystack-values their valuesFrom
// names first (not optional: helm-controller fails a HelmRelease without
// it). needed are those namespaces (tenant namespaces, and those holding
// an instance's HelmRelease); has says whether one has the Secret. Pure.
func EvaluateValuesSecrets(needed []string, has func(ns string) (bool, error)) Result {
	r := Result{Name: CheckValuesSecret, Verdict: Pass}
	if len(needed) == 0 {
		r.Detail = "no tenant namespace and no instance's HelmRelease yet; each namespace that gets Helm-backed instances needs the Secret " + valuesSecretName
		return r
	}
	var missing, unreadable []string
	for _, ns := range needed {
		ok, err := has(ns)
		switch {
		case err != nil:
			unreadable = append(unreadable, ns+" ("+err.Error()+")")
		case !ok:
			missing = append(missing, ns)
		}
	}
	switch {
	case len(missing) > 0:
		r.Verdict = Fail
		r.Detail = fmt.Sprintf("no Secret %s in %s: helm-controller fails their HelmReleases (valuesFrom names it, not optional)", valuesSecretName, strings.Join(missing, ", "))
		r.Fix = "create the Secret " + valuesSecretName + " in each (Cozystack's operator writes it with the cluster's and the namespace's values: keys _cluster and _namespace; " +
			"an empty Secret will do where charts read no such values): kubectl -n NAMESPACE create secret generic " + valuesSecretName
	case len(unreadable) > 0:
		r.Verdict = Unknown
		r.Detail = "cannot read the Secret " + valuesSecretName + " in " + strings.Join(unreadable, ", ")
		r.Fix = "run check as a cluster administrator"
	default:
		r.Detail = fmt.Sprintf("%d namespaces, each with the Secret %s", len(needed), valuesSecretName)
	}
	return r
}

var (
	crdsGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	secretsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	helmReleasesGVR = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
)

// RunPre gathers and evaluates the preflight checks: CRDs, the identities
// of Flux, tofu-controller and cert-manager, and cozystack-values.
func RunPre(ctx context.Context, c dynamic.Interface, o Options) Report {
	if o.TenantPrefix == "" {
		o.TenantPrefix = "tenant-"
	}
	ids := o.Identities
	if ids == (Identities{}) {
		ids = CozystackIdentities
	}
	list := func(gvr schema.GroupVersionResource, opts metav1.ListOptions) ([]unstructured.Unstructured, error) {
		l, err := c.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		return l.Items, nil
	}
	var results []Result
	crds, err := list(crdsGVR, metav1.ListOptions{})
	if err != nil {
		for _, g := range crdGroups {
			results = append(results, unknown(g.check, err, "run check as a cluster administrator"))
		}
	} else {
		results = append(results, EvaluateCRDs(crds)...)
	}

	deploys, derr := list(deploymentsGVR, metav1.ListOptions{})
	daemons, serr := list(daemonSetsGVR, metav1.ListOptions{})
	if derr != nil || serr != nil {
		err := derr
		if err == nil {
			err = serr
		}
		for _, name := range []string{CheckIdentityHelm, CheckIdentityTofu, CheckIdentityCertMgr} {
			results = append(results, unknown(name, err, "run check as a cluster administrator"))
		}
	} else {
		results = append(results, EvaluateIdentities(append(deploys, daemons...), ids)...)
	}

	needed, nerr := valuesNamespaces(list, o.TenantPrefix)
	if nerr != nil {
		results = append(results, unknown(CheckValuesSecret, nerr, "run check as a cluster administrator"))
	} else {
		results = append(results, EvaluateValuesSecrets(needed, func(ns string) (bool, error) {
			_, err := c.Resource(secretsGVR).Namespace(ns).Get(ctx, valuesSecretName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		}))
	}
	return Summarize(results)
}

// valuesNamespaces are the tenant namespaces and the namespaces of the
// instances' HelmReleases (application labels of apps.cozystack.io),
// sorted. A cluster without the HelmRelease kind has none of the latter.
func valuesNamespaces(list func(schema.GroupVersionResource, metav1.ListOptions) ([]unstructured.Unstructured, error), prefix string) ([]string, error) {
	seen := map[string]bool{}
	nss, err := list(namespacesGVR, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range nss {
		if strings.HasPrefix(n.GetName(), prefix) {
			seen[n.GetName()] = true
		}
	}
	hrs, err := list(helmReleasesGVR, metav1.ListOptions{LabelSelector: applicationKindLabel + "," + applicationGroupLabel + "=" + instanceGroup})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	for _, h := range hrs {
		seen[h.GetNamespace()] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
