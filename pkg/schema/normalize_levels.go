package schema

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// finish completes a node whose children are normalised, as its level
// requires: value validations only lose uniqueItems (CRDs cannot enforce it
// on a value); fields become structural (finishField); the root is also an
// object (finishRoot).
func finish(m map[string]any, p *field.Path, lvl level) (map[string]any, error) {
	switch lvl {
	case levelRoot:
		return m, finishRoot(m, p)
	case levelField:
		finishField(m)
	default:
		delete(m, "uniqueItems")
	}
	return m, nil
}

// finishRoot: the spec is an object, typed as one when the schema says no
// type, and must not be anything else.
func finishRoot(m map[string]any, p *field.Path) error {
	if _, typed := m["type"]; !typed && m["x-kubernetes-int-or-string"] != true {
		m["type"] = "object"
	}
	finishField(m)
	if t, _ := m["type"].(string); t != "object" {
		return newError(reasonInvalidSchema, p.Child("type").String(), "must be object: openAPISchema describes an instance's spec, which is an object (got %q)", t)
	}
	return nil
}

// finishField makes a stored field structural: properties next to
// additionalProperties keep the properties and preserve the other keys
// unvalidated (a CRD cannot say both); uniqueItems on a list of scalars
// becomes a set list-type (the API server's way to keep items unique);
// every node gets a type or accepts any value (inferType).
func finishField(m map[string]any) {
	if _, hasProps := m["properties"]; hasProps {
		if _, hasAP := m["additionalProperties"]; hasAP {
			delete(m, "additionalProperties")
			m["x-kubernetes-preserve-unknown-fields"] = true
		}
	}
	if u, ok := m["uniqueItems"]; ok {
		delete(m, "uniqueItems")
		if it, ok := m["items"].(map[string]any); ok && u == true && isScalarType(it["type"]) && it["nullable"] != true {
			if _, set := m["x-kubernetes-list-type"]; !set {
				m["x-kubernetes-list-type"] = "set"
			}
		}
	}
	inferType(m)
}

// nullableMerge: anyOf/oneOf of a schema and null is that schema, nullable.
func nullableMerge(m map[string]any) (map[string]any, bool) {
	for _, key := range []string{"anyOf", "oneOf"} {
		if merged, ok := nullableUnion(m, key); ok {
			return merged, true
		}
	}
	return nil, false
}

// intOrString: anyOf/oneOf of integer and string is
// x-kubernetes-int-or-string, which has no type and carries the anyOf the
// API server requires.
func intOrString(m map[string]any) {
	for _, key := range []string{"anyOf", "oneOf"} {
		if isIntOrStringUnion(m[key]) {
			delete(m, key)
			m["x-kubernetes-int-or-string"] = true
		}
	}
	if m["x-kubernetes-int-or-string"] == true {
		delete(m, "type")
		_, hasAnyOf := m["anyOf"]
		_, hasAllOf := m["allOf"]
		if !hasAnyOf && !hasAllOf {
			m["anyOf"] = intOrStringAnyOf()
		}
	}
}

var annotationKeys = map[string]bool{"description": true, "title": true, "$comment": true}

// onlyType returns the type of a branch that says nothing but its type
// (annotations aside).
func onlyType(b any) (string, bool) {
	m, ok := b.(map[string]any)
	if !ok {
		return "", false
	}
	t, ok := m["type"].(string)
	if !ok {
		return "", false
	}
	for k := range m {
		if k != "type" && !annotationKeys[k] && !strings.HasPrefix(k, "x-") {
			return "", false
		}
	}
	return t, true
}

func isIntOrStringUnion(v any) bool {
	branches, ok := v.([]any)
	if !ok || len(branches) != 2 {
		return false
	}
	a, okA := onlyType(branches[0])
	b, okB := onlyType(branches[1])
	return okA && okB && ((a == "integer" && b == "string") || (a == "string" && b == "integer"))
}

func intOrStringAnyOf() []any {
	return []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
}

// nullableUnion turns {anyOf: [S, {type: null}]} into S (the node's own keys
// win) with nullable: true.
func nullableUnion(m map[string]any, key string) (map[string]any, bool) {
	branches, ok := m[key].([]any)
	if !ok || len(branches) != 2 {
		return nil, false
	}
	other := -1
	for i, b := range branches {
		if t, ok := onlyType(b); ok && t == "null" {
			other = 1 - i
		}
	}
	if other < 0 {
		return nil, false
	}
	base, ok := branches[other].(map[string]any)
	if !ok {
		return nil, false
	}
	if t, ok := onlyType(base); ok && t == "null" {
		return nil, false
	}
	merged := make(map[string]any, len(base)+len(m))
	for k, v := range base {
		merged[k] = v
	}
	for k, v := range m {
		if k != key {
			merged[k] = v
		}
	}
	merged["nullable"] = true
	return merged, true
}

func isScalarType(t any) bool {
	switch t {
	case "string", "integer", "number", "boolean":
		return true
	}
	return false
}

// inferType gives every node outside value validations a type, or marks it
// as accepting any value, so the schema is structural.
func inferType(m map[string]any) {
	if m["x-kubernetes-int-or-string"] == true {
		return
	}
	preserve := m["x-kubernetes-preserve-unknown-fields"] == true
	_, hasProps := m["properties"]
	_, hasAP := m["additionalProperties"]
	_, hasItems := m["items"]
	t, _ := m["type"].(string)
	if t == "" && !preserve {
		switch {
		case hasProps || hasAP:
			m["type"] = "object"
			t = "object"
		case hasItems:
			m["type"] = "array"
			t = "array"
		default:
			m["x-kubernetes-preserve-unknown-fields"] = true
			return
		}
	}
	if t == "object" && !hasProps && !hasAP && !preserve && m["x-kubernetes-embedded-resource"] != true {
		m["x-kubernetes-preserve-unknown-fields"] = true
	}
	if t == "array" && !hasItems {
		m["items"] = map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	}
}
