package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	watchtools "k8s.io/client-go/tools/watch"
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
first as ADDED; with -o yaml the same events as YAML documents. A watch the
API server ends goes on from the last change seen; when that is too old (410
Gone), the instances are listed again and only what changed meanwhile is
printed.`,
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
	listed := filterName(items, q.one)
	items = filterStatus(listed, o.status)
	if q.one != "" && len(items) == 0 && o.selector == "" && o.status == "" && !o.watch {
		return &ops.NotFoundError{Msg: fmt.Sprintf("%s %q not found in namespace %s", strings.ToLower(q.kinds[0].Kind), q.one, q.ns)}
	}
	p := &getPrinter{w: root.Streams.Out, format: o.output, allNamespaces: o.all, now: time.Now}
	if o.watch {
		return o.watchChanges(ctx, g, q, versions, listed, p)
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
		l, err := listKind(ctx, g, q, k)
		if apierrors.IsNotFound(err) && skipGone {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		versions[k.Plural] = l.GetResourceVersion()
		items = append(items, l.Items...)
	}
	sortInstances(items)
	return items, versions, nil
}

// listKind reads the instances of one of q's kinds.
func listKind(ctx context.Context, g *ops.Gatherer, q getQuery, k ops.Resource) (*unstructured.UnstructuredList, error) {
	l, err := g.Client.Resource(k.GVR()).Namespace(q.ns).List(ctx, q.opts)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", k.Plural, err)
	}
	return l, nil
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

// watchChanges prints listed (those in --status' state), then each change of
// q's instances until ctx ends. Each kind is watched from its list's
// resourceVersion by client-go's RetryWatcher, which opens a watch the API
// server closes (its timeout) again from the last resourceVersion seen. When
// that version is too old to resume from (410 Gone, Expired), the kind is
// listed again and only what changed since the last change seen is printed
// (what was added, modified or deleted meanwhile), as client-go's reflector
// does; the watch goes on from that list's resourceVersion. Any other error
// ends the command.
func (o *getOptions) watchChanges(ctx context.Context, g *ops.Gatherer, q getQuery, versions map[string]string,
	listed []unstructured.Unstructured, p *getPrinter) error {
	items := filterStatus(listed, o.status)
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
	seen := instanceState{}
	for i := range listed {
		seen.apply(watch.Added, &listed[i])
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes := make(chan watchChange)
	for _, k := range q.kinds {
		rv, ok := versions[k.Plural]
		if !ok {
			continue
		}
		w := &kindWatch{g: g, q: q, kind: k, changes: changes}
		go w.run(ctx, rv)
	}
	show := func(c watchChange) error {
		if !ops.HasStatus(c.obj, o.status) {
			return nil
		}
		return p.event(c.typ, c.obj)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-changes:
			switch {
			case c.err != nil:
				return c.err
			case c.relisted != nil:
				for _, d := range seen.replace(c.kind, filterName(c.relisted.Items, q.one)) {
					if err := show(d); err != nil {
						return err
					}
				}
			case q.one == "" || c.obj.GetName() == q.one:
				seen.apply(c.typ, c.obj)
				if err := show(c); err != nil {
					return err
				}
			}
		}
	}
}

// watchChange is what a kind's watch tells watchChanges: a change, a new
// list of the kind (after its resourceVersion expired), or the error that
// ends the watch.
type watchChange struct {
	typ      watch.EventType
	obj      *unstructured.Unstructured
	kind     ops.Resource
	relisted *unstructured.UnstructuredList
	err      error
}

// kindWatch watches the instances of one kind.
type kindWatch struct {
	g       *ops.Gatherer
	q       getQuery
	kind    ops.Resource
	changes chan<- watchChange
}

func (w *kindWatch) send(ctx context.Context, c watchChange) bool {
	select {
	case w.changes <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// run watches from rv until ctx ends or an error ends it, listing the kind
// again each time the resourceVersion the watch goes on from expired.
func (w *kindWatch) run(ctx context.Context, rv string) {
	for {
		expired, err := w.watch(ctx, rv)
		if err != nil {
			w.send(ctx, watchChange{err: err})
			return
		}
		if !expired {
			return
		}
		l, err := listKind(ctx, w.g, w.q, w.kind)
		if err != nil {
			if ctx.Err() == nil {
				w.send(ctx, watchChange{err: err})
			}
			return
		}
		if !w.send(ctx, watchChange{kind: w.kind, relisted: l}) {
			return
		}
		rv = l.GetResourceVersion()
	}
}

// watch forwards the changes after rv until ctx ends (false, nil), rv is too
// old to resume from (true, nil) or an error the watch cannot recover from.
func (w *kindWatch) watch(ctx context.Context, rv string) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := &watchSource{client: w.g.Client.Resource(w.kind.GVR()).Namespace(w.q.ns), opts: w.q.opts, stop: cancel}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, src)
	if err != nil {
		return false, fmt.Errorf("watching %s: %w", w.kind.Plural, err)
	}
	defer rw.Stop()
	for ev := range rw.ResultChan() {
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			if expired(err) {
				return true, nil
			}
			return false, fmt.Errorf("watching %s: %w", w.kind.Plural, err)
		}
		obj, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if !w.send(ctx, watchChange{typ: ev.Type, obj: obj}) {
			return false, nil
		}
	}
	// The RetryWatcher ended: ctx ended, or its source stopped it.
	switch err := src.failure(); {
	case err == nil:
		return false, nil
	case expired(err):
		return true, nil
	default:
		return false, fmt.Errorf("watching %s: %w", w.kind.Plural, err)
	}
}

// watchSource opens the watches of a RetryWatcher with get's selectors. The
// RetryWatcher retries every error but an expired resourceVersion and a
// refusal to authenticate or authorize, silently; watchSource stops it on
// any error that another attempt would not mend (and on an expired version
// the API server answers the watch request itself with), so that failure
// ends the command.
type watchSource struct {
	client dynamic.ResourceInterface
	opts   metav1.ListOptions
	stop   context.CancelFunc

	mu  sync.Mutex
	err error
}

func (s *watchSource) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	o := s.opts
	o.ResourceVersion, o.AllowWatchBookmarks = opts.ResourceVersion, opts.AllowWatchBookmarks
	w, err := s.client.Watch(ctx, o)
	if err != nil {
		if !transient(err) {
			s.fail(err)
		}
		// io.EOF: the RetryWatcher tries again after its delay without
		// logging (or ends, once stopped).
		return nil, io.EOF
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type != watch.Error {
			return ev, true
		}
		err := apierrors.FromObject(ev.Object)
		if expired(err) || transient(err) {
			return ev, true
		}
		s.fail(err)
		return ev, false
	}), nil
}

func (s *watchSource) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.stop()
}

func (s *watchSource) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// expired is a resourceVersion too old to watch from.
func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// transient is an error another attempt may not run into: a connection the API
// server or a proxy dropped, a timeout, throttling, an overloaded or failing
// server.
func transient(err error) bool {
	return utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err)
}

// instanceState is the last state seen of each instance get --watch
// selected, to tell what a new list changed.
type instanceState map[schema.GroupKind]map[types.NamespacedName]*unstructured.Unstructured

func (s instanceState) apply(typ watch.EventType, obj *unstructured.Unstructured) {
	gk := obj.GroupVersionKind().GroupKind()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	switch typ {
	case watch.Added, watch.Modified:
		if s[gk] == nil {
			s[gk] = map[types.NamespacedName]*unstructured.Unstructured{}
		}
		s[gk][key] = obj
	case watch.Deleted:
		delete(s[gk], key)
	}
}

// replace makes items the state of kind k, and returns the changes from the
// state before: the instances gone (DELETED, as last seen), then those new
// (ADDED) or at another resourceVersion (MODIFIED), each sorted as get's list.
func (s instanceState) replace(k ops.Resource, items []unstructured.Unstructured) []watchChange {
	gk := schema.GroupKind{Group: k.Group, Kind: k.Kind}
	before := s[gk]
	now := make(map[types.NamespacedName]*unstructured.Unstructured, len(items))
	for i := range items {
		now[types.NamespacedName{Namespace: items[i].GetNamespace(), Name: items[i].GetName()}] = &items[i]
	}
	var gone []unstructured.Unstructured
	for key, obj := range before {
		if now[key] == nil {
			gone = append(gone, *obj)
		}
	}
	sortInstances(gone)
	var changes []watchChange
	for i := range gone {
		changes = append(changes, watchChange{typ: watch.Deleted, obj: &gone[i]})
	}
	sorted := slices.Clone(items)
	sortInstances(sorted)
	for i := range sorted {
		obj := &sorted[i]
		old := before[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}]
		switch {
		case old == nil:
			changes = append(changes, watchChange{typ: watch.Added, obj: obj})
		case old.GetResourceVersion() != obj.GetResourceVersion(),
			obj.GetResourceVersion() == "" && !equality.Semantic.DeepEqual(old.Object, obj.Object):
			changes = append(changes, watchChange{typ: watch.Modified, obj: obj})
		}
	}
	s[gk] = now
	return changes
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
