// Package check reads a live cluster and says, for each configuration the
// platform's isolation depends on but cannot set itself, whether it holds:
// pass, fail (with the exact configuration that closes it) or unknown (the
// cluster could not tell). docs/security.md ("Residual risks") says why each
// matters; docs/cli.md ("check") how to read the report.
//
// Run also judges the platform itself once installed: its controllers ready
// and the CRDs their components need (installed.go); RunPre what it needs
// before its charts are installed (pre.go).
//
// Gather reads the objects; the Evaluate* functions decide, purely.
package check

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Verdict of one check.
type Verdict string

// Verdicts, from best to worst.
const (
	Pass    Verdict = "pass"
	Unknown Verdict = "unknown"
	Fail    Verdict = "fail"
)

func (v Verdict) rank() int {
	switch v {
	case Fail:
		return 2
	case Unknown:
		return 1
	}
	return 0
}

// Result is one check's verdict, what was seen, and what closes it.
type Result struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Detail says what was seen.
	Detail string `json:"detail"`
	// Fix is the exact configuration that closes the gap (set unless the
	// check passed).
	Fix string `json:"fix,omitempty"`
}

// Report is every check's result and the worst verdict among them.
type Report struct {
	Verdict Verdict  `json:"verdict"`
	Checks  []Result `json:"checks"`
}

// Summarize makes a report of results: its verdict is the worst of theirs.
func Summarize(results []Result) Report {
	r := Report{Verdict: Pass, Checks: results}
	for _, c := range results {
		if c.Verdict.rank() > r.Verdict.rank() {
			r.Verdict = c.Verdict
		}
	}
	return r
}

// Names of the checks.
const (
	CheckHelmController = "flux-helm-controller"
	CheckIngressNginx   = "ingress-nginx-snippets"
	CheckPolicies       = "admission-policies"
	CheckQuotas         = "tenant-quotas"
)

// Options tune what the checks expect.
type Options struct {
	// TenantPrefix starts the names of tenant namespaces (default tenant-).
	TenantPrefix string
	// Policies the cluster must enforce (default RequiredPolicies).
	Policies []string
	// Identities the policies trust (check --pre; default
	// CozystackIdentities).
	Identities Identities
}

