package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Results of --apply, per HelmRelease.
const (
	ResultCreated         = "instance created"
	ResultExisted         = "instance already there with the proof"
	ResultAdopted         = "adopted"
	ResultAlreadyAdopted  = "already adopted"
	ResultNotWaited       = "instance created; adoption not waited for (--timeout=0)"
	resultNotAdoptedFmt   = "not adopted within %s"
	resultCreateFailedFmt = "create failed: %s"
	resultReplacedFmt     = "the HelmRelease was replaced meanwhile (uid now %s): left alone"
)

// BlockedError is returned by Apply while blockers stand; nothing changed.
type BlockedError struct{ Blockers []Blocker }

func (e *BlockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refusing to migrate: %d blocker(s) stand; nothing was changed", len(e.Blockers))
	for _, x := range e.Blockers {
		fmt.Fprintf(&b, "\n  - %s: %s\n    fix: %s", x.Object, x.Message, x.Fix)
	}
	return b.String()
}

// IncompleteError is returned when some HelmReleases did not end adopted.
// TimedOut: every one of them was still waiting for its adoption when the
// timeout ran out (nothing else went wrong).
type IncompleteError struct {
	Failed   []string
	TimedOut bool
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%d HelmRelease(s) not migrated:\n  - %s", len(e.Failed), strings.Join(e.Failed, "\n  - "))
}

// Applier carries out a plan.
type Applier struct {
	Client dynamic.Interface
	// FieldManager names the writer of the instances.
	FieldManager string
	// Timeout bounds the wait for adoption; 0 does not wait.
	Timeout time.Duration
	// Interval between two looks at the HelmReleases; 1s when zero.
	Interval time.Duration
	// Log receives one line per step; may be nil.
	Log io.Writer
}

type pending struct {
	entry       *Entry
	instanceUID types.UID
}

// Apply creates the instance of every ActionCreate entry, then waits until
// every HelmRelease of an entry to create or to wait for is controlled by
// its instance. It changes nothing while p has blockers, and nothing but
// those instances ever: a run after a complete one creates nothing, and a
// run after an interrupted one finishes the job. Entries get their Result.
func (a *Applier) Apply(ctx context.Context, p *Plan) error {
	if len(p.Blockers) > 0 {
		return &BlockedError{Blockers: p.Blockers}
	}
	var failed []string
	allLate := false
	var waits []pending
	for i := range p.Entries {
		e := &p.Entries[i]
		switch e.Action {
		case ActionNone:
			e.Result = ResultAlreadyAdopted
		case ActionCreate:
			uid, err := a.create(ctx, e)
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s/%s: %s", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Result))
				continue
			}
			if uid != "" {
				waits = append(waits, pending{entry: e, instanceUID: uid})
			}
		case ActionWait:
			x, err := a.Client.Resource(InstanceResource(e.plural)).Namespace(e.HelmRelease.Namespace).Get(ctx, e.Instance, metav1.GetOptions{})
			if err != nil {
				e.Result = fmt.Sprintf("reading %s %s: %v", e.Kind, e.Instance, err)
				failed = append(failed, fmt.Sprintf("%s/%s: %s", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Result))
				continue
			}
			inst := InstanceFrom(x)
			if err := ExistingInstanceVerdict(&inst, e.HelmRelease.UID); err != nil {
				e.Action, e.Reason, e.Message, e.Result = ActionSkip, SkipInstanceConflict, err.Error(), ""
				continue
			}
			e.Result = ResultExisted
			waits = append(waits, pending{entry: e, instanceUID: inst.UID})
		}
	}

	if a.Timeout <= 0 {
		for _, w := range waits {
			w.entry.Result = ResultNotWaited
		}
	} else {
		late, timedOut := a.wait(ctx, p.Namespace, waits)
		failed = append(failed, late...)
		allLate = timedOut == len(failed)
	}
	a.readInstances(ctx, p)
	if len(failed) > 0 {
		return &IncompleteError{Failed: failed, TimedOut: allLate && len(failed) > 0}
	}
	return nil
}

