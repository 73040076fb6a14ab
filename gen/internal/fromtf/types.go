package fromtf

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

func attrRange(attrs hclsyntax.Attributes, name string, blk *hclsyntax.Block) hcl.Range {
	if a, ok := attrs[name]; ok {
		return a.SrcRange
	}
	return blk.DefRange()
}

// inferType is the type of a variable without one, from its default:
// primitives as they are, collections as free-form.
func inferType(t cty.Type) cty.Type {
	switch {
	case t.IsPrimitiveType():
		return t
	case t.IsObjectType() || t.IsMapType():
		return cty.Map(cty.DynamicPseudoType)
	case t.IsTupleType() || t.IsListType() || t.IsSetType():
		return cty.List(cty.DynamicPseudoType)
	}
	return cty.DynamicPseudoType
}

// toJSON renders a constant as a JSON value, without null attributes (an
// optional attribute without a default: absent in Kubernetes).
func toJSON(v cty.Value) (any, error) {
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, err
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return dropNulls(out), nil
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

func childDefaults(d *typeexpr.Defaults, key string) *typeexpr.Defaults {
	if d == nil {
		return nil
	}
	return d.Children[key]
}

// typeSchema is the OpenAPI schema of a Terraform type constraint.
func typeSchema(ty cty.Type, d *typeexpr.Defaults, file string, rng hcl.Range, fld string) (map[string]any, error) {
	switch {
	case ty == cty.DynamicPseudoType:
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, nil
	case ty == cty.String:
		return map[string]any{"type": "string"}, nil
	case ty == cty.Number:
		return map[string]any{"type": "number"}, nil
	case ty == cty.Bool:
		return map[string]any{"type": "boolean"}, nil
	case ty.IsListType() || ty.IsSetType():
		items, err := typeSchema(ty.ElementType(), childDefaults(d, ""), file, rng, fld+"[*]")
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "array", "items": items}
		if ty.IsSetType() {
			s["uniqueItems"] = true
		}
		return s, nil
	case ty.IsMapType():
		vals, err := typeSchema(ty.ElementType(), childDefaults(d, ""), file, rng, fld+"[*]")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case ty.IsObjectType():
		attrs := ty.AttributeTypes()
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		props := map[string]any{}
		var required []any
		for _, n := range names {
			p, err := typeSchema(attrs[n], childDefaults(d, n), file, rng, fld+"."+n)
			if err != nil {
				return nil, err
			}
			if d != nil {
				if dv, ok := d.DefaultValues[n]; ok && !dv.IsNull() {
					if conv, err := convert.Convert(dv, attrs[n]); err == nil {
						dv = conv
					}
					j, err := toJSON(dv)
					if err != nil {
						return nil, posError(file, rng, fld+"."+n, "default: %v", err)
					}
					p["default"] = j
				}
			}
			props[n] = p
			if !ty.AttributeOptional(n) {
				required = append(required, n)
			}
		}
		s := map[string]any{"type": "object"}
		if len(props) > 0 {
			s["properties"] = props
		}
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	case ty.IsTupleType():
		elems := ty.TupleElementTypes()
		if len(elems) == 0 {
			return map[string]any{"type": "array", "maxItems": 0}, nil
		}
		for _, e := range elems[1:] {
			if !e.Equals(elems[0]) {
				return nil, posError(file, rng, fld, "%s: a tuple of different element types cannot be expressed in a CRD schema "+
					"(a list has one item schema): use list(T), or an object with one attribute per position", typeexpr.TypeString(ty))
			}
		}
		items, err := typeSchema(elems[0], childDefaults(d, "0"), file, rng, fld+"[*]")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items, "minItems": len(elems), "maxItems": len(elems)}, nil
	}
	return nil, posError(file, rng, fld, "the type %s cannot be expressed in a CRD schema", typeexpr.TypeString(ty))
}
