package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Checks of an installed platform (check without --pre), beside the
// isolation checks of check.go: the CRDs the deployed components work with,
// and the controllers the charts deployed.
const (
	CheckCRDsCozyplane = "crds-cozyplane"
	CheckControllers   = "controllers"

	// PartOfLabel and ComponentLabel are the labels every controller chart
	// puts on its Deployments (charts/cozyplane-lib, _names.tpl): part-of
	// is cozyplane, component the chart's name (helm, terraform, ...).
	PartOfLabel    = "app.kubernetes.io/part-of"
	ComponentLabel = "app.kubernetes.io/component"
	partOf         = "cozyplane"
)

// Components are the controller charts, by the component label of their
// Deployments.
var Components = []string{"appdef", "helm", "terraform", "gateway-listeners", "gateway-certs", "ns-labels", "lineage", "route-conflicts"}

// componentCRD is a CRD and the components whose controllers work with it
// (the umbrella chart's preflight, charts/cozyplane/templates/preflight.yaml,
// asks the cluster for the third-party ones before installing).
type componentCRD struct {
	RequiredCRD
	users []string
}

var (
	fluxUsers        = []string{"helm", "lineage"}
	gatewayAPIUsers  = []string{"gateway-listeners", "gateway-certs", "route-conflicts"}
	applicationUsers = []string{"appdef", "helm", "terraform"}
	tenantGWUsers    = []string{"gateway-listeners", "gateway-certs", "ns-labels", "route-conflicts"}
)

// installedGroups are the CRD checks of an installed platform: ours (the
// crds chart) and the preflight's groups, each CRD with its users.
func installedGroups() []struct {
	check string
	crds  []componentCRD
	fix   string
} {
	type group = struct {
		check string
		crds  []componentCRD
		fix   string
	}
	out := []group{{CheckCRDsCozyplane, []componentCRD{
		{RequiredCRD{"applicationdefinitions.cozystack.io", "v1alpha1"}, applicationUsers},
		{RequiredCRD{"tenantgateways.gateway.cozystack.io", "v1alpha1"}, tenantGWUsers},
	}, "install the crds chart with the release's controllers (umbrella chart: crds.enabled=true, crds.applicationDefinitions and crds.tenantGateways true; " +
		"docs/install.md): a controller whose CRD is missing cannot start"}}
	users := map[string][]string{
		CheckCRDsFlux: fluxUsers, CheckCRDsTofu: {"terraform"}, CheckCRDsCertManager: {"gateway-certs"}, CheckCRDsGatewayAPI: gatewayAPIUsers,
	}
	for _, g := range crdGroups {
		var cs []componentCRD
		for _, c := range g.crds {
			cs = append(cs, componentCRD{c, users[g.check]})
		}
		out = append(out, group{g.check, cs, g.fix})
	}
	return out
}

// DeployedComponents are the components of the charts' Deployments among
// deploys (label part-of=cozyplane, by their component label), sorted.
func DeployedComponents(deploys []unstructured.Unstructured) []string {
	var out []string
	for _, d := range deploys {
		l := d.GetLabels()
		if l[PartOfLabel] != partOf || l[ComponentLabel] == "" || slices.Contains(out, l[ComponentLabel]) {
			continue
		}
		out = append(out, l[ComponentLabel])
	}
	sort.Strings(out)
	return out
}

// EvaluateInstalledCRDs checks the CRDs the deployed components work with:
// ours and the third-party ones, each installed and serving its version.
// One result per group (crds-cozyplane, then the preflight's groups); a
// group no deployed component uses passes as not needed. With no
// component known (none deployed by the charts), every CRD is required.
// Pure.
func EvaluateInstalledCRDs(crds []unstructured.Unstructured, components []string) []Result {
	served := servedVersions(crds)
	var out []Result
	for _, g := range installedGroups() {
		var need []RequiredCRD
		var users []string
		for _, c := range g.crds {
			for _, u := range c.users {
				if !slices.Contains(users, u) {
					users = append(users, u)
				}
			}
			if len(components) == 0 || slices.ContainsFunc(c.users, func(u string) bool { return slices.Contains(components, u) }) {
				need = append(need, c.RequiredCRD)
			}
		}
		if len(need) == 0 {
			out = append(out, Result{Name: g.check, Verdict: Pass,
				Detail: "not needed: no component that uses them is deployed (" + strings.Join(users, ", ") + ")"})
			continue
		}
		out = append(out, evaluateCRDGroup(served, g.check, need, g.fix))
	}
	return out
}

// EvaluateControllers checks that each controller the charts deployed (a
// Deployment labelled app.kubernetes.io/part-of=cozyplane) is ready: not
// scaled to zero, condition Available True, at least one ready replica. No
// such Deployment fails: the platform is not installed, or not by its
// charts. Pure.
func EvaluateControllers(deploys []unstructured.Unstructured) Result {
	r := Result{Name: CheckControllers}
	var ready, notReady []string
	var fixes []string
	for _, d := range deploys {
		if d.GetLabels()[PartOfLabel] != partOf {
			continue
		}
		where := d.GetNamespace() + "/" + d.GetName()
		replicas, found, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		readyReplicas, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		available, reason := "", ""
		conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions")
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok || m["type"] != "Available" {
				continue
			}
			available, _ = m["status"].(string)
			msg, _ := m["message"].(string)
			rsn, _ := m["reason"].(string)
			reason = strings.Join(slices.DeleteFunc([]string{rsn, msg}, func(s string) bool { return s == "" }), ": ")
		}
		var why string
		switch {
		case replicas == 0:
			why = "scaled to 0 replicas"
		case available != "True":
			why = "not Available"
			if available == "" {
				why = "no Available condition yet"
			} else if reason != "" {
				why += " (" + reason + ")"
			}
		case readyReplicas < 1:
			why = "no ready replica"
		}
		if why == "" {
			ready = append(ready, fmt.Sprintf("%s (%d/%d ready)", where, readyReplicas, replicas))
			continue
		}
		notReady = append(notReady, fmt.Sprintf("Deployment %s: %s, %d/%d replicas ready", where, why, readyReplicas, replicas))
		if replicas == 0 {
			fixes = append(fixes, fmt.Sprintf("kubectl -n %s scale deployment %s --replicas=1 (or the chart's replicas value)", d.GetNamespace(), d.GetName()))
		} else {
			fixes = append(fixes, fmt.Sprintf("kubectl -n %s describe deployment %s; kubectl -n %s logs deployment/%s", d.GetNamespace(), d.GetName(), d.GetNamespace(), d.GetName()))
		}
	}
	switch {
	case len(ready) == 0 && len(notReady) == 0:
		r.Verdict = Fail
		r.Detail = "no Deployment labelled " + PartOfLabel + "=" + partOf + ": the platform's controllers are not installed by its charts"
		r.Fix = "install the umbrella chart charts/cozyplane (docs/install.md; `cozyplane check --pre` first says what it needs)"
	case len(notReady) > 0:
		r.Verdict = Fail
		r.Detail = strings.Join(notReady, "; ")
		r.Fix = strings.Join(fixes, "; ") + ": a pod that cannot pull its image (make release writes the images; docs/install.md), " +
			"a missing CRD (the crds-* checks) or RBAC denied is in its events or logs; the platform's objects of that component are not reconciled meanwhile"
	default:
		r.Verdict = Pass
		r.Detail = fmt.Sprintf("%d Deployments ready: %s", len(ready), strings.Join(ready, ", "))
	}
	return r
}
