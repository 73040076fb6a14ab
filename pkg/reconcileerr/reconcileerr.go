// Package reconcileerr classifies reconcile failures by what should happen
// next, instead of ad-hoc requeues:
//
//   - Stalled: the user must change something; retrying will not help. The
//     reconciler reports it as a condition and does not requeue.
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
// can fix. Reason is the condition reason to report.
type StalledError struct {
	Reason string
	Err    error
}

func (e *StalledError) Error() string { return e.Err.Error() }
func (e *StalledError) Unwrap() error { return e.Err }

// Stalled wraps err as a StalledError with the given condition reason.
func Stalled(reason string, err error) error { return &StalledError{Reason: reason, Err: err} }

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

// AsStalled returns the StalledError in err's chain, if any.
func AsStalled(err error) (*StalledError, bool) {
	var s *StalledError
	ok := errors.As(err, &s)
	return s, ok
}

// AsWaiting returns the WaitingError in err's chain, if any.
func AsWaiting(err error) (*WaitingError, bool) {
	var w *WaitingError
	ok := errors.As(err, &w)
	return w, ok
}

// Result turns a reconcile error into what controller-runtime should do:
// stalled errors end the reconcile without a retry, waiting errors requeue
// after their delay, others are returned for exponential back-off.
func Result(err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	if _, ok := AsStalled(err); ok {
		return ctrl.Result{}, nil
	}
	if w, ok := AsWaiting(err); ok {
		return ctrl.Result{RequeueAfter: w.RequeueAfter}, nil
	}
	return ctrl.Result{}, err
}
