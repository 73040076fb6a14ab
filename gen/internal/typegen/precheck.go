package typegen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// precheck refuses, before pkg/schema reads the schema, what neither a Go
// type nor a structural CRD schema can express, with a message that says
// what to write instead: a oneOf or anyOf whose branches are different
// objects (pkg/schema would only report that the schema is not structural).
// A schema that is not JSON is left for pkg/schema to report.
func precheck(text string, errf ErrorFunc) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return walkRaw(v, schemaRoot, 0, errf)
}

func walkRaw(v any, fld string, depth int, errf ErrorFunc) error {
	m, ok := v.(map[string]any)
	if !ok || depth > 64 {
		return nil
	}
	_, hasProps := m["properties"]
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := m[key].([]any)
		if !ok {
			continue
		}
		objects, nonNull := 0, 0
		for _, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok || bm["type"] == "null" {
				continue
			}
			nonNull++
			_, bp := bm["properties"]
			_, ba := bm["additionalProperties"]
			if bp || ba || bm["type"] == "object" {
				objects++
			}
		}
		if objects > 0 && nonNull > 1 && !hasProps {
			return errf(fld+"."+key, "a %s of object schemas cannot be expressed as one Go type, nor as a structural CRD schema: "+
				"merge the branches into one object whose properties are optional, and express the choice with "+
				"x-kubernetes-validations (CEL), e.g. has(self.a) != has(self.b)", key)
		}
	}
	children := func(key string) []string {
		mm, ok := m[key].(map[string]any)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(mm))
		for k := range mm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	for _, key := range []string{"properties", "definitions", "$defs"} {
		for _, k := range children(key) {
			if err := walkRaw(m[key].(map[string]any)[k], fmt.Sprintf("%s.%s[%s]", fld, key, k), depth+1, errf); err != nil {
				return err
			}
		}
	}
	for _, key := range []string{"additionalProperties", "items", "not"} {
		if err := walkRaw(m[key], fld+"."+key, depth+1, errf); err != nil {
			return err
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[key].([]any); ok {
			for i, b := range l {
				if err := walkRaw(b, fmt.Sprintf("%s.%s[%d]", fld, key, i), depth+1, errf); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
