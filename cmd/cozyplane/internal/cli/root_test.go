package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/check"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: one
  context: {cluster: c, user: u, namespace: from-context}
- name: two
  context: {cluster: c, user: u}
current-context: one
`

func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := NewRootCommand(name, Streams{Out: &out, ErrOut: &out})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestPluginNameInHelp(t *testing.T) {
	out, err := run(t, "/usr/local/bin/kubectl-cozyplane", "migrate", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kubectl cozyplane migrate [flags]") {
		t.Errorf("help as a plugin:\n%s", out)
	}
	out, _ = run(t, "cozyplane", "migrate", "--help")
	if !strings.Contains(out, "cozyplane migrate [flags]") || strings.Contains(out, "kubectl cozyplane") {
		t.Errorf("help as a binary:\n%s", out)
	}
	for _, flag := range []string{"--kubeconfig", "--context", "-n, --namespace", "--apply", "--timeout", "-o, --output"} {
		if !strings.Contains(out, flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}

func TestUnknownOutputIsRefusedBeforeAnyRequest(t *testing.T) {
	_, err := run(t, "cozyplane", "migrate", "-o", "xml", "--kubeconfig", "/nonexistent")
	if err == nil || !strings.Contains(err.Error(), `unknown output format "xml"`) {
		t.Errorf("got %v", err)
	}
}

func TestKubeconfigLikeKubectl(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env    string
		args   []string
		ns     string
		set    bool
		server string
	}{
		{args: []string{"--kubeconfig", path}, ns: "from-context"},
		{env: path, ns: "from-context"},
		{env: path, args: []string{"--context", "two"}, ns: "default"},
		{env: path, args: []string{"-n", "tenant-a"}, ns: "tenant-a", set: true},
		{env: path, args: []string{"--namespace=tenant-b", "--server", "https://10.0.0.1"}, ns: "tenant-b", set: true, server: "https://10.0.0.1"},
	} {
		t.Setenv("KUBECONFIG", tt.env)
		cmd, root := newRoot("cozyplane", Streams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
		if err := cmd.PersistentFlags().Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		k := root.Kube
		ns, set, err := k.Namespace()
		if err != nil || ns != tt.ns || set != tt.set {
			t.Errorf("%v %v: namespace %q set %v (%v), want %q %v", tt.env, tt.args, ns, set, err, tt.ns, tt.set)
		}
		cfg, err := k.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		want := "https://127.0.0.1:1"
		if tt.server != "" {
			want = tt.server
		}
		if cfg.Host != want || cfg.BearerToken != "t" || !strings.HasPrefix(cfg.UserAgent, "cozyplane/") {
			t.Errorf("config %s %q %s", cfg.Host, cfg.BearerToken, cfg.UserAgent)
		}
	}
}

func TestOperationCommandsHelp(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"get":       {"cozyplane get [KIND [NAME]] [flags]", "-A, --all-namespaces", "-l, --selector", "--status", "-w, --watch", "-o, --output"},
		"trace":     {"cozyplane trace KIND/NAME [flags]", "--no-color", "tgw/NAME", "-o, --output"},
		"reconcile": {"--timeout", "kubectl annotate --overwrite KIND NAME reconcile.fluxcd.io/requestedAt="},
		"suspend":   {"kubectl annotate KIND NAME apps.cozystack.io/suspend=true"},
		"resume":    {"kubectl annotate KIND NAME apps.cozystack.io/suspend-"},
		"approve":   {"apps.cozystack.io/approve-plan", "status.backend.pendingPlan"},
	} {
		out, err := run(t, "cozyplane", cmd, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, w, out)
			}
		}
	}
}

func TestMalformedReferenceIsRefusedBeforeAnyRequest(t *testing.T) {
	for _, cmd := range []string{"trace", "reconcile", "suspend", "resume", "approve"} {
		_, err := run(t, "cozyplane", cmd, "orders", "--kubeconfig", "/nonexistent")
		if err == nil || !strings.Contains(err.Error(), `"orders" is not KIND/NAME`) {
			t.Errorf("%s: got %v", cmd, err)
		}
	}
}

func TestCheckExitCodes(t *testing.T) {
	for v, want := range map[check.Verdict]int{check.Pass: 0, check.Fail: ExitCheckFailed, check.Unknown: ExitCheckUnknown} {
		err := CheckExit(check.Report{Verdict: v})
		got := 0
		var exit *ExitError
		if errors.As(err, &exit) {
			got = exit.Code
		}
		if got != want {
			t.Errorf("%s: exit %d, want %d", v, got, want)
		}
	}
}
