package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/releasestorage"
)

type releaseStorageOptions struct {
	apply  bool
	output string
}

func newReleaseStorageCommand(root *Root) *cobra.Command {
	o := &releaseStorageOptions{}
	cmd := &cobra.Command{
		Use:   "release-storage",
		Short: "Move Helm's release records of earlier HelmReleases out of the tenant's namespace (plan, or --apply)",
		Long: `release-storage lists the HelmReleases of instances (application labels and a
controller owner reference to apps.cozystack.io), in every namespace or only in
the one given with -n, whose Helm release records (Secrets
sh.helm.release.v1.<release>.v<N>) are still in the tenant's namespace, where the
tenant can write them: HelmReleases written before the helm controller named
the platform namespace cozy-helm-<namespace> as their spec.storageNamespace, or
by upstream Cozystack's API. Their instances report LegacyReleaseStorage. It
changes nothing.

With --apply it moves each one without helm-controller uninstalling the
release: it creates the platform namespace (labelled as the helm controller
labels it), copies every record there, clears status.storageNamespace and then,
on the HelmRelease version it read, sets spec.storageNamespace. If
helm-controller writes the HelmRelease in between, that HelmRelease starts over.
A release helm-controller is acting on (latest record pending or uninstalling)
is left for a later run. The records in the tenant's namespace stay where they
are (no longer read); the result prints the command that deletes them. Running
it again, or after an interrupted run, finishes the job.

Run it as a cluster administrator. See docs/helm-backend.md ("Release storage").`,
		Example: `  # What would move, everywhere
  cozyplane migrate release-storage

  # Move one tenant's
  cozyplane migrate release-storage -n tenant-demo --apply`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), root)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.apply, "apply", false, "Move the records (default: only print the plan).")
	bindOutput(f, &o.output)
	return cmd
}

func (o *releaseStorageOptions) run(ctx context.Context, root *Root) error {
	ctx, client, ns, err := root.clusterCommand(ctx, o.output)
	if err != nil {
		return err
	}
	plan, err := releasestorage.Gather(ctx, client, ns)
	if err != nil {
		return err
	}
	var applyErr error
	if o.apply {
		a := &releasestorage.Applier{Client: client, FieldManager: FieldManager}
		if o.output == OutputText {
			a.Log = root.Streams.ErrOut
		}
		applyErr = a.Apply(ctx, &plan)
	}
	if o.output == OutputText {
		if err := releasestorage.WriteText(root.Streams.Out, &plan, o.apply); err != nil {
			return err
		}
	} else if err := writeStructured(root.Streams.Out, o.output, &plan); err != nil {
		return err
	}
	return applyErr
}
