package schema

import "github.com/cozyplane/cozyplane/pkg/reconcileerr"

// reasonOf is the condition reason a reconciler reports for err ("" when it
// is not a state only a change of the definition can fix).
func reasonOf(err error) string {
	if s, ok := reconcileerr.AsStalled(err); ok {
		return s.Reason
	}
	return ""
}
