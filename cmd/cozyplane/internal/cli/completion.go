package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

// Shell completion (cobra's `cozyplane completion bash|zsh|fish|powershell`)
// of kinds and names, read from the cluster the flags select.

// kindNames are the spellings completion offers: each kind's singular name.
func kindNames(served []ops.Resource) []string {
	out := make([]string, 0, len(served))
	for _, r := range served {
		n := r.Singular
		if n == "" {
			n = strings.ToLower(r.Kind)
		}
		out = append(out, n)
	}
	return out
}

// instanceNames are the names of the kind's objects in the namespace the
// flags select.
func instanceNames(ctx context.Context, root *Root, g *ops.Gatherer, res ops.Resource) ([]string, error) {
	ns, err := root.Kube.namespace()
	if err != nil {
		return nil, err
	}
	items, err := g.List(ctx, res.GVR(), ns, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, items[i].GetName())
	}
	return out, nil
}

// completeRef completes the one KIND/NAME argument: the kinds ("postgres/")
// until a slash is typed, then that kind's names ("postgres/orders").
func completeRef(root *Root, kinds func(*ops.Gatherer) ([]ops.Resource, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		g, err := root.Gatherer()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		served, err := kinds(g)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		kind, prefix, typed := strings.Cut(toComplete, "/")
		if !typed {
			var out []string
			for _, k := range kindNames(served) {
				out = append(out, k+"/")
			}
			return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		res, err := ops.MatchKind(kind, served)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := instanceNames(contextOf(cmd.Context()), root, g, res)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, kind+"/"+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeGet completes get's KIND, then NAME.
func completeGet(root *Root) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		g, err := root.Gatherer()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		served, err := g.InstanceKinds()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		if len(args) == 0 {
			return kindNames(served), cobra.ShellCompDirectiveNoFileComp
		}
		res, err := ops.MatchKind(args[0], served)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := instanceNames(contextOf(cmd.Context()), root, g, res)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