// RequiredPolicies are the admission policies of policies/ that the
// platform's isolation rests on (the policies chart installs them).
var RequiredPolicies = []string{
	"cozyplane-appdef-clusterrole-policy",
	"cozyplane-appdef-identity-policy",
	"cozyplane-appdef-instance-keys",
	"cozyplane-backing-object-policy",
	"cozyplane-certificate-names-policy",
	"cozyplane-certificaterequest-policy",
	"cozyplane-gateway-certs-identity-policy",
	"cozyplane-gateway-certs-tenantgateway-policy",
	"cozyplane-gateway-hostname-policy",
	"cozyplane-gateway-listeners-identity-policy",
	"cozyplane-gateway-listeners-tenantgateway-policy",
	"cozyplane-helm-identity-policy",
	"cozyplane-ingress-annotations-policy",
	"cozyplane-ingress-hostname-policy",
	"cozyplane-instance-orphan-policy",
	"cozyplane-instance-status-policy",
	"cozyplane-lineage-identity-policy",
	"cozyplane-namespace-host-label-policy",
	"cozyplane-ns-labels-identity-policy",
	"cozyplane-quota-identity-policy",
	"cozyplane-quota-status-identity-policy",
	"cozyplane-route-conflicts-identity-policy",
	"cozyplane-route-hostname-policy",
	"cozyplane-route-hostname-policy-grpc",
	"cozyplane-route-hostname-policy-tls",
	"cozyplane-route-port80-policy",
	"cozyplane-service-externalips-policy",
	"cozyplane-tenant-flux-identity-policy",
	"cozyplane-tenant-host-policy",
	"cozyplane-tenant-platform-fields-policy",
	"cozyplane-tenantgateway-attach-policy",
	"cozyplane-terraform-identity-policy",
	"cozyplane-values-secret-policy",
}

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	daemonSetsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	quotasGVR      = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	policiesGVR    = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	bindingsGVR    = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// Run gathers what every check needs from the cluster and evaluates them.
// A list the caller may not read makes that check unknown, not an error.
func Run(ctx context.Context, c dynamic.Interface, o Options) Report {
	if o.TenantPrefix == "" {
		o.TenantPrefix = "tenant-"
	}
	if len(o.Policies) == 0 {
		o.Policies = RequiredPolicies
	}
	list := func(gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
		l, err := c.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		return l.Items, nil
	}
	var results []Result

	deploys, derr := list(deploymentsGVR)
	if derr != nil {
		results = append(results, unknown(CheckHelmController, derr, helmControllerFix))
	} else {
		results = append(results, EvaluateHelmController(deploys))
	}

	daemons, serr := list(daemonSetsGVR)
	if derr != nil || serr != nil {
		err := derr
		if err == nil {
			err = serr
		}
		results = append(results, unknown(CheckIngressNginx, err, ingressFix))
	} else {
		get := func(ns, name string) (*unstructured.Unstructured, error) {
			cm, err := c.Resource(configMapsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return cm, err
		}
		results = append(results, EvaluateIngressNginx(append(deploys, daemons...), get))
	}

	policies, perr := list(policiesGVR)
	bindings, berr := list(bindingsGVR)
	if perr != nil || berr != nil {
		err := perr
		if err == nil {
			err = berr
		}
		results = append(results, unknown(CheckPolicies, err, policiesFix))
	} else {
		results = append(results, EvaluatePolicies(policies, bindings, o.Policies))
	}

	namespaces, nerr := list(namespacesGVR)
	quotas, qerr := list(quotasGVR)
	if nerr != nil || qerr != nil {
		err := nerr
		if err == nil {
			err = qerr
		}
		results = append(results, unknown(CheckQuotas, err, quotasFix))
	} else {
		results = append(results, EvaluateQuotas(namespaces, quotas, o.TenantPrefix))
	}

	// The charts' controllers and the CRDs their components work with.
	var components []string
	if derr != nil {
		results = append(results, unknown(CheckControllers, derr, "run check as a cluster administrator"))
	} else {
		components = DeployedComponents(deploys)
		results = append(results, EvaluateControllers(deploys))
	}
	crds, cerr := list(crdsGVR)
	if cerr != nil {
		for _, g := range installedGroups() {
			results = append(results, unknown(g.check, cerr, "run check as a cluster administrator"))
		}
	} else {
		results = append(results, EvaluateInstalledCRDs(crds, components)...)
	}
	return Summarize(results)
}

func unknown(name string, err error, fix string) Result {
	return Result{Name: name, Verdict: Unknown, Detail: "cannot read the cluster: " + err.Error(), Fix: fix}
}

// containers are a workload's containers with the workload they belong to.
type container struct {
	workload string // Kind namespace/name
	ns       string
	name     string
	image    string
	args     []string // command then args
}

func containersOf(w unstructured.Unstructured) []container {
	items, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
	var out []container
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		c := container{workload: w.GetKind() + " " + w.GetNamespace() + "/" + w.GetName(), ns: w.GetNamespace()}
		c.name, _, _ = unstructured.NestedString(m, "name")
		c.image, _, _ = unstructured.NestedString(m, "image")
		cmd, _, _ := unstructured.NestedStringSlice(m, "command")
		args, _, _ := unstructured.NestedStringSlice(m, "args")
		c.args = append(cmd, args...)
		out = append(out, c)
	}
	return out
}

// flagValue finds --name or --name=value among args (also "--name value").
// found is false when absent; value is "true" for a bare boolean flag.
func flagValue(args []string, name string) (value string, found bool) {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				// Only string flags take the next word; a bare boolean is
				// followed by another flag.
				value, found = args[i+1], true
				continue
			}
			value, found = "true", true
			continue
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			value, found = v, true
		}
	}
	return value, found
}

// imageRepo is an image reference without its tag or digest.
func imageRepo(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

func imageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return ""
}

const helmControllerFix = "run Flux's helm-controller without --no-cross-namespace-refs=true and without --default-service-account: " +
	"the platform's backing HelmReleases name charts in platform namespaces and keep Helm's release records in cozy-helm-* namespaces, " +
	"which helm-controller refuses (cross-namespace references) or cannot write (as a tenant namespace's ServiceAccount) under those flags. " +
	"Tenants' own HelmReleases are confined by the admission policy cozyplane-tenant-flux-identity-policy instead " +
	"(each names a ServiceAccount of its namespace that helm-controller impersonates)"

