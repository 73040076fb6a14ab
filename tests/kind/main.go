// Command kind writes the configuration of the kind cluster that
// `make e2e-kind` runs the e2e suite on, for users with Docker. The kind CLI
// comes from the same module version (`go tool kind`), so the configuration
// and the node image are pinned together.
//
//	go run . config [--name NAME]   print the cluster configuration (YAML)
//	go run . image                  print the node image
package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

// Config is the e2e cluster: one control-plane node and one worker of the
// kind release's default node image. Everything the suite relies on is on by
// default there: the RBAC authorizer, the NamespaceLifecycle and
// ValidatingAdmissionPolicy admission plugins.
func Config(name string) *v1alpha4.Cluster {
	c := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{APIVersion: "kind.x-k8s.io/v1alpha4", Kind: "Cluster"},
		Name:     name,
		Nodes: []v1alpha4.Node{
			{Role: v1alpha4.ControlPlaneRole, Image: defaults.Image},
			{Role: v1alpha4.WorkerRole, Image: defaults.Image},
		},
	}
	return c
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kind config [--name NAME] | image")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "config":
		fs := flag.NewFlagSet("config", flag.ExitOnError)
		name := fs.String("name", "cozyplane-e2e", "cluster name")
		_ = fs.Parse(os.Args[2:])
		out, err := yaml.Marshal(Config(*name))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(out)
	case "image":
		fmt.Println(defaults.Image)
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}
