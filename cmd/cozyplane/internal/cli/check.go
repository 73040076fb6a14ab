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
	var pre, stock bool
	ids := check.CozystackIdentities
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the cluster configuration tenant isolation depends on (Flux, ingress-nginx snippets, policies, quotas), the controllers and CRDs",
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
  controllers                    each controller the charts deployed (a
                                 Deployment labelled
                                 app.kubernetes.io/part-of=cozyplane) is
                                 Available with a ready replica
  crds-cozyplane, crds-flux,     the CRDs the deployed components work with
  crds-tofu-controller,          (by each Deployment's
  crds-cert-manager,             app.kubernetes.io/component label; all of
  crds-gateway-api               them when none is found) are installed at
                                 the versions below; the others pass as not
                                 needed

With --pre it checks instead what the platform needs before its charts are
installed (an empty cluster names every missing piece):

  crds-flux                      HelmRelease v2, HelmChart v1
  crds-tofu-controller           Terraform infra.contrib.fluxcd.io/v1alpha2
  crds-cert-manager              Issuer and Certificate cert-manager.io/v1
  crds-gateway-api               Gateway, HTTPRoute and TLSRoute
                                 gateway.networking.k8s.io/v1
  identity-flux-helm-controller  helm-controller, tofu-controller and
  identity-tofu-controller       cert-manager run, as the ServiceAccounts the
  identity-cert-manager          policies trust (Cozystack's layout; --stock
                                 or --flux-namespace, --tofu-namespace,
                                 --cert-manager-namespace for another)
  cozystack-values               every tenant namespace, and every namespace
                                 with an instance's HelmRelease, has the
                                 Secret cozystack-values

Exit status: 0 when every check passes, 2 when one fails, 3 when none fails
but one could not be decided, 1 when the cluster cannot be read at all.`,
		Example: `  cozyplane check
  cozyplane check -o json | jq '.checks[] | select(.verdict != "pass")'
  cozyplane check --pre                  # before installing the charts
  cozyplane check --pre --stock          # beside a stock Flux and cert-manager`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if stock {
				def := check.CozystackIdentities
				for _, f := range []struct {
					flag      string
					value     *string
					cozystack string
					stock     string
				}{
					{"flux-namespace", &ids.FluxNamespace, def.FluxNamespace, check.StockIdentities.FluxNamespace},
					{"tofu-namespace", &ids.TofuNamespace, def.TofuNamespace, check.StockIdentities.TofuNamespace},
					{"cert-manager-namespace", &ids.CertManagerNamespace, def.CertManagerNamespace, check.StockIdentities.CertManagerNamespace},
				} {
					if !cmd.Flags().Changed(f.flag) {
						*f.value = f.stock
					}
				}
				ids.FluxAllInOne = check.StockIdentities.FluxAllInOne
			}
			return runCheck(contextOf(cmd.Context()), root, output, check.Options{TenantPrefix: prefix, Identities: ids}, pre)
		},
	}
	bindOutput(cmd.Flags(), &output)
	f := cmd.Flags()
	f.StringVar(&prefix, "tenant-prefix", "tenant-", "Names of tenant namespaces start with this.")
	f.BoolVar(&pre, "pre", false, "Check what the platform needs before its charts are installed: CRDs and versions, the identities of Flux, tofu-controller and cert-manager, cozystack-values.")
	f.BoolVar(&stock, "stock", false, "With --pre: the policies trust a stock Flux, tofu-controller and cert-manager (charts/policies/values-stock.yaml: flux-system, cert-manager), not Cozystack's layout.")
	f.StringVar(&ids.FluxNamespace, "flux-namespace", ids.FluxNamespace, "With --pre: the namespace the policies trust Flux in (identities.flux.namespace).")
	f.StringVar(&ids.TofuNamespace, "tofu-namespace", ids.TofuNamespace, "With --pre: the namespace the policies trust tofu-controller in (identities.tofuController.namespace).")
	f.StringVar(&ids.CertManagerNamespace, "cert-manager-namespace", ids.CertManagerNamespace, "With --pre: the namespace the policies trust cert-manager in (identities.certManager.namespace).")
	return cmd
}

func runCheck(ctx context.Context, root *Root, output string, o check.Options, pre bool) error {
	c, err := root.Dynamic()
	if err != nil {
		return err
	}
	run := check.Run
	if pre {
		run = check.RunPre
	}
	report := run(ctx, c, o)
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