// EvaluateHelmController finds Flux's helm-controller among workloads (a
// container named helm-controller, or whose image is .../helm-controller)
// and checks it can install the platform's backing HelmReleases: those
// name their chart in a platform namespace (refused under
// --no-cross-namespace-refs=true) and no ServiceAccount (impersonated as
// the tenant namespace's --default-service-account, which cannot write
// their release records in the platform namespace). What Flux's
// multi-tenancy lockdown would close, a tenant's own HelmRelease applied
// with helm-controller's rights, is closed by
// cozyplane-tenant-flux-identity-policy, which the admission-policies
// check requires. Pure.
func EvaluateHelmController(workloads []unstructured.Unstructured) Result {
	r := Result{Name: CheckHelmController}
	var found, bad []string
	for _, w := range workloads {
		for _, c := range containersOf(w) {
			if c.name != "helm-controller" && !strings.HasSuffix(imageRepo(c.image), "/helm-controller") {
				continue
			}
			where := c.workload + " container " + c.name
			found = append(found, where)
			var set []string
			if v, ok := flagValue(c.args, "no-cross-namespace-refs"); ok && v != "false" {
				set = append(set, "--no-cross-namespace-refs="+v)
			}
			if v, ok := flagValue(c.args, "default-service-account"); ok && v != "" {
				set = append(set, "--default-service-account="+v)
			}
			if len(set) > 0 {
				bad = append(bad, where+" runs with "+strings.Join(set, " and "))
			}
		}
	}
	switch {
	case len(found) == 0:
		r.Verdict, r.Fix = Unknown, helmControllerFix
		r.Detail = "no helm-controller found among the cluster's Deployments (a container named helm-controller or an image .../helm-controller); " +
			"if Flux runs elsewhere, check its args by hand"
	case len(bad) > 0:
		r.Verdict, r.Fix = Fail, helmControllerFix
		r.Detail = strings.Join(bad, "; ") + ": the platform's backing HelmReleases (charts in platform namespaces, release records in cozy-helm-*) cannot be installed"
	default:
		r.Verdict = Pass
		r.Detail = strings.Join(found, ", ") + " installs the platform's HelmReleases (cross-namespace chart references allowed, no default ServiceAccount)"
	}
	return r
}

const ingressFix = `set allow-snippet-annotations: "false" in the ingress-nginx controller's ConfigMap (chart value controller.allowSnippetAnnotations: false), ` +
	`and keep annotations-risk-level at "High" or lower (never "Critical"; controller.config.annotations-risk-level in the chart)`

// ConfigMapGetter reads one ConfigMap; nil, nil when it does not exist.
type ConfigMapGetter func(ns, name string) (*unstructured.Unstructured, error)

// EvaluateIngressNginx finds the ingress-nginx controllers among workloads
// (a container running /nginx-ingress-controller or an image
// .../ingress-nginx/controller), reads the ConfigMap each is given
// (--configmap) and checks that snippet annotations are off. An absent
// key counts as the controller's default: allow-snippet-annotations is
// false by default from v1.9.0 on, so an older or unknown version without
// it set is not a pass. Reads through get only.
func EvaluateIngressNginx(workloads []unstructured.Unstructured, get ConfigMapGetter) Result {
	r := Result{Name: CheckIngressNginx}
	var found, bad, unsure []string
	for _, w := range workloads {
		for _, c := range containersOf(w) {
			isController := strings.HasSuffix(imageRepo(c.image), "ingress-nginx/controller") || strings.HasSuffix(imageRepo(c.image), "ingress-nginx/controller-chroot")
			for _, a := range c.args {
				if strings.HasSuffix(a, "/nginx-ingress-controller") {
					isController = true
				}
			}
			if !isController {
				continue
			}
			where := c.workload
			found = append(found, where)
			data := map[string]string{}
			source := "no --configmap (defaults)"
			if ref, ok := flagValue(c.args, "configmap"); ok && ref != "" {
				ref = strings.ReplaceAll(ref, "$(POD_NAMESPACE)", c.ns)
				ns, name, ok := strings.Cut(ref, "/")
				if !ok {
					ns, name = c.ns, ref
				}
				source = "ConfigMap " + ns + "/" + name
				cm, err := get(ns, name)
				if err != nil {
					unsure = append(unsure, where+": cannot read "+source+": "+err.Error())
					continue
				}
				if cm != nil {
					data, _, _ = unstructured.NestedStringMap(cm.Object, "data")
				} else {
					source += " (absent: defaults)"
				}
			}
			if v, ok := data["allow-snippet-annotations"]; ok {
				if strings.TrimSpace(strings.ToLower(v)) != "false" {
					bad = append(bad, fmt.Sprintf("%s: %s sets allow-snippet-annotations %q", where, source, v))
					continue
				}
			} else if !atLeast(imageTag(c.image), 1, 9) {
				unsure = append(unsure, fmt.Sprintf("%s: %s does not set allow-snippet-annotations and the controller version (%q) may default it to true (before v1.9.0)",
					where, source, imageTag(c.image)))
				continue
			}
			if v := strings.TrimSpace(data["annotations-risk-level"]); strings.EqualFold(v, "Critical") {
				bad = append(bad, fmt.Sprintf("%s: %s sets annotations-risk-level %q, which admits snippet annotations", where, source, v))
			}
		}
	}
	switch {
	case len(found) == 0:
		r.Verdict = Pass
		r.Detail = "no ingress-nginx controller found among the cluster's Deployments and DaemonSets"
	case len(bad) > 0:
		r.Verdict, r.Fix = Fail, ingressFix
		r.Detail = strings.Join(append(bad, unsure...), "; ") + ": a tenant's Ingress could inject nginx configuration (read the controller's Secrets, serve any host)"
	case len(unsure) > 0:
		r.Verdict, r.Fix = Unknown, ingressFix
		r.Detail = strings.Join(unsure, "; ")
	default:
		r.Verdict = Pass
		r.Detail = strings.Join(found, ", ") + ": snippet annotations are off"
	}
	return r
}