// create creates the entry's instance. An instance that already exists is
// fine when it carries this HelmRelease's proof (an earlier run created
// it); otherwise the entry turns into a reported skip. It returns the uid
// to wait for, or "" when there is nothing to wait for.
func (a *Applier) create(ctx context.Context, e *Entry) (types.UID, error) {
	res := a.Client.Resource(InstanceResource(e.plural)).Namespace(e.HelmRelease.Namespace)
	created, err := res.Create(ctx, InstanceObject(e), metav1.CreateOptions{FieldManager: a.FieldManager})
	if err == nil {
		e.Result = ResultCreated
		a.logf("created %s %s/%s (adopts HelmRelease %s, uid %s)", e.Kind, e.HelmRelease.Namespace, e.Instance, e.HelmRelease.Name, e.HelmRelease.UID)
		return created.GetUID(), nil
	}
	if !apierrors.IsAlreadyExists(err) {
		e.Result = fmt.Sprintf(resultCreateFailedFmt, apiMessage(err))
		return "", err
	}
	live, gerr := res.Get(ctx, e.Instance, metav1.GetOptions{})
	if gerr != nil {
		e.Result = fmt.Sprintf(resultCreateFailedFmt, apiMessage(gerr))
		return "", gerr
	}
	inst := InstanceFrom(live)
	if verr := ExistingInstanceVerdict(&inst, e.HelmRelease.UID); verr != nil {
		e.Action, e.Reason, e.Message = ActionSkip, SkipInstanceConflict, verr.Error()
		return "", nil
	}
	e.Result = ResultExisted
	return inst.UID, nil
}

// wait polls the HelmReleases until each pending one is controlled by its
// instance, or the timeout passes. It returns the failures, and how many
// of them are adoptions the timeout ran out on.
func (a *Applier) wait(ctx context.Context, namespace string, waits []pending) (failed []string, timedOut int) {
	if len(waits) == 0 {
		return nil, 0
	}
	interval := a.Interval
	if interval <= 0 {
		interval = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	a.logf("waiting up to %s for the helm controller to adopt %d HelmRelease(s)", a.Timeout, len(waits))
	left := waits
	for {
		hrs, err := listAll(ctx, a.Client.Resource(HelmReleaseResource).Namespace(namespace), metav1.ListOptions{LabelSelector: releaseSelector()})
		if err == nil {
			byName := map[types.NamespacedName]Release{}
			for i := range hrs {
				r := ReleaseFrom(&hrs[i])
				byName[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}] = r
			}
			var still []pending
			for _, w := range left {
				e := w.entry
				r, ok := byName[types.NamespacedName{Namespace: e.HelmRelease.Namespace, Name: e.HelmRelease.Name}]
				switch {
				case ok && r.UID != e.HelmRelease.UID:
					e.Result = fmt.Sprintf(resultReplacedFmt, r.UID)
					failed = append(failed, fmt.Sprintf("%s/%s: %s", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Result))
				case ok && Adopted(r.Controller, e.Kind, e.Instance, w.instanceUID):
					e.Result = ResultAdopted
					a.logf("HelmRelease %s/%s is controlled by %s %s", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Kind, e.Instance)
				default:
					still = append(still, w)
				}
			}
			left = still
		}
		if len(left) == 0 {
			return failed, 0
		}
		select {
		case <-ctx.Done():
			for _, w := range left {
				e := w.entry
				e.Result = fmt.Sprintf(resultNotAdoptedFmt, a.Timeout)
				why := a.whyNotAdopted(e)
				failed = append(failed, fmt.Sprintf("%s/%s: %s; %s", e.HelmRelease.Namespace, e.HelmRelease.Name, e.Result, why))
			}
			return failed, len(left)
		case <-time.After(interval):
		}
	}
}

// whyNotAdopted reads what the instance says (a fresh context: the wait's
// own has expired).
func (a *Applier) whyNotAdopted(e *Entry) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x, err := a.Client.Resource(InstanceResource(e.plural)).Namespace(e.HelmRelease.Namespace).Get(ctx, e.Instance, metav1.GetOptions{})
	if err != nil {
		return "reading the instance: " + apiMessage(err)
	}
	c := InstanceFrom(x).Ready
	if c == nil {
		return fmt.Sprintf("%s %s has no Ready condition: is the helm controller running?", e.Kind, e.Instance)
	}
	return fmt.Sprintf("%s %s says Ready=%s %s: %s", e.Kind, e.Instance, c.Status, c.Reason, c.Message)
}

// readInstances records each instance's Ready condition on its entry.
func (a *Applier) readInstances(ctx context.Context, p *Plan) {
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Action == ActionSkip || e.plural == "" || e.Result == "" || strings.HasPrefix(e.Result, "create failed") {
			continue
		}
		x, err := a.Client.Resource(InstanceResource(e.plural)).Namespace(e.HelmRelease.Namespace).Get(ctx, e.Instance, metav1.GetOptions{})
		if err == nil {
			e.InstanceReady = InstanceFrom(x).Ready
		}
	}
}

func (a *Applier) logf(format string, args ...any) {
	if a.Log != nil {
		fmt.Fprintf(a.Log, format+"\n", args...)
	}
}

// apiMessage is the API server's own words.
func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}
