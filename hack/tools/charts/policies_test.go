package main

// The policies chart renders policies/ with the configured identities
// (charts/policies/templates/_identities.tpl). These tests run `helm
// template` (helm from PATH or .cache/bin, which `make tools` builds).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const repoRoot = "../../.."

func helmBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	p, _ := filepath.Abs(filepath.Join(repoRoot, ".cache", "bin", "helm"))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no helm in PATH nor at %s: run make tools", p)
	}
	return p
}

// render runs helm template on the policies chart with args, for an API
// server that serves every kind of policy the chart holds (it renders the
// mutating ones only where MutatingAdmissionPolicy v1 is served); it returns
// the output, or the error output when helm fails.
func render(t *testing.T, args ...string) (string, error) {
	t.Helper()
	base := []string{"template", "x", filepath.Join(repoRoot, "charts", "policies"),
		"--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"}
	cmd := exec.Command(helmBin(t), append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return errOut.String(), fmt.Errorf("helm template %v: %w: %s", args, err, errOut.String())
	}
	return out.String(), nil
}

// objects parses YAML documents into objects keyed by kind/name, without
// metadata.labels (the chart adds its own).
func objects(t *testing.T, text string) map[string]any {
	t.Helper()
	out := map[string]any{}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("the output does not parse: %v", err)
		}
		if doc == nil {
			continue
		}
		meta, _ := doc["metadata"].(map[string]any)
		delete(meta, "labels")
		key := fmt.Sprintf("%v/%v", doc["kind"], meta["name"])
		if _, dup := out[key]; dup {
			t.Fatalf("%s twice", key)
		}
		out[key] = doc
	}
	return out
}

func policyFiles(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "policies", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("policies/*.yaml: %v (%d files)", err, len(files))
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("---\n")
		all.Write(b)
		all.WriteString("\n")
	}
	return objects(t, all.String())
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mapStrings applies f to every string of v.
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = mapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapStrings(e, f)
		}
		return out
	}
	return v
}

func TestPoliciesChartDefaultsArePolicies(t *testing.T) {
	out, err := render(t)
	if err != nil {
		t.Fatal(err)
	}
	got, want := objects(t, out), policyFiles(t)
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: in policies/, not rendered by the chart", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: rendered by the chart, not in policies/", k)
		}
	}
	for k := range want {
		if _, ok := got[k]; ok && !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: the chart with default identities renders it otherwise than policies/ (run make generate?)", k)
		}
	}
}

// platformToken is a quoted username, group or namespace of the platform's
// own namespaces as the policies' CEL writes it.
var platformToken = regexp.MustCompile(`'(system:serviceaccounts?:)?(cozy-fluxcd|cozy-cert-manager|cozy-system|cozy-backup-controller)(:[a-z0-9.-]+)?'`)

// everyIdentity names every identity otherwise than the defaults, with
// names found nowhere else.
var everyIdentity = []string{
	"--set", "identities.flux.namespace=idt-flux",
	"--set", "identities.flux.allInOne=idt-aio",
	"--set", "identities.flux.helmController=idt-hc",
	"--set", "identities.flux.kustomizeController=idt-kc",
	"--set", "identities.flux.shardOperator=idt-so",
	"--set", "identities.tofuController.namespace=idt-tofu",
	"--set", "identities.tofuController.serviceAccount=idt-tc",
	"--set", "identities.certManager.namespace=idt-cm",
	"--set", "identities.certManager.serviceAccount=idt-cmsa",
	"--set", "identities.operator.namespace=idt-op",
	"--set", "identities.operator.serviceAccount=idt-opsa",
	"--set", "identities.controllers.namespace=idt-ctl",
	"--set", "identities.controllers.helm=idt-helm",
	"--set", "identities.controllers.terraform=idt-tf",
	"--set", "identities.controllers.appdef=idt-appdef",
	"--set", "identities.controllers.gatewayListeners=idt-gl",
	"--set", "identities.controllers.gatewayCerts=idt-gc",
	"--set", "identities.controllers.nsLabels=idt-nl",
	"--set", "identities.controllers.lineage=idt-li",
	"--set", "identities.controllers.routeConflicts=idt-rc",
	"--set", "identities.backupStrategy.namespace=idt-bk",
	"--set", "identities.backupStrategy.serviceAccount=idt-bs",
}

