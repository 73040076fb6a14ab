package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/check"
)

func newCheckCommand(root *Root) *cobra.Command {
	var output, prefix string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the cluster configuration tenant isolation depends on (Flux, ingress-nginx snippets, policies, quotas)",
		Long: `check reads the cluster and says, for each configuration that tenant
isolation depends on but the platform cannot set itself, pass, fail or unknown,
with the exact configuration that closes a gap (docs/security.md, "Residual
risks"):

  flux-helm-controller           Flux's helm-controller can install the
                                 platform's HelmReleases: no
                                 --no-cross-namespace-refs=true, no
                                 --default-service-account (tenants' own
                                 HelmReleases are confined by an admission
                                 policy instead)
  ingress-nginx-snippets         every ingress-nginx controller refuses snippet
                                 annotations (allow-snippet-annotations "false",
                                 annotations-risk-level below Critical)
  admission-policies             the platform's admission policies are
                                 installed, fail closed and deny
  tenant-quotas                  every tenant namespace has an enforced
                                 instance quota

Exit status: 0 when every check passes, 2 when one fails, 3 when none fails
but one could not be decided, 1 when the cluster cannot be read at all.`,
		Example: `  cozyplane check
  cozyplane check -o json | jq '.checks[] | select(.verdict != "pass")'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			return runCheck(contextOf(cmd.Context()), root, output, prefix)
		},
	}
	bindOutput(cmd.Flags(), &output)
	cmd.Flags().StringVar(&prefix, "tenant-prefix", "tenant-", "Names of tenant namespaces start with this.")
	return cmd
}

func runCheck(ctx context.Context, root *Root, output, prefix string) error {
	c, err := root.Kube.Dynamic()
	if err != nil {
		return err
	}
	report := check.Run(ctx, c, check.Options{TenantPrefix: prefix})
	if output == OutputText {
		err = writeCheckText(root.Streams.Out, report)
	} else {
		err = writeStructured(root.Streams.Out, output, report)
	}
	if err != nil {
		return err
	}
	return CheckExit(report)
}

// CheckExit is the command's outcome for a report: nil when every check
// passed, else an ExitError with ExitCheckFailed or ExitCheckUnknown.
func CheckExit(r check.Report) error {
	switch r.Verdict {
	case check.Fail:
		return &ExitError{Code: ExitCheckFailed}
	case check.Unknown:
		return &ExitError{Code: ExitCheckUnknown}
	}
	return nil
}

func writeCheckText(w io.Writer, r check.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tVERDICT\tDETAIL")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Verdict, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Checks {
		if c.Fix != "" {
			if _, err := fmt.Fprintf(w, "\n%s (%s): %s\n", c.Name, c.Verdict, c.Fix); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict)
	return err
}
