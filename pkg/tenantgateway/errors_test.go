package tenantgateway

import "github.com/cozyplane/cozyplane/pkg/reconcileerr"

// reasonOf is the condition reason a gateway controller reports for err, and
// whether err is a state only a change can fix.
func reasonOf(err error) (string, bool) {
	if s, ok := reconcileerr.AsStalled(err); ok {
		return s.Reason, true
	}
	return "", false
}
