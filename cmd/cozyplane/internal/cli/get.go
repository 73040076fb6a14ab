package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

type getOptions struct {
	all      bool
	output   string
	selector string
	status   string
	watch    bool
}

func newGetCommand(root *Root) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get [KIND [NAME]]",
		Short: "List instances of every kind (or of one kind) with Ready, reason, age, backing object and message",
		Long: `get lists the instances of every kind an ApplicationDefinition serves (or of
the one KIND given: kind, plural, singular or short name; or the one instance
KIND NAME, also written KIND/NAME), in the namespace of -n or of the context,
or in all namespaces with -A. Each line shows the instance's Ready status and
reason, whether it is suspended, its age, the backing object (HelmRelease or
Terraform) its status names, and Ready's message.

-l selects by label (as kubectl's -l); --status by state: ready (Ready=True),
not-ready (Ready=False), unknown (Ready=Unknown or not reported yet),
suspended (the Suspended condition is True).

-o json or -o yaml prints the instances as the API server returns them: a
List (apiVersion v1, kind List, items) or, for KIND NAME, the one object.
--watch keeps printing a line for each change after the list (until
interrupted); with -o json each change is one line, a watch event
{"type": "ADDED|MODIFIED|DELETED", "object": {...}}, the listed instances
first as ADDED; with -o yaml the same events as YAML documents.`,
		Example: `  cozyplane get -A
  cozyplane get postgres -n tenant-demo
  cozyplane get -A --status not-ready
  cozyplane get -A -o json | jq -r '.items[] | select(.status.conditions[]? | .type == "Ready" and .status != "True") | .metadata.name'
  cozyplane get postgres orders -n tenant-demo --watch`,
		Args: usageArgs(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(contextOf(cmd.Context()), root, args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.all, "all-namespaces", "A", false, "List instances in every namespace.")
	f.StringVarP(&o.selector, "selector", "l", "", "Label selector, as kubectl's (app=a,tier!=db).")
	f.StringVar(&o.status, "status", "", "Only instances in this state: "+strings.Join(ops.Statuses, ", ")+".")
	f.BoolVarP(&o.watch, "watch", "w", false, "After the list, print each change until interrupted.")
	bindOutput(f, &o.output)
	cmd.ValidArgsFunction = completeGet(root)
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(ops.Statuses, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// getQuery is what get lists, resolved from its arguments.
type getQuery struct {
	kinds []ops.Resource
	// one: KIND NAME was given.
	one  string
	ns   string
	opts metav1.ListOptions
}

func (o *getOptions) validate(args []string) ([]string, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	if err := ops.CheckStatus(o.status); err != nil {
		return nil, err
	}
	if o.selector != "" {
		if _, err := labels.Parse(o.selector); err != nil {
			return nil, usageErrorf("-l %q: %v", o.selector, err)
		}
	}
	if len(args) == 1 && strings.Contains(args[0], "/") {
		ref, err := ops.ParseRef(args[0])
		if err != nil {
			return nil, err
		}
		args = []string{ref.Kind, ref.Name}
	}
	if len(args) == 2 && o.all {
		return nil, usageErrorf("a name selects one instance in one namespace: give -n, not -A")
	}
	return args, nil
}

func (o *getOptions) run(ctx context.Context, root *Root, args []string) error {
	args, err := o.validate(args)
	if err != nil {
		return err
	}
	g, err := root.Gatherer()
	if err != nil {
		return err
	}
	q := getQuery{opts: metav1.ListOptions{LabelSelector: o.selector}}
	if !o.all {
		if q.ns, err = root.Kube.namespace(); err != nil {
			return err
		}
	}
	if q.kinds, err = g.InstanceKinds(); err != nil {
		return err
	}
	if len(args) >= 1 {
		res, err := ops.MatchKind(args[0], q.kinds)
		if err != nil {
			return err
		}
		q.kinds = []ops.Resource{res}
	}
	if len(args) == 2 {
		q.one = args[1]
		q.opts.FieldSelector = "metadata.name=" + q.one
	}
	items, versions, err := list(ctx, g, q, len(args) == 0)
	if err != nil {
		return err
	}
	items = filterStatus(filterName(items, q.one), o.status)
	if q.one != "" && len(items) == 0 && o.selector == "" && o.status == "" && !o.watch {
		return &ops.NotFoundError{Msg: fmt.Sprintf("%s %q not found in namespace %s", strings.ToLower(q.kinds[0].Kind), q.one, q.ns)}
	}
	p := &getPrinter{w: root.Streams.Out, format: o.output, allNamespaces: o.all, now: time.Now}
	if o.watch {
		return o.watchChanges(ctx, root, g, q, versions, items, p)
	}
	if len(items) == 0 && o.output == OutputText {
		say(root.Streams.ErrOut, "No instances found in %s.", where(q.ns))
		return nil
	}
	return p.list(items, q.one != "")
}

func where(ns string) string {
	if ns == "" {
		return "any namespace"
	}
	return "namespace " + ns
}

// list reads the instances of q's kinds, sorted by namespace, kind and name,
// and each kind's list resourceVersion (where a watch starts). A kind whose
// definition went away since discovery is skipped when every kind is listed.
func list(ctx context.Context, g *ops.Gatherer, q getQuery, skipGone bool) ([]unstructured.Unstructured, map[string]string, error) {
	var items []unstructured.Unstructured
	versions := map[string]string{}
	for _, k := range q.kinds {
		l, err := g.Client.Resource(k.GVR()).Namespace(q.ns).List(ctx, q.opts)
		if apierrors.IsNotFound(err) && skipGone {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("listing %s: %w", k.Plural, err)
		}
		versions[k.Plural] = l.GetResourceVersion()
		items = append(items, l.Items...)
	}
	sortInstances(items)
	return items, versions, nil
}

func sortInstances(items []unstructured.Unstructured) {
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
}

func filterName(items []unstructured.Unstructured, name string) []unstructured.Unstructured {
	if name == "" {
		return items
	}
	out := items[:0:0]
	for i := range items {
		if items[i].GetName() == name {
			out = append(out, items[i])
		}
	}
	return out
}

func filterStatus(items []unstructured.Unstructured, status string) []unstructured.Unstructured {
	if status == "" {
		return items
	}
	out := items[:0:0]
	for i := range items {
		if ops.HasStatus(&items[i], status) {
			out = append(out, items[i])
		}
	}
	return out
}

// watchChanges prints items, then each change of q's instances until ctx
// ends. A watch the API server closes is opened again from the last version
// seen.
func (o *getOptions) watchChanges(ctx context.Context, root *Root, g *ops.Gatherer, q getQuery, versions map[string]string,
	items []unstructured.Unstructured, p *getPrinter) error {
	if p.format == OutputText {
		if err := p.list(items, false); err != nil {
			return err
		}
	} else {
		for i := range items {
			if err := p.event(watch.Added, &items[i]); err != nil {
				return err
			}
		}
	}
	type change struct {
		typ watch.EventType
		obj *unstructured.Unstructured
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes := make(chan change)
	for _, k := range q.kinds {
		rv, ok := versions[k.Plural]
		if !ok {
			continue
		}
		go func(k ops.Resource, rv string) {
			send := func(c change) bool {
				select {
				case changes <- c:
					return true
				case <-ctx.Done():
					return false
				}
			}
			for ctx.Err() == nil {
				opts := q.opts
				opts.ResourceVersion, opts.AllowWatchBookmarks = rv, true
				w, err := g.Client.Resource(k.GVR()).Namespace(q.ns).Watch(ctx, opts)
				if err != nil {
					send(change{err: fmt.Errorf("watching %s: %w", k.Plural, err)})
					return
				}
				for ev := range w.ResultChan() {
					if ev.Type == watch.Error {
						w.Stop()
						send(change{err: fmt.Errorf("watching %s: %w", k.Plural, apierrors.FromObject(ev.Object))})
						return
					}
					obj, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						continue
					}
					if v := obj.GetResourceVersion(); v != "" {
						rv = v
					}
					if ev.Type == watch.Bookmark {
						continue
					}
					if !send(change{typ: ev.Type, obj: obj}) {
						w.Stop()
						return
					}
				}
			}
		}(k, rv)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-changes:
			if c.err != nil {
				return c.err
			}
			if !ops.HasStatus(c.obj, o.status) || (q.one != "" && c.obj.GetName() != q.one) {
				continue
			}
			if err := p.event(c.typ, c.obj); err != nil {
				return err
			}
		}
	}
}

// getPrinter prints get's output in one format.
type getPrinter struct {
	w             io.Writer
	format        string
	allNamespaces bool
	now           func() time.Time
}

// list prints the instances: a table, or a List (the object itself when
// one was asked for by name).
func (p *getPrinter) list(items []unstructured.Unstructured, one bool) error {
	if p.format != OutputText {
		if one && len(items) == 1 {
			return writeStructured(p.w, p.format, items[0].Object)
		}
		objs := make([]map[string]any, 0, len(items))
		for i := range items {
			objs = append(objs, items[i].Object)
		}
		return writeStructured(p.w, p.format, map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 3, ' ', 0)
	for _, line := range ops.FormatRows(ops.Rows(items, p.now()), p.allNamespaces) {
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// event prints one change: a table line (DELETED in READY for a deleted
// instance), or a watch event.
func (p *getPrinter) event(typ watch.EventType, obj *unstructured.Unstructured) error {
	switch p.format {
	case OutputJSON:
		b, err := json.Marshal(map[string]any{"type": typ, "object": obj.Object})
		if err != nil {
			return err
		}
		_, err = p.w.Write(append(b, '\n'))
		return err
	case OutputYAML:
		b, err := yaml.Marshal(map[string]any{"type": typ, "object": obj.Object})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "---\n%s", b)
		return err
	}
	rows := ops.Rows([]unstructured.Unstructured{*obj}, p.now())
	if typ == watch.Deleted {
		rows[0].Ready, rows[0].Reason, rows[0].Message = "Deleted", "", ""
	}
	lines := ops.FormatRows(rows, p.allNamespaces)
	tw := tabwriter.NewWriter(p.w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, lines[1])
	return tw.Flush()
}