// back maps every configured token of everyIdentity to its default.
var back = strings.NewReplacer(
	"'system:serviceaccount:idt-flux:idt-aio'", "'system:serviceaccount:cozy-fluxcd:flux'",
	"'system:serviceaccount:idt-flux:idt-hc'", "'system:serviceaccount:cozy-fluxcd:helm-controller'",
	"'system:serviceaccount:idt-flux:idt-kc'", "'system:serviceaccount:cozy-fluxcd:kustomize-controller'",
	"'system:serviceaccount:idt-flux:idt-so'", "'system:serviceaccount:cozy-fluxcd:flux-shard-operator'",
	"'system:serviceaccount:idt-op:'", "'system:serviceaccount:cozy-system:'",
	"'system:serviceaccount:idt-tofu:idt-tc'", "'system:serviceaccount:cozy-fluxcd:tofu-controller'",
	"'system:serviceaccount:idt-cm:idt-cmsa'", "'system:serviceaccount:cozy-cert-manager:cert-manager'",
	"'system:serviceaccount:idt-op:idt-opsa'", "'system:serviceaccount:cozy-system:cozystack'",
	"'system:serviceaccount:idt-ctl:idt-helm'", "'system:serviceaccount:cozy-system:cozystack-helm'",
	"'system:serviceaccount:idt-ctl:idt-tf'", "'system:serviceaccount:cozy-system:cozystack-terraform'",
	"'system:serviceaccount:idt-ctl:idt-appdef'", "'system:serviceaccount:cozy-system:cozystack-appdef'",
	"'system:serviceaccount:idt-ctl:idt-gl'", "'system:serviceaccount:cozy-system:cozystack-gateway-listeners'",
	"'system:serviceaccount:idt-ctl:idt-gc'", "'system:serviceaccount:cozy-system:cozystack-gateway-certs'",
	"'system:serviceaccount:idt-ctl:idt-nl'", "'system:serviceaccount:cozy-system:cozystack-ns-labels'",
	"'system:serviceaccount:idt-ctl:idt-li'", "'system:serviceaccount:cozy-system:cozystack-lineage'",
	"'system:serviceaccount:idt-ctl:idt-rc'", "'system:serviceaccount:cozy-system:cozystack-route-conflicts'",
	"'system:serviceaccount:idt-bk:idt-bs'", "'system:serviceaccount:cozy-backup-controller:backupstrategy-controller'",
	"'system:serviceaccounts:idt-flux'", "'system:serviceaccounts:cozy-fluxcd'",
	"'system:serviceaccounts:idt-cm'", "'system:serviceaccounts:cozy-cert-manager'",
	"'idt-flux'", "'cozy-fluxcd'",
	"'idt-cm'", "'cozy-cert-manager'",
)

// TestPoliciesChartEveryIdentity: with every identity configured, no
// quoted identity of Cozystack's layout is left (a policy naming one the
// chart does not know fails here: add it to identities, values.yaml and
// _identities.tpl), and mapping the configured ones back gives exactly the
// default rendering, so no replacement touched anything but whole tokens.
func TestPoliciesChartEveryIdentity(t *testing.T) {
	out, err := render(t, everyIdentity...)
	if err != nil {
		t.Fatal(err)
	}
	if left := platformToken.FindAllString(out, -1); len(left) > 0 {
		sort.Strings(left)
		t.Errorf("identities of Cozystack's layout left in the rendered policies: %v; name each in the policies chart's identities (values.yaml, schema/own.json, templates/_identities.tpl)", compact(left))
	}
	if strings.Contains(out, "@cozyplane-identity-") {
		t.Error("a placeholder of the replacement is left in the output")
	}
	def, err := render(t)
	if err != nil {
		t.Fatal(err)
	}
	got := objects(t, out)
	want := objects(t, def)
	for k := range want {
		if restored := mapStrings(got[k], back.Replace); !reflect.DeepEqual(restored, want[k]) {
			t.Errorf("%s: with every identity configured and mapped back, it differs from the default rendering", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d objects with every identity configured, %d with the defaults", len(got), len(want))
	}
}

func compact(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestPoliciesChartStockValues renders the stock values file: Flux and
// cert-manager's Cozystack namespaces appear nowhere in the output.
func TestPoliciesChartStockValues(t *testing.T) {
	out, err := render(t, "-f", filepath.Join(repoRoot, "charts", "policies", "values-stock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"cozy-fluxcd", "cozy-cert-manager"} {
		if n := strings.Count(out, ns); n > 0 {
			t.Errorf("%s is left %d times in the policies rendered with values-stock.yaml", ns, n)
		}
	}
	for _, want := range []string{
		"'system:serviceaccount:flux-system:helm-controller'",
		"'system:serviceaccount:flux-system:kustomize-controller'",
		"'system:serviceaccount:flux-system:tofu-controller'",
		"'system:serviceaccount:cert-manager:cert-manager'",
		"v == 'cert-manager'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the stock rendering does not name %s", want)
		}
	}
	def, err := render(t)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(objects(t, out)), keys(objects(t, def)); !reflect.DeepEqual(got, want) {
		t.Errorf("the stock rendering holds %v, the default %v", got, want)
	}
}

// TestPoliciesChartGlobalIdentitiesWin: the umbrella chart's
// global.identities override the chart's own identities, key by key.
func TestPoliciesChartGlobalIdentitiesWin(t *testing.T) {
	out, err := render(t, "--set", "identities.certManager.namespace=own-cm", "--set", "global.identities.certManager.namespace=global-cm")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "'system:serviceaccount:global-cm:cert-manager'") || strings.Contains(out, "own-cm") {
		t.Error("global.identities.certManager.namespace did not win over identities.certManager.namespace, or the serviceAccount was lost")
	}
}

// TestPoliciesChartRefusesBadNames: a name that is not a namespace or
// ServiceAccount name (a quote would end the CEL string it is written into)
// is refused, through the schema and through global.identities alike.
func TestPoliciesChartRefusesBadNames(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"identities.flux.namespace=a'b", "does not match pattern"},
		{"identities.controllers.helm=X", "does not match pattern"},
		{"global.identities.flux.namespace=x' || true || '", `identities.flux.namespace "x' || true || '" is not a namespace name`},
		{"global.identities.certManager.serviceAccount=a b", `identities.certManager.serviceAccount "a b" is not a ServiceAccount name`},
	} {
		out, err := render(t, "--set", tc.set)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("--set %s: %v, want a refusal saying %q", tc.set, err, tc.want)
		}
	}
}
