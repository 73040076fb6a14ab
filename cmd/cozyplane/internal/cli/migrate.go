package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/migrate"
)

type migrateOptions struct {
	apply   bool
	timeout time.Duration
	output  string
}

func newMigrateCommand(root *Root) *cobra.Command {
	o := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Turn the HelmReleases written by upstream Cozystack's API into instances (plan, or --apply)",
		Long: `migrate lists every HelmRelease that upstream Cozystack's aggregated API wrote
(found by the labels apps.cozystack.io/application.kind and .group), in every
namespace or only in the one given with -n, and prints the instance each one
becomes and what blocks the migration. It changes nothing.

With --apply it refuses, and changes nothing, while a blocker stands: an
APIService that proxies apps.cozystack.io/v1alpha1 to a Service, a missing
ApplicationDefinition API, or a definition of a kind in use that is not Ready.
Otherwise it creates each instance (spec = the HelmRelease's values without
the keys starting with "_"; labels and annotations = the HelmRelease's
"apps.cozystack.io-" ones, un-prefixed; plus the adoption proof
apps.cozystack.io/adopt = the HelmRelease's uid) and waits until the helm
controller has adopted every HelmRelease (same uid, same generation, a
controller ownerReference to its instance).

HelmReleases whose name does not match their kind's prefix, whose kind no
definition serves, or whose instance already exists without the proof are
reported and left alone; they block nothing. Running it again, or after an
interrupted run, finishes the job and changes nothing else.

See docs/migration.md for the whole cutover.`,
		Example: `  # What would happen, everywhere
  cozyplane migrate

  # Only one tenant, for a script
  cozyplane migrate -n tenant-demo -o json

  # Do it and wait up to five minutes for the adoption
  cozyplane migrate --apply --timeout 5m`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), root)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.apply, "apply", false, "Create the instances and wait for their adoption (default: only print the plan).")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "With --apply: how long to wait for the helm controller to adopt the HelmReleases (0: do not wait).")
	bindOutput(f, &o.output)
	cmd.AddCommand(newReleaseStorageCommand(root))
	return cmd
}

func (o *migrateOptions) run(ctx context.Context, root *Root) error {
	ctx, client, ns, err := root.clusterCommand(ctx, o.output)
	if err != nil {
		return err
	}
	in, err := migrate.Gather(ctx, client, ns)
	if err != nil {
		return err
	}
	plan := migrate.Compute(in)
	if !o.apply {
		return o.print(root, &plan, false)
	}

	a := &migrate.Applier{Client: client, FieldManager: FieldManager, Timeout: o.timeout}
	if o.output == OutputText {
		a.Log = root.Streams.ErrOut
	}
	applyErr := a.Apply(ctx, &plan)
	var blocked *migrate.BlockedError
	if errors.As(applyErr, &blocked) {
		// The plan shows the blockers in context; the error names them again.
		if err := o.print(root, &plan, false); err != nil {
			return err
		}
		return applyErr
	}
	if err := o.print(root, &plan, true); err != nil {
		return err
	}
	return applyErr
}

func (o *migrateOptions) print(root *Root, plan *migrate.Plan, applied bool) error {
	if o.output == OutputText {
		return migrate.WriteText(root.Streams.Out, plan, applied)
	}
	return writeStructured(root.Streams.Out, o.output, plan)
}
