package instance

import (
	"fmt"
	"sort"
	"strings"

	appsv1alpha1 "github.com/cozyplane/cozyplane/api/apps/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/reconcileerr"
)

// ReservedKeys returns the top-level keys of an instance's spec that start
// with appsv1alpha1.ReservedKeyPrefix, sorted; nil when there are none or the
// spec is not an object. Only the top level is the platform's: a chart reads
// .Values._namespace and .Values._cluster, and a nested "_x" is the
// application's own. Pure.
func ReservedKeys(spec any) []string {
	m, ok := spec.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for k := range m {
		if strings.HasPrefix(k, appsv1alpha1.ReservedKeyPrefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// CheckReservedKeys refuses an instance whose spec has reserved top-level
// keys: copied into the HelmRelease's values (or the Terraform vars) they
// would override what the platform gives every application of the namespace
// (_namespace: host, gateway...; _cluster). The CRD and the instance keys
// policy refuse them on write, so such an instance was stored before the rule
// or while the policy was not enforced; the backend writes nothing for it
// (a Stalled error, ReasonReservedKey) rather than drop keys silently.
// Pure.
func CheckReservedKeys(spec any) error {
	keys := ReservedKeys(spec)
	if len(keys) == 0 {
		return nil
	}
	quoted := make([]string, len(keys))
	ops := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
		ops[i] = fmt.Sprintf(`{"op":"remove","path":"/spec/%s"}`, strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return reconcileerr.Stalled(appsv1alpha1.ReasonReservedKey, fmt.Errorf(
		"spec has top-level keys starting with %q, which are reserved for the values the platform gives every application (_namespace, _cluster): %s; "+
			"nothing is written to the backing object until they are removed from the instance (kubectl patch --type=json -p '[%s]')",
		appsv1alpha1.ReservedKeyPrefix, strings.Join(quoted, ", "), strings.Join(ops, ",")))
}
