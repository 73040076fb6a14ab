package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cozyplane/cozyplane/cmd/cozyplane/internal/ops"
)

// selectionHelp ends the help of each act verb.
const selectionHelp = `

KIND --all acts on every instance of KIND in the namespace, KIND -l SELECTOR on
those with the labels; -A widens either to every namespace. They are acted on
at once, each waiting up to --timeout; a failure is printed as it happens and
the command fails when one did (exit status: theirs when they agree, else 1).
Nothing selected is not found (exit status 4).`

// selection is how an act verb (reconcile, suspend, resume, approve) picks
// its instances: KIND/NAME, or KIND with --all or -l in the namespace of -n
// (every namespace with -A).
type selection struct {
	all           bool
	selector      string
	allNamespaces bool
}

func (s *selection) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&s.all, "all", false, "Every instance of KIND in the namespace (with -A: in every namespace).")
	f.StringVarP(&s.selector, "selector", "l", "", "The instances of KIND with these labels, as kubectl's -l (app=a,tier!=db).")
	f.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "With --all or -l: in every namespace.")
}

// many reports a selection of several instances (--all or -l).
func (s *selection) many() bool { return s.all || s.selector != "" }

// prefix names t at the start of an outcome line when several instances
// are acted on ("" for one).
func (s *selection) prefix(t *target) string {
	if !s.many() {
		return ""
	}
	return t.String() + ": "
}

// check refuses a command line that selects nothing or two ways at once,
// before anything is read.
func (s *selection) check(arg string) error {
	if s.selector != "" {
		if _, err := labels.Parse(s.selector); err != nil {
			return usageErrorf("-l %q: %v", s.selector, err)
		}
	}
	switch {
	case s.all && s.selector != "":
		return usageErrorf("--all and -l both select: give one")
	case s.many() && strings.Contains(arg, "/"):
		return usageErrorf("%q names one instance: with --all or -l give only its KIND", arg)
	case s.allNamespaces && !s.many():
		return usageErrorf("-A needs --all or -l")
	case !s.many():
		_, err := ops.ParseRef(arg)
		return err
	}
	return nil
}

// targets resolves the selection.
func (s *selection) targets(ctx context.Context, root *Root, arg string) ([]*target, error) {
	if !s.many() {
		t, err := resolve(ctx, root, arg, (*ops.Gatherer).InstanceKinds)
		if err != nil {
			return nil, err
		}
		return []*target{t}, nil
	}
	g, err := root.Gatherer()
	if err != nil {
		return nil, err
	}
	ns := ""
	if !s.allNamespaces {
		if ns, err = root.Kube.namespace(); err != nil {
			return nil, err
		}
	}
	served, err := g.InstanceKinds()
	if err != nil {
		return nil, err
	}
	res, err := ops.MatchKind(arg, served)
	if err != nil {
		return nil, err
	}
	items, err := g.List(ctx, res.GVR(), ns, metav1.ListOptions{LabelSelector: s.selector})
	if err != nil {
		return nil, err
	}
	sortInstances(items)
	if len(items) == 0 {
		what := "no " + strings.ToLower(res.Kind)
		if s.selector != "" {
			what += " matches -l " + s.selector
		}
		return nil, &ops.NotFoundError{Msg: fmt.Sprintf("%s in %s", what, where(ns))}
	}
	out := make([]*target, 0, len(items))
	for i := range items {
		out = append(out, &target{g: g, res: res, ns: items[i].GetNamespace(), obj: &items[i]})
	}
	return out, nil
}

// each runs act on every selected instance, at once when there are
// several; ref is how to name it on a command line (kind/name). One
// instance: act's error as is. Several: each failure is printed as it
// happens, and the error says how many failed, with their common exit
// status (1 when they differ).
func (s *selection) each(ctx context.Context, root *Root, arg string, act func(t *target, ref string) error) error {
	if err := s.check(arg); err != nil {
		return err
	}
	targets, err := s.targets(ctx, root, arg)
	if err != nil {
		return err
	}
	if len(targets) == 1 && !s.many() {
		return act(targets[0], arg)
	}
	saved := root.Streams
	root.Streams.Out, root.Streams.ErrOut = &lockedWriter{w: saved.Out}, &lockedWriter{w: saved.ErrOut}
	defer func() { root.Streams = saved }()
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = act(t, strings.ToLower(t.res.Kind)+"/"+t.obj.GetName())
			if errs[i] != nil {
				say(root.Streams.ErrOut, "✗ %s: %v", t, errs[i])
			}
		}()
	}
	wg.Wait()
	failed, code := 0, 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		failed++
		switch c := ExitCode(err); {
		case code == 0:
			code = c
		case code != c:
			code = ExitFailure
		}
	}
	if failed == 0 {
		return nil
	}
	return &batchError{code: code, msg: fmt.Sprintf("%d of %d instances failed (each is named above)", failed, len(targets))}
}

// batchError is the outcome of an act verb on several instances.
type batchError struct {
	code int
	msg  string
}

func (e *batchError) Error() string { return e.msg }

// lockedWriter serialises the lines of concurrent acts.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
