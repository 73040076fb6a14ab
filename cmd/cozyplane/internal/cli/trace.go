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

-o json or -o yaml prints the same tree as data: each object is
{kind, namespace, name, condition, status, reason, message, notes, children},
condition being the type shown (Ready unless named otherwise), status True,
False or Unknown (absent when the object reports none), namespace absent for
a cluster-scoped object, notes and children absent when empty.`,
		Example: `  cozyplane trace postgres/orders -n tenant-demo
  cozyplane trace postgres/orders -n tenant-demo -o json | jq -r '.. | objects | select(.status == "False") | .kind + " " + .name'
  cozyplane trace tgw/cozystack -n tenant-root`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			ctx := contextOf(cmd.Context())
			t, err := resolve(ctx, root, args[0], (*ops.Gatherer).TraceKinds)
			if err != nil {
				return err
			}
			tree := traceTree(ctx, t)
			if output != OutputText {
				return writeStructured(root.Streams.Out, output, ops.Normalize(tree))
			}
			return ops.Render(root.Streams.Out, tree, useColor(root.Streams.Out, noColor))
		},
	}
	cmd.Flags().BoolVar(&noColor, "no-color", false, "Plain output, even on a terminal.")
	bindOutput(cmd.Flags(), &output)
	cmd.ValidArgsFunction = completeRef(root, (*ops.Gatherer).TraceKinds)
	return cmd
}

func traceTree(ctx context.Context, t *target) *ops.Node {
	if t.res.Group == ops.GatewayGroup && t.res.Kind == ops.TenantGatewayKind {
		return ops.GatewayTree(t.g.TraceGateway(ctx, t.obj))
	}
	return ops.InstanceTree(t.g.TraceInstance(ctx, t.obj))
}
