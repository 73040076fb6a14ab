package reconcileerr

// Reason is the condition reason that reports err, the outcome of a
// reconcile that could not complete, in the mapping that goes with Result:
// a stalled state's own reason (StalledError, Foreign, Reasoned), which only
// a change can fix and is not retried; a waiting error's own reason, retried
// after its delay; retried, the reason of the controller's condition for any
// other error, which is retried with back-off. nil has no reason: "".
func Reason(err error, retried string) string {
	if err == nil {
		return ""
	}
	if s, ok := AsStalled(err); ok {
		return s.Reason
	}
	if w, ok := AsWaiting(err); ok {
		return w.Reason
	}
	return retried
}
