package schema

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// inlineRef replaces a local $ref by its target; the node's other keys
// (say, a description or a default) override the target's.
func (n *normalizer) inlineRef(in map[string]any, ref any, p *field.Path, lvl level, depth int) (map[string]any, error) {
	rp := p.Child("$ref").String()
	s, ok := ref.(string)
	if !ok {
		return nil, newError(reasonInvalidSchema, rp, "must be a string, got %s", jsonKind(ref))
	}
	if !strings.HasPrefix(s, "#/") && s != "#" {
		return nil, newError(reasonInvalidSchema, rp, "only local references (#/definitions/... or #/$defs/...) can be inlined, got %q", s)
	}
	for _, r := range n.refs {
		if r == s {
			return nil, newError(reasonInvalidSchema, rp, "%q refers to itself (recursive schemas cannot be expressed in a CRD)", s)
		}
	}
	if len(n.refs) >= maxRefDepth {
		return nil, newError(reasonInvalidSchema, rp, "references nest deeper than %d", maxRefDepth)
	}
	target, err := n.resolve(s)
	if err != nil {
		return nil, newError(reasonInvalidSchema, rp, "%v", err)
	}
	tm, ok := target.(map[string]any)
	if !ok {
		return nil, newError(reasonInvalidSchema, rp, "%q does not point to a schema object", s)
	}
	merged := make(map[string]any, len(tm)+len(in))
	for k, v := range tm {
		merged[k] = v
	}
	for k, v := range in {
		if k != "$ref" {
			merged[k] = v
		}
	}
	n.refs = append(n.refs, s)
	defer func() { n.refs = n.refs[:len(n.refs)-1] }()
	return n.schema(merged, p, lvl, depth+1)
}

// resolve follows a JSON pointer (RFC 6901) from the document root.
func (n *normalizer) resolve(ref string) (any, error) {
	var cur any = n.root
	if ref == "#" {
		return cur, nil
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("%q does not exist in the schema", ref)
			}
			cur = v
		default:
			return nil, fmt.Errorf("%q does not exist in the schema", ref)
		}
	}
	return cur, nil
}
