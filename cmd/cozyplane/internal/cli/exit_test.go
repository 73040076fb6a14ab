package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/migrate"
)

// TestExitCodes runs command lines and checks the status Execute would
// return, and that a usage error asks nothing of the cluster.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
		// offline: the command line is refused before any client is built.
		offline bool
	}{
		{"success", []string{"get", "-A"}, 0, false},
		{"one instance", []string{"get", "postgres", "orders", "-n", "tenant-a"}, 0, false},
		{"instance not found (get)", []string{"get", "postgres", "nope", "-n", "tenant-a"}, ExitNotFound, false},
		{"instance not found (trace)", []string{"trace", "postgres/nope", "-n", "tenant-a"}, ExitNotFound, false},
		{"kind not served", []string{"get", "mysql", "-n", "tenant-a"}, ExitNotFound, false},
		{"kind not served (reconcile)", []string{"reconcile", "mysql/a", "-n", "tenant-a"}, ExitNotFound, false},
		{"empty list is no error", []string{"get", "-n", "tenant-c"}, 0, false},
		{"selector matching nothing is no error", []string{"get", "postgres", "orders", "-n", "tenant-a", "-l", "team=none"}, 0, false},
		{"reconcile times out", []string{"reconcile", "postgres/orders", "-n", "tenant-a", "--timeout", "600ms"}, ExitTimeout, false},
		{"suspend times out", []string{"suspend", "postgres/orders", "-n", "tenant-a", "--timeout", "600ms"}, ExitTimeout, false},
		{"a refused operation is a failure", []string{"approve", "postgres/orders", "-n", "tenant-a"}, ExitFailure, false},
		{"unknown command", []string{"frobnicate"}, ExitUsage, true},
		{"unknown flag", []string{"get", "--frobnicate"}, ExitUsage, true},
		{"bad flag value", []string{"reconcile", "postgres/a", "--timeout", "soon"}, ExitUsage, true},
		{"too many arguments", []string{"get", "a", "b", "c"}, ExitUsage, true},
		{"missing argument", []string{"trace"}, ExitUsage, true},
		{"malformed KIND/NAME", []string{"trace", "orders"}, ExitUsage, true},
		{"unknown output", []string{"get", "-o", "xml"}, ExitUsage, true},
		{"unknown status", []string{"get", "--status", "sad"}, ExitUsage, true},
		{"bad selector", []string{"get", "-l", "a=(b"}, ExitUsage, true},
		{"name with -A", []string{"get", "postgres", "orders", "-A"}, ExitUsage, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd, _ := fakeRoot(t, &out, &errOut)
			if tc.offline {
				// A usage error must come before the cluster is read.
				cmd, _ = newRoot("cozyplane", Streams{Out: &out, ErrOut: &errOut})
				cmd.SetArgs(append(tc.args, "--kubeconfig", "/nonexistent"))
			} else {
				cmd.SetArgs(tc.args)
			}
			err := cmd.Execute()
			var printed bytes.Buffer
			got := exitWith(&printed, err)
			if got != tc.want {
				t.Errorf("exit %d, want %d (error: %v; out %s%s)", got, tc.want, err, out.String(), errOut.String())
			}
			if err != nil && printed.Len() == 0 {
				t.Errorf("nothing printed for %v", err)
			}
		})
	}
}

func TestMigrateTimeoutExit(t *testing.T) {
	if code := ExitCode(&migrate.IncompleteError{Failed: []string{"t/a: not adopted within 1s"}, TimedOut: true}); code != ExitTimeout {
		t.Errorf("timed out: %d", code)
	}
	if code := ExitCode(&migrate.IncompleteError{Failed: []string{"t/a: create failed"}}); code != ExitFailure {
		t.Errorf("failed: %d", code)
	}
}

func TestCheckExitIsSilent(t *testing.T) {
	var printed bytes.Buffer
	if code := exitWith(&printed, &ExitError{Code: ExitCheckFailed}); code != ExitCheckFailed || printed.Len() != 0 {
		t.Errorf("exit %d, printed %q", code, printed.String())
	}
}

func TestCheckPreExit(t *testing.T) {
	lists := map[schema.GroupVersionResource]string{
		{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList", {Group: "apps", Version: "v1", Resource: "daemonsets"}: "DaemonSetList",
		{Version: "v1", Resource: "namespaces"}: "NamespaceList", {Version: "v1", Resource: "secrets"}: "SecretList",
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}: "CustomResourceDefinitionList",
		{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}:            "HelmReleaseList",
	}
	for _, format := range []string{"text", "json"} {
		var out, errOut bytes.Buffer
		cmd, root := newRoot("cozyplane", Streams{Out: &out, ErrOut: &errOut})
		root.dynamic = func() (dynamic.Interface, error) {
			return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists), nil
		}
		cmd.SetArgs([]string{"check", "--pre", "--stock", "-o", format})
		err := cmd.Execute()
		if code := exitWith(&bytes.Buffer{}, err); code != ExitCheckFailed {
			t.Fatalf("%s: exit %d (%v)", format, code, err)
		}
		for _, want := range []string{"crds-flux", "crds-tofu-controller", "crds-cert-manager", "crds-gateway-api", "tlsroutes.gateway.networking.k8s.io is not installed",
			"identity-flux-helm-controller", "identity-tofu-controller", "identity-cert-manager", "no Flux helm-controller runs in the cluster"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, out.String())
			}
		}
	}
}
