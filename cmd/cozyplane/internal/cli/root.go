// Package cli holds cozyplane's commands. Each command is a small cobra
// command over a package that decides with pure functions; this package
// only wires flags, clients and output.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

// FieldManager names cozyplane's writes.
const FieldManager = "cozyplane"

// Streams are where a command reads and writes.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Kube holds the kubeconfig flags, loaded the way kubectl loads them:
// KUBECONFIG (or ~/.kube/config), --kubeconfig, --context, -n/--namespace
// and the other override flags.
type Kube struct {
	loading   *clientcmd.ClientConfigLoadingRules
	overrides *clientcmd.ConfigOverrides
	flags     *pflag.FlagSet
	config    clientcmd.ClientConfig
}

func newKube(flags *pflag.FlagSet) *Kube {
	k := &Kube{
		loading:   clientcmd.NewDefaultClientConfigLoadingRules(),
		overrides: &clientcmd.ConfigOverrides{},
		flags:     flags,
	}
	flags.StringVar(&k.loading.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use (default: $KUBECONFIG, then ~/.kube/config).")
	clientcmd.BindOverrideFlags(k.overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	k.config = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.loading, k.overrides)
	return k
}

// RESTConfig is the client configuration the flags select.
func (k *Kube) RESTConfig() (*rest.Config, error) {
	cfg, err := k.config.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.UserAgent = "cozyplane/" + rest.DefaultKubernetesUserAgent()
	return cfg, nil
}

// Dynamic is a dynamic client for the selected cluster.
func (k *Kube) Dynamic() (dynamic.Interface, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// Namespace returns the namespace set with -n/--namespace, and whether it
// was set. Commands that span the cluster by default (migrate) use all
// namespaces when it was not.
func (k *Kube) Namespace() (string, bool, error) {
	if f := k.flags.Lookup("namespace"); f != nil && f.Changed {
		return f.Value.String(), true, nil
	}
	ns, _, err := k.config.Namespace()
	return ns, false, err
}

// clusterCommand is what a cluster-spanning command starts from: its output
// format checked, a context, and its client and namespace (Kube.ClusterScope).
func (r *Root) clusterCommand(ctx context.Context, output string) (context.Context, dynamic.Interface, string, error) {
	if err := checkOutput(output); err != nil {
		return nil, nil, "", err
	}
	client, ns, err := r.Kube.ClusterScope()
	return contextOf(ctx), client, ns, err
}

// ClusterScope is a dynamic client and the namespace a cluster-spanning
// command (migrate and its subcommands) works in: the one -n/--namespace
// names, or "" (all namespaces) when it was not given.
func (k *Kube) ClusterScope() (dynamic.Interface, string, error) {
	client, err := k.Dynamic()
	if err != nil {
		return nil, "", err
	}
	ns, set, err := k.Namespace()
	if err != nil {
		return nil, "", err
	}
	if !set {
		ns = ""
	}
	return client, ns, nil
}

// Root is the shared state of every command.
type Root struct {
	Streams Streams
	Kube    *Kube
	// gatherer reads the cluster (Kube.Gatherer; tests give a fake).
	gatherer func() (*ops.Gatherer, error)
	// dynamic is the client of check (Kube.Dynamic; tests give a fake).
	dynamic func() (dynamic.Interface, error)
}

// Dynamic is a dynamic client for the selected cluster.
func (r *Root) Dynamic() (dynamic.Interface, error) {
	if r.dynamic != nil {
		return r.dynamic()
	}
	return r.Kube.Dynamic()
}

// Gatherer is the reader of the selected cluster.
func (r *Root) Gatherer() (*ops.Gatherer, error) {
	if r.gatherer != nil {
		return r.gatherer()
	}
	return r.Kube.Gatherer()
}

// NewRootCommand builds the command tree. name is how the binary was called:
// as kubectl-cozyplane (a kubectl plugin, `kubectl cozyplane ...`), help
// says so.
func NewRootCommand(name string, streams Streams) *cobra.Command {
	cmd, _ := newRoot(name, streams)
	return cmd
}

func newRoot(name string, streams Streams) (*cobra.Command, *Root) {
	cmd := &cobra.Command{
		Use:   "cozyplane",
		Short: "Operate cozyplane: list, trace, reconcile, suspend and resume instances, approve plans, migrate from Cozystack",
		Long: `cozyplane operates a cluster running cozyplane's controllers: it lists
instances (get), shows what an instance or a TenantGateway became (trace)
and what was recorded about it (events), asks for a reconcile, suspends and resumes instances, approves Terraform plans,
and migrates a Cozystack cluster's applications (migrate). Each operation on an
instance is an annotation that plain kubectl can write as well (docs/cli.md).

It reads the kubeconfig like kubectl does (KUBECONFIG, --kubeconfig, --context,
-n/--namespace). Installed as kubectl-cozyplane on the PATH, it is also the
kubectl plugin "kubectl cozyplane".

Exit status: 0 done, 1 failed, 2 and 3 check's verdicts, 4 not found,
5 timed out, 64 a wrong command line (docs/cli.md, "Exit codes").`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if strings.HasPrefix(filepath.Base(name), "kubectl-") {
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl cozyplane"}
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root := &Root{Streams: streams, Kube: newKube(cmd.PersistentFlags())}
	cmd.AddCommand(newMigrateCommand(root), newGetCommand(root), newTraceCommand(root), newReconcileCommand(root),
		newSuspendCommand(root, true), newSuspendCommand(root, false), newApproveCommand(root), newCheckCommand(root),
		newEventsCommand(root))
	cmd.AddCommand(newVersionCommand(root))
	completeOutput(cmd)
	return cmd, root
}

// Execute runs the command tree on os.Args and returns the exit code.
func Execute() int {
	streams := Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := NewRootCommand(os.Args[0], streams)
	return exitWith(streams.ErrOut, cmd.Execute())
}

// exitWith prints err (unless the command printed its outcome already) and
// returns its exit code.
func exitWith(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var exit *ExitError
	if !errors.As(err, &exit) {
		fmt.Fprintln(w, "error:", err)
	}
	return ExitCode(err)
}

// Output formats of commands that print objects.
const (
	OutputText = "text"
	OutputJSON = "json"
	OutputYAML = "yaml"
)

func bindOutput(flags *pflag.FlagSet, out *string) {
	flags.StringVarP(out, "output", "o", OutputText, "Output format: text, json or yaml.")
}

// completeOutput completes -o on every command that has it.
func completeOutput(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		if c.Flags().Lookup("output") != nil {
			formats := []string{OutputText, OutputJSON, OutputYAML}
			if c.Name() == "trace" {
				formats = []string{OutputText, OutputWide, OutputJSON, OutputYAML}
			}
			_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
		}
		completeOutput(c)
	}
}

func checkOutput(out string) error {
	switch out {
	case OutputText, OutputJSON, OutputYAML:
		return nil
	}
	return usageErrorf("unknown output format %q: use text, json or yaml", out)
}

// writeStructured prints v as indented JSON or as YAML.
func writeStructured(w io.Writer, format string, v any) error {
	var b []byte
	var err error
	if format == OutputJSON {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
