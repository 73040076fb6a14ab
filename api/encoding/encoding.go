// Package encoding decides how an instance's spec is handed to a backend: as
// Terraform variables (Vars) or as Helm values (Values), and what a name must
// look like to be a Terraform variable (HCLIdentifierPattern). The backend
// controllers, pkg/schema (which rejects definitions and instances whose keys
// could not become variables), the generator and the code it generates all
// call it, so the encoding cannot differ between them.
package encoding

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsjson "sigs.k8s.io/json"

	tfv1alpha2 "github.com/cozyplane/cozyplane/api/tofu/v1alpha2"
)

// HCLIdentifierPattern is what a Terraform kind's top-level spec keys must
// match: each becomes a Terraform variable name. It is narrower than HCL's
// own identifiers (no upper case, no dashes) so that a key reads the same in
// the spec, in the module and in the Terraform object.
const HCLIdentifierPattern = `^[a-z_][a-z0-9_]*$`

var hclIdentifier = regexp.MustCompile(HCLIdentifierPattern)

// IsHCLIdentifier reports whether name matches HCLIdentifierPattern.
func IsHCLIdentifier(name string) bool { return hclIdentifier.MatchString(name) }

// Object returns spec as a JSON object, the way the API server serves it:
// fields the types leave out omitted, numbers as int64 or float64. A
// map[string]any is returned as it is; anything else is encoded to JSON and
// decoded case-sensitively. A spec that does not encode to an object is an
// error.
func Object(spec any) (map[string]any, error) {
	if m, ok := spec.(map[string]any); ok {
		return m, nil
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, &obj); err != nil {
		return nil, fmt.Errorf("spec is a %T, not an object", spec)
	}
	return obj, nil
}

// Vars encodes a spec as a Terraform object's spec.vars: one variable per
// top-level key, sorted by name, each value kept as its JSON type (strings,
// numbers, bools, lists, objects). A nil spec has no variables; a key that is
// not an HCL identifier, or a spec that is not an object, is an error.
func Vars(spec any) ([]tfv1alpha2.Variable, error) {
	if spec == nil {
		return nil, nil
	}
	obj, err := Object(spec)
	if err != nil {
		return nil, err
	}
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if !IsHCLIdentifier(k) {
			return nil, fmt.Errorf("spec key %q is not a Terraform variable name (must match %s)", k, HCLIdentifierPattern)
		}
	}
	vars := make([]tfv1alpha2.Variable, 0, len(keys))
	for _, k := range keys {
		raw, err := json.Marshal(obj[k])
		if err != nil {
			return nil, fmt.Errorf("spec.%s: %w", k, err)
		}
		vars = append(vars, tfv1alpha2.Variable{Name: k, Value: &apiextensionsv1.JSON{Raw: raw}})
	}
	return vars, nil
}

// Values encodes a spec as a HelmRelease's spec.values: the spec as a JSON
// object (see Object), an empty one when the spec encodes to null.
func Values(spec any) (map[string]any, error) {
	obj, err := Object(spec)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, nil
}

// ValuesJSON is the JSON document written to a HelmRelease's spec.values for
// values already in unstructured form (an instance's spec, after the backend
// has left out defaults it never wrote).
func ValuesJSON(values any) ([]byte, error) { return json.Marshal(values) }
