package cli

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

func newGetCommand(root *Root) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "get [KIND]",
		Short: "List instances of every kind (or of one kind) with Ready, reason, age and backing object",
		Long: `get lists the instances of every kind an ApplicationDefinition serves (or of
the one KIND given: kind, plural, singular or short name), in the namespace of
-n or of the context, or in all namespaces with -A. Each line shows the
instance's Ready status and reason, whether it is suspended, its age, and the
backing object (HelmRelease or Terraform) its status names.`,
		Example: `  cozyplane get -A
  cozyplane get postgres -n tenant-demo`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGet(contextOf(cmd.Context()), root, args, all)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List instances in every namespace.")
	return cmd
}

func runGet(ctx context.Context, root *Root, args []string, all bool) error {
	g, err := root.Kube.Gatherer()
	if err != nil {
		return err
	}
	ns := ""
	if !all {
		if ns, err = root.Kube.namespace(); err != nil {
			return err
		}
	}
	kinds, err := g.InstanceKinds()
	if err != nil {
		return err
	}
	if len(args) == 1 {
		res, err := ops.MatchKind(args[0], kinds)
		if err != nil {
			return err
		}
		kinds = []ops.Resource{res}
	}
	var items []unstructured.Unstructured
	for _, k := range kinds {
		list, err := g.List(ctx, k.GVR(), ns, metav1.ListOptions{})
		if apierrors.IsNotFound(err) && len(args) == 0 {
			// Its definition went away since discovery: no longer a kind.
			continue
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", k.Plural, err)
		}
		items = append(items, list...)
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		if a.GetKind() != b.GetKind() {
			return a.GetKind() < b.GetKind()
		}
		return a.GetName() < b.GetName()
	})
	if len(items) == 0 {
		where := "namespace " + ns
		if all {
			where = "any namespace"
		}
		say(root.Streams.ErrOut, "No instances found in %s.", where)
		return nil
	}
	tw := tabwriter.NewWriter(root.Streams.Out, 0, 4, 3, ' ', 0)
	for _, line := range ops.FormatRows(ops.Rows(items, time.Now()), all) {
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
