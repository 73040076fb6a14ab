package kindruntime

import (
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsjson "sigs.k8s.io/json"
)

// MarshalWithExtra encodes an object that keeps keys its schema does not
// name: named is the generated struct converted to a twin type without
// methods (so its own MarshalJSON is not called again), extra the keys it
// keeps. A key of extra that a named field writes is left out.
func MarshalWithExtra(named any, extra map[string]apiextensionsv1.JSON) ([]byte, error) {
	b, err := json.Marshal(named)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	all := map[string]apiextensionsv1.JSON{}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, isNamed := all[k]; !isNamed {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// UnmarshalWithExtra decodes b into named (a pointer to the generated
// struct's twin type without methods), case-sensitively, and returns the
// keys of b that are none of names, or nil when there are none.
func UnmarshalWithExtra(b []byte, named any, names ...string) (map[string]apiextensionsv1.JSON, error) {
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, named); err != nil {
		return nil, err
	}
	var all map[string]apiextensionsv1.JSON
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, &all); err != nil {
		return nil, err
	}
	for _, k := range names {
		delete(all, k)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}