// atLeast says whether tag (v1.12.1, 1.9.0@sha...) is at least major.minor.
func atLeast(tag string, major, minor int) bool {
	tag = strings.TrimPrefix(tag, "v")
	var ma, mi int
	if n, _ := fmt.Sscanf(tag, "%d.%d", &ma, &mi); n != 2 {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

const policiesFix = "install the policies chart (charts/policies, or the umbrella chart's policies.enabled: true) with every switch on, " +
	"or kubectl apply --server-side -f policies/ from the release"

// EvaluatePolicies checks that each required policy exists with
// failurePolicy Fail and is bound with validationActions Deny. Pure.
func EvaluatePolicies(policies, bindings []unstructured.Unstructured, required []string) Result {
	r := Result{Name: CheckPolicies}
	have := map[string]string{} // name -> failurePolicy
	for _, p := range policies {
		fp, _, _ := unstructured.NestedString(p.Object, "spec", "failurePolicy")
		if fp == "" {
			fp = "Fail" // the API's default
		}
		have[p.GetName()] = fp
	}
	denied := map[string]bool{}
	for _, b := range bindings {
		name, _, _ := unstructured.NestedString(b.Object, "spec", "policyName")
		actions, _, _ := unstructured.NestedStringSlice(b.Object, "spec", "validationActions")
		for _, a := range actions {
			if a == "Deny" {
				denied[name] = true
			}
		}
	}
	var problems []string
	for _, name := range required {
		fp, ok := have[name]
		switch {
		case !ok:
			problems = append(problems, name+" is not installed")
		case fp != "Fail":
			problems = append(problems, name+" has failurePolicy "+fp+" (want Fail)")
		case !denied[name]:
			problems = append(problems, name+" has no binding with validationActions [Deny]")
		}
	}
	if len(problems) > 0 {
		r.Verdict, r.Fix = Fail, policiesFix
		r.Detail = strings.Join(problems, "; ")
		return r
	}
	r.Verdict = Pass
	r.Detail = fmt.Sprintf("%d policies installed, failing closed and bound with Deny", len(required))
	return r
}

const quotasFix = "run the appdef controller (it writes the ResourceQuota cozystack-instances in every tenant namespace; --instance-quota, --tenant-quota, " +
	"chart values instanceQuota.*), and kube-controller-manager with its resourcequota controller (on by default; --controllers must not leave it out), " +
	"which computes the usage the API server enforces"

// EvaluateQuotas checks that every tenant namespace (name prefix) has a
// ResourceQuota counting apps.cozystack.io instances, and that the quota
// controller has computed its usage (without it, the API server does not
// enforce it). Pure.
func EvaluateQuotas(namespaces, quotas []unstructured.Unstructured, prefix string) Result {
	r := Result{Name: CheckQuotas}
	counted := map[string]bool{}
	var unenforced []string
	for _, q := range quotas {
		hard, _, _ := unstructured.NestedStringMap(q.Object, "spec", "hard")
		counts := false
		for k := range hard {
			if strings.HasPrefix(k, "count/") && strings.HasSuffix(k, ".apps.cozystack.io") {
				counts = true
			}
		}
		if !counts {
			continue
		}
		counted[q.GetNamespace()] = true
		used, _, _ := unstructured.NestedMap(q.Object, "status", "used")
		if used == nil {
			unenforced = append(unenforced, q.GetNamespace()+"/"+q.GetName())
		}
	}
	var tenants, missing []string
	for _, ns := range namespaces {
		if !strings.HasPrefix(ns.GetName(), prefix) || ns.GetDeletionTimestamp() != nil {
			continue
		}
		tenants = append(tenants, ns.GetName())
		if !counted[ns.GetName()] {
			missing = append(missing, ns.GetName())
		}
	}
	sort.Strings(missing)
	sort.Strings(unenforced)
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "tenant namespaces without an instance quota: "+strings.Join(missing, ", "))
	}
	if len(unenforced) > 0 {
		problems = append(problems, "quotas without computed usage, not enforced (is kube-controller-manager's resourcequota controller running?): "+strings.Join(unenforced, ", "))
	}
	if len(problems) > 0 {
		r.Verdict, r.Fix = Fail, quotasFix
		r.Detail = strings.Join(problems, "; ")
		return r
	}
	r.Verdict = Pass
	r.Detail = fmt.Sprintf("%d tenant namespaces, each with an enforced instance quota", len(tenants))
	return r
}
