package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func deployment(ns, name string, labels map[string]string, image string, replicas, ready int64) *unstructured.Unstructured {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "manager", "image": image},
			}}},
		},
		"status": map[string]any{"readyReplicas": ready},
	}}
	d.SetNamespace(ns)
	d.SetName(name)
	d.SetLabels(labels)
	return d
}

func runVersion(t *testing.T, client func() (dynamic.Interface, error), args ...string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	var out bytes.Buffer
	_, root := newRoot("cozyplane", Streams{Out: &out, ErrOut: &out})
	cmd := newVersionCommandWith(root, client)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersionReadsTheControllersDeployments(t *testing.T) {
	part := map[string]string{"app.kubernetes.io/part-of": "cozyplane"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range part {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	objs := []runtime.Object{
		deployment("cozy-system", "cozystack-helm", with(map[string]string{"app.kubernetes.io/component": "helm", "app.kubernetes.io/version": "1.2.3"}),
			"ghcr.io/cozyplane/helm:1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 2, 1),
		// An install from before the version label: the image's tag says it.
		deployment("cozy-system", "cozystack-appdef", with(map[string]string{"app.kubernetes.io/component": "appdef"}), "registry:5000/cozyplane/appdef:0.9.0", 1, 1),
		// Neither label nor tag: said so, not guessed.
		deployment("other", "custom", part, "registry:5000/appdef", 1, 0),
		// Not a cozyplane Deployment.
		deployment("cozy-system", "unrelated", map[string]string{"app.kubernetes.io/version": "9.9.9"}, "x:9.9.9", 1, 1),
	}
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deploymentsGVR: "DeploymentList"}, objs...)
	client := func() (dynamic.Interface, error) { return fake, nil }

	out, err := runVersion(t, client)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Client: dev (",
		"cozy-system  cozystack-appdef  appdef     0.9.0    1/1    registry:5000/cozyplane/appdef:0.9.0",
		"cozy-system  cozystack-helm    helm       1.2.3    1/2    ghcr.io/cozyplane/helm:1.2.3@sha256:",
		"other        custom                       unknown  0/1    registry:5000/appdef\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unrelated") {
		t.Errorf("output names a Deployment without %s:\n%s", partOfSelector, out)
	}

	out, err = runVersion(t, client, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v Versions
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if v.Client.Version != "dev" || len(v.Controllers) != 3 || v.Controllers[1].Version != "1.2.3" || v.Controllers[1].Ready != "1/2" {
		t.Errorf("json: %+v", v)
	}
}

func TestVersionClientOnlyAndUnreachable(t *testing.T) {
	called := false
	broken := func() (dynamic.Interface, error) { called = true; return nil, errors.New("connection refused") }
	out, err := runVersion(t, broken, "--client")
	if err != nil || called || !strings.HasPrefix(out, "Client: dev (") || strings.Contains(out, "Controllers") {
		t.Errorf("--client: err %v, cluster contacted %v, output:\n%s", err, called, out)
	}
	out, err = runVersion(t, broken)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("unreachable cluster: err %v", err)
	}
	if !strings.HasPrefix(out, "Client: dev (") || !strings.Contains(out, "Controllers: unknown") {
		t.Errorf("unreachable cluster: output:\n%s", out)
	}
}

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"ghcr.io/cozyplane/helm:1.2.3":                  "1.2.3",
		"registry:5000/cozyplane/helm":                  "",
		"registry:5000/cozyplane/helm:0.1.0@sha256:abc": "0.1.0",
		"ghcr.io/cozyplane/helm@sha256:abc":             "",
		"helm":                                          "",
	} {
		if got := imageTag(image); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", image, got, want)
		}
	}
}
