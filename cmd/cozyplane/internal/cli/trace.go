package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

func newTraceCommand(root *Root) *cobra.Command {
	var noColor bool
	var output string
	cmd := &cobra.Command{
		Use:   "trace KIND/NAME",
		Short: "Show what an instance or a TenantGateway became, with each object's status",
		Long: `trace follows an instance to its backing object (HelmRelease or Terraform;
for Terraform also the pending plan and the outputs Secret), or a
TenantGateway (tgw/NAME) to its Gateway and listeners, Issuer, Certificates,
attached namespaces and the routes with their verdicts. Each line shows one
object, the condition that says whether it is healthy, and its message.

Colour on a terminal; plain text otherwise or with --no-color (or NO_COLOR).

-o wide adds, for an instance, the chart or module source below the backing
object (a HelmRelease's HelmChart or chartRef, a Terraform object's
sourceRef: OCIRepository, HelmChart, GitRepository, ...) with its Ready and
artifact revision, the instance's Pods (selected by the lineage labels
apps.cozystack.io/application.group, .kind and .name) with their Ready,
phase and containers, and the last 5 events of the instance and of its
backing object as notes.

-o json or -o yaml prints the tree (as without -o wide) as data: each object is
{kind, namespace, name, condition, status, reason, message, notes, children},
condition being the type shown (Ready unless named otherwise), status True,
False or Unknown (absent when the object reports none), namespace absent for
a cluster-scoped object, notes and children absent when empty.`,
		Example: `  cozyplane trace postgres/orders -n tenant-demo
  cozyplane trace postgres/orders -n tenant-demo -o json | jq -r '.. | objects | select(.status == "False") | .kind + " " + .name'
  cozyplane trace tgw/cozystack -n tenant-root`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != OutputWide {
				if err := checkOutput(output); err != nil {
					return usageErrorf("unknown output format %q: use text, wide, json or yaml", output)
				}
			}
			ctx := contextOf(cmd.Context())
			t, err := resolve(ctx, root, args[0], (*ops.Gatherer).TraceKinds)
			if err != nil {
				return err
			}
			tree := traceTree(ctx, t, output == OutputWide)
			if output == OutputJSON || output == OutputYAML {
				return writeStructured(root.Streams.Out, output, ops.Normalize(tree))
			}
			return ops.Render(root.Streams.Out, tree, useColor(root.Streams.Out, noColor))
		},
	}
	cmd.Flags().BoolVar(&noColor, "no-color", false, "Plain output, even on a terminal.")
	bindOutput(cmd.Flags(), &output)
	cmd.Flags().Lookup("output").Usage = "Output format: text, wide (with the source, Pods and latest events), json or yaml."
	cmd.ValidArgsFunction = completeRef(root, (*ops.Gatherer).TraceKinds)
	return cmd
}

// OutputWide is trace's text output with the source, the Pods and the
// latest events.
const OutputWide = "wide"

func traceTree(ctx context.Context, t *target, wide bool) *ops.Node {
	if t.res.Group == ops.GatewayGroup && t.res.Kind == ops.TenantGatewayKind {
		return ops.GatewayTree(t.g.TraceGateway(ctx, t.obj))
	}
	it := t.g.TraceInstance(ctx, t.obj)
	if wide {
		return ops.WideInstanceTree(it, t.g.TraceWide(ctx, it))
	}
	return ops.InstanceTree(it)
}
