package schema

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// level is where a schema node sits; it decides what the normaliser adds
// to the node after the steps every node goes through (normalize_levels.go).
type level int

const (
	// levelRoot is the spec itself: an object.
	levelRoot level = iota
	// levelField is a property, an array's items or a map's values.
	levelField
	// levelValue is inside anyOf, oneOf, allOf or not: value validation
	// only, where types and extensions are not allowed.
	levelValue
)

// structural reports whether nodes of the level describe stored fields, so
// they must be structural (typed, with extensions); value validations need
// not.
func (l level) structural() bool { return l != levelValue }

// sub is the level of a node's properties, items and map values.
func (l level) sub() level {
	if l == levelValue {
		return levelValue
	}
	return levelField
}

type normalizer struct {
	root  map[string]any
	refs  []string
	nodes int
}

// schema normalises one schema node (see the package documentation) and
// returns a new map; shared sub-trees (inlined $ref targets) are never
// modified in place. Every node is read (node), inlined ($ref), filtered to
// the keywords a CRD holds (keywords), brought to OpenAPI v3's spelling
// (draft6, normaliseType), has its unions simplified (structural levels),
// its sub-schemas normalised (children), and is then finished as its level
// requires (finish).
func (n *normalizer) schema(v any, p *field.Path, lvl level, depth int) (map[string]any, error) {
	in, err := n.node(v, p, lvl, depth)
	if err != nil {
		return nil, err
	}
	if ref, ok := in["$ref"]; ok {
		return n.inlineRef(in, ref, p, lvl, depth)
	}
	m, err := keywords(in, p)
	if err != nil {
		return nil, err
	}
	draft6(m)
	if err := normaliseType(m, p); err != nil {
		return nil, err
	}
	if lvl.structural() {
		if merged, ok := nullableMerge(m); ok {
			return n.schema(merged, p, lvl, depth+1)
		}
		intOrString(m)
	}
	if err := n.children(m, p, lvl, depth); err != nil {
		return nil, err
	}
	return finish(m, p, lvl)
}

// node counts the node against the limits and returns it as a schema
// object: true (any value) outside value validations becomes an object that
// preserves unknown fields.
func (n *normalizer) node(v any, p *field.Path, lvl level, depth int) (map[string]any, error) {
	n.nodes++
	if n.nodes > maxNodes {
		return nil, newError(reasonInvalidSchema, p.String(), "the schema has more than %d nodes (after inlining $ref); simplify it", maxNodes)
	}
	if depth > maxDepth {
		return nil, newError(reasonInvalidSchema, p.String(), "the schema nests deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case bool:
		if x && lvl != levelValue {
			return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, nil
		}
		return nil, newError(reasonInvalidSchema, p.String(), "a boolean schema (%t) is not supported here; write a schema object", x)
	}
	return nil, newError(reasonInvalidSchema, p.String(), "must be a schema (a JSON object), got %s", jsonKind(v))
}

// keywords returns a copy of the node with the extensions and keywords a CRD
// schema holds (keywords.go says which), each of the right JSON type.
func keywords(in map[string]any, p *field.Path) (map[string]any, error) {
	m := make(map[string]any, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		val := in[k]
		switch {
		case strings.HasPrefix(k, "x-"):
			if keptExtensions[k] {
				m[k] = val
			}
		case droppedKeywords[k]:
		case refusedKeywords[k] != "":
			return nil, newError(reasonInvalidSchema, p.Child(k).String(), "%s is not supported by Kubernetes CRD schemas: %s", k, refusedKeywords[k])
		case keptKeywords[k]:
			if err := checkKeywordType(k, val, p); err != nil {
				return nil, err
			}
			m[k] = val
		default:
			// Unknown keywords were ignored upstream too; keep ignoring them.
		}
	}
	return m, nil
}

// draft6 rewrites what later JSON Schema drafts spell differently: exclusive
// bounds as numbers (CRDs take booleans next to minimum/maximum) and const
// (an enum of one value, unless an enum is set).
func draft6(m map[string]any) {
	for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if num, ok := m[b[0]].(json.Number); ok {
			m[b[1]] = num
			m[b[0]] = true
		}
	}
	if c, ok := m["const"]; ok {
		delete(m, "const")
		if _, has := m["enum"]; !has {
			m["enum"] = []any{c}
		}
	}
}

// children normalises the node's sub-schemas in place: additionalProperties
// and properties and items at the level below, allOf/anyOf/oneOf/not as
// value validations.
func (n *normalizer) children(m map[string]any, p *field.Path, lvl level, depth int) error {
	sub := lvl.sub()
	if ap, ok := m["additionalProperties"]; ok {
		switch x := ap.(type) {
		case bool:
			delete(m, "additionalProperties")
			if x && lvl != levelValue {
				m["x-kubernetes-preserve-unknown-fields"] = true
			}
		case map[string]any:
			s, err := n.schema(x, p.Child("additionalProperties"), sub, depth+1)
			if err != nil {
				return err
			}
			m["additionalProperties"] = s
		default:
			return newError(reasonInvalidSchema, p.Child("additionalProperties").String(), "must be a boolean or a schema, got %s", jsonKind(ap))
		}
	}
	if props, ok := m["properties"]; ok {
		pm, isMap := props.(map[string]any)
		if !isMap {
			return newError(reasonInvalidSchema, p.Child("properties").String(), "must be an object mapping names to schemas, got %s", jsonKind(props))
		}
		out := make(map[string]any, len(pm))
		for _, name := range slices.Sorted(maps.Keys(pm)) {
			s, err := n.schema(pm[name], p.Child("properties").Key(name), sub, depth+1)
			if err != nil {
				return err
			}
			out[name] = s
		}
		if len(out) == 0 {
			delete(m, "properties")
		} else {
			m["properties"] = out
		}
	}
	if items, ok := m["items"]; ok {
		if _, tuple := items.([]any); tuple {
			return newError(reasonInvalidSchema, p.Child("items").String(), "a list of item schemas (tuple validation) is not supported by Kubernetes CRD schemas: describe the items with one schema")
		}
		s, err := n.schema(items, p.Child("items"), sub, depth+1)
		if err != nil {
			return err
		}
		m["items"] = s
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, ok := m[key]
		if !ok {
			continue
		}
		branches, isList := list.([]any)
		if !isList {
			return newError(reasonInvalidSchema, p.Child(key).String(), "must be a list of schemas, got %s", jsonKind(list))
		}
		out := make([]any, 0, len(branches))
		for i, b := range branches {
			s, err := n.schema(b, p.Child(key).Index(i), levelValue, depth+1)
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		m[key] = out
	}
	if not, ok := m["not"]; ok {
		s, err := n.schema(not, p.Child("not"), levelValue, depth+1)
		if err != nil {
			return err
		}
		m["not"] = s
	}
	return nil
}
