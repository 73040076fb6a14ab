package main

import (
	"regexp"
	"strconv"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// TestConfigLoads checks the generated YAML the way kind reads it: strictly
// (an unknown or misspelt field fails), then defaulted by kind's own code.
func TestConfigLoads(t *testing.T) {
	out, err := yaml.Marshal(Config("e2e"))
	if err != nil {
		t.Fatal(err)
	}
	var c v1alpha4.Cluster
	if err := yaml.UnmarshalStrict(out, &c); err != nil {
		t.Fatalf("kind would reject the configuration: %v\n%s", err, out)
	}
	v1alpha4.SetDefaultsCluster(&c)
	if c.APIVersion != "kind.x-k8s.io/v1alpha4" || c.Kind != "Cluster" || c.Name != "e2e" {
		t.Errorf("type or name wrong: %s %s %s", c.APIVersion, c.Kind, c.Name)
	}
	var planes, workers int
	for _, n := range c.Nodes {
		switch n.Role {
		case v1alpha4.ControlPlaneRole:
			planes++
		case v1alpha4.WorkerRole:
			workers++
		}
		if n.Image == "" {
			t.Errorf("node %s has no image", n.Role)
		}
	}
	if planes != 1 || workers < 1 {
		t.Errorf("want one control plane and a worker, got %d and %d", planes, workers)
	}
	if c.Networking.IPFamily != v1alpha4.IPv4Family || c.Networking.APIServerAddress != "127.0.0.1" {
		t.Errorf("defaults not applied: %+v", c.Networking)
	}
}

// TestNodeImageServesTheSuite: the suite needs ValidatingAdmissionPolicy v1
// (Kubernetes 1.30+) and TLSRoute v1 CRDs (any version with CEL).
func TestNodeImageServesTheSuite(t *testing.T) {
	m := regexp.MustCompile(`^kindest/node:v1\.(\d+)\.\d+@sha256:[0-9a-f]{64}$`).FindStringSubmatch(Config("x").Nodes[0].Image)
	if m == nil {
		t.Fatalf("node image %q is not a pinned kindest/node", Config("x").Nodes[0].Image)
	}
	if minor, _ := strconv.Atoi(m[1]); minor < 30 {
		t.Errorf("node image is Kubernetes 1.%d; the admission policies need 1.30 or later", minor)
	}
}
