// Package reconcileerr classifies reconcile failures by what should happen
// next, instead of ad-hoc requeues:
//
//   - Stalled: the user must change something; retrying will not help. The
//     reconciler reports it as a condition and does not requeue, unless the
//     fix may come without an event it watches (Foreign: an object someone
//     else holds may go away unseen); then it looks again now and then.
//   - Waiting: a dependency is not there yet; retry after a delay without
//     counting it as a failure.
//   - anything else is transient: return it and let the work queue back off.
package reconcileerr

import (
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// StalledError is a failure only a change to the object (or its definition)
// can fix. Reason is the condition reason to report. Recheck is set when the
// fix may come without an event the controller watches.
type StalledError struct {
	Reason  string
	Err     error
	Recheck bool
}

func (e *StalledError) Error() string { return e.Err.Error() }
func (e *StalledError) Unwrap() error { return e.Err }

// Stalled wraps err as a StalledError with the given condition reason.
func Stalled(reason string, err error) error { return &StalledError{Reason: reason, Err: err} }

// Foreign wraps err as a StalledError that is looked at again now and then:
// something the controller does not own or watch (another owner's object, a
// policy not installed) stands in the way, and no event says when it is gone.
func Foreign(reason string, err error) error {
	return &StalledError{Reason: reason, Err: err, Recheck: true}
}

// IsForeign reports whether err's chain holds a Foreign error.
func IsForeign(err error) bool {
	s, ok := AsStalled(err)
	return ok && s.Recheck
}

// Reasoned is an error type that carries its condition reason itself, for
// packages that define their own typed errors for states only a change of
// the object can fix; AsStalled treats it as a StalledError.
type Reasoned interface {
	error
	StalledReason() string
}

// WaitingError asks for a retry after RequeueAfter; Reason is the condition
// reason to report meanwhile.
type WaitingError struct {
	Reason       string
	Err          error
	RequeueAfter time.Duration
}

func (e *WaitingError) Error() string { return e.Err.Error() }
func (e *WaitingError) Unwrap() error { return e.Err }

// Waiting wraps err as a WaitingError.
func Waiting(reason string, after time.Duration, err error) error {
	return &WaitingError{Reason: reason, Err: err, RequeueAfter: after}
}

// AsStalled returns the StalledError in err's chain, if any; a Reasoned
// error in the chain is returned as one.
func AsStalled(err error) (*StalledError, bool) {
	var s *StalledError
	if errors.As(err, &s) {
		return s, true
	}
	var r Reasoned
	if errors.As(err, &r) {
		return &StalledError{Reason: r.StalledReason(), Err: err}, true
	}
	return nil, false
}

// AsWaiting returns the WaitingError in err's chain, if any.
func AsWaiting(err error) (*WaitingError, bool) {
	var w *WaitingError
	ok := errors.As(err, &w)
	return w, ok
}

// Result turns a reconcile error into what controller-runtime should do:
// stalled errors end the reconcile without a retry (Foreign ones look again
// after recheck), waiting errors requeue after their delay, others are
// returned for exponential back-off.
func Result(err error, recheck time.Duration) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	if s, ok := AsStalled(err); ok {
		if s.Recheck {
			return ctrl.Result{RequeueAfter: recheck}, nil
		}
		return ctrl.Result{}, nil
	}
	if w, ok := AsWaiting(err); ok {
		return ctrl.Result{RequeueAfter: w.RequeueAfter}, nil
	}
	return ctrl.Result{}, err
}
