package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

func newEventsCommand(root *Root) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "events KIND/NAME",
		Short: "Show the events of an instance and of its backing object (or of a TenantGateway and its Gateway)",
		Long: `events lists the Kubernetes Events recorded about an instance and about its
backing object (the HelmRelease or Terraform object its status.backend names,
where helm-controller and tofu-controller record theirs), or about a
TenantGateway (tgw/NAME) and its Gateway, oldest first: how long ago, type,
reason, object and message.

-o json or -o yaml prints the Event objects as the API server returns them, in
a List (apiVersion v1, kind List, items).`,
		Example: `  cozyplane events postgres/orders -n tenant-demo
  cozyplane events postgres/orders -n tenant-demo -o json | jq -r '.items[] | select(.type == "Warning") | .message'`,
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
			return runEvents(ctx, root, t, output)
		},
	}
	bindOutput(cmd.Flags(), &output)
	cmd.ValidArgsFunction = completeRef(root, (*ops.Gatherer).TraceKinds)
	return cmd
}

// eventSubjects are the objects whose events `events` shows for t.
func eventSubjects(t *target) []ops.ObjectRef {
	self := ops.ObjectRef{Kind: t.obj.GetKind(), Namespace: t.obj.GetNamespace(), Name: t.obj.GetName()}
	out := []ops.ObjectRef{self}
	if t.res.Group == ops.GatewayGroup && t.res.Kind == ops.TenantGatewayKind {
		return append(out, ops.ObjectRef{Kind: "Gateway", Namespace: self.Namespace, Name: self.Name})
	}
	if ref, ok := ops.BackingRef(t.obj); ok {
		out = append(out, ref)
	}
	return out
}

func runEvents(ctx context.Context, root *Root, t *target, output string) error {
	items, err := t.g.Events(ctx, eventSubjects(t))
	if err != nil {
		return err
	}
	if output != OutputText {
		objs := make([]map[string]any, 0, len(items))
		for i := range items {
			objs = append(objs, items[i].Object)
		}
		return writeStructured(root.Streams.Out, output, map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	}
	if len(items) == 0 {
		say(root.Streams.ErrOut, "No events found for %s.", t)
		return nil
	}
	tw := tabwriter.NewWriter(root.Streams.Out, 0, 4, 3, ' ', 0)
	for _, line := range ops.FormatEvents(items, time.Now()) {
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
