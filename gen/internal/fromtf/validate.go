package fromtf

import (
	"encoding/json"
	"math/big"
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// constraint is one schema keyword to set on a node.
type constraint struct {
	node  map[string]any
	key   string
	value any
}

// apply sets the keyword; a node that already has it with another value
// gets the new one in allOf, so both hold.
func (c constraint) apply() {
	if c.key == "x-kubernetes-validations" {
		rules, _ := c.node[c.key].([]any)
		c.node[c.key] = append(rules, c.value)
		return
	}
	old, ok := c.node[c.key]
	if !ok {
		c.node[c.key] = c.value
		return
	}
	if reflect.DeepEqual(normal(old), normal(c.value)) {
		return
	}
	all, _ := c.node["allOf"].([]any)
	c.node["allOf"] = append(all, map[string]any{c.key: c.value})
}

func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// translator turns a validation condition into schema keywords, where it
// can do so exactly.
type translator struct {
	varName string
	root    map[string]any
	msg     string
}

// translate returns the constraints the condition implies and whether they
// say all it says. Only constraints that every valid value satisfies are
// returned, so they are safe to apply even when ok is false.
func (t *translator) translate(e hclsyntax.Expression, scope map[string]map[string]any) ([]constraint, bool) {
	switch x := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		return t.translate(x.Expression, scope)
	case *hclsyntax.BinaryOpExpr:
		switch x.Op {
		case hclsyntax.OpLogicalAnd:
			l, lok := t.translate(x.LHS, scope)
			r, rok := t.translate(x.RHS, scope)
			return append(l, r...), lok && rok
		case hclsyntax.OpLogicalOr:
			// var.x == null || cond: absent values are not validated by the
			// API server, so cond is what remains.
			for _, pair := range [][2]hclsyntax.Expression{{x.LHS, x.RHS}, {x.RHS, x.LHS}} {
				if t.isNullCheck(pair[0], scope) {
					return t.translate(pair[1], scope)
				}
			}
			return nil, false
		}
		return t.comparison(x, scope)
	case *hclsyntax.FunctionCallExpr:
		switch x.Name {
		case "can":
			if len(x.Args) == 1 {
				if call, ok := x.Args[0].(*hclsyntax.FunctionCallExpr); ok {
					return t.can(call, scope)
				}
			}
		case "contains":
			if len(x.Args) == 2 {
				node, ok := t.subject(x.Args[1], scope)
				vals, vok := constList(x.Args[0])
				if ok && vok && len(vals) > 0 && scalarType(node) {
					return []constraint{{node, "enum", vals}}, true
				}
			}
		case "alltrue":
			if len(x.Args) == 1 {
				if f, ok := x.Args[0].(*hclsyntax.ForExpr); ok && f.CondExpr == nil && f.KeyExpr == nil {
					coll, ok := t.subject(f.CollExpr, scope)
					if !ok {
						return nil, false
					}
					var elem map[string]any
					if items, ok := coll["items"].(map[string]any); ok {
						elem = items
					} else if ap, ok := coll["additionalProperties"].(map[string]any); ok {
						elem = ap
					}
					if elem == nil {
						return nil, false
					}
					inner := map[string]map[string]any{}
					for k, v := range scope {
						inner[k] = v
					}
					inner[f.ValVar] = elem
					if f.KeyVar != "" {
						delete(inner, f.KeyVar)
					}
					return t.translate(f.ValExpr, inner)
				}
			}
		}
	}
	return nil, false
}

// can translates can(regex("re", x)) and can(cidrhost(x, n)) and friends.
func (t *translator) can(call *hclsyntax.FunctionCallExpr, scope map[string]map[string]any) ([]constraint, bool) {
	switch call.Name {
	case "regex":
		if len(call.Args) != 2 {
			return nil, false
		}
		node, ok := t.subject(call.Args[1], scope)
		re, rok := constString(call.Args[0])
		if ok && rok && node["type"] == "string" {
			return []constraint{{node, "pattern", re}}, true
		}
	case "cidrhost", "cidrnetmask", "cidrsubnet", "cidrsubnets":
		if len(call.Args) == 0 {
			return nil, false
		}
		node, ok := t.subject(call.Args[0], scope)
		if ok && node["type"] == "string" {
			// format: cidr is checked by the API server (net.ParseCIDR),
			// at no CEL cost, in lists and maps too.
			return []constraint{{node, "format", "cidr"}}, true
		}
	}
	return nil, false
}

// comparison translates length(x) OP n, x OP n and x != "".
func (t *translator) comparison(x *hclsyntax.BinaryOpExpr, scope map[string]map[string]any) ([]constraint, bool) {
	op := x.Op
	lhs, rhs := x.LHS, x.RHS
	n, ok := constNumber(rhs)
	if !ok {
		// n OP subject: flip it.
		if n, ok = constNumber(lhs); !ok {
			if op == hclsyntax.OpNotEqual {
				return t.notEmpty(lhs, rhs, scope)
			}
			return nil, false
		}
		lhs, rhs = rhs, lhs
		op = flip(op)
	}
	if call, isCall := lhs.(*hclsyntax.FunctionCallExpr); isCall && call.Name == "length" && len(call.Args) == 1 {
		node, ok := t.subject(call.Args[0], scope)
		if !ok || !n.IsInt() {
			return nil, false
		}
		var minKey, maxKey string
		switch node["type"] {
		case "string":
			minKey, maxKey = "minLength", "maxLength"
		case "array":
			minKey, maxKey = "minItems", "maxItems"
		case "object":
			minKey, maxKey = "minProperties", "maxProperties"
		default:
			return nil, false
		}
		v, _ := n.Int64()
		switch op {
		case hclsyntax.OpLessThan:
			return []constraint{{node, maxKey, v - 1}}, v >= 1
		case hclsyntax.OpLessThanOrEqual:
			return []constraint{{node, maxKey, v}}, v >= 0
		case hclsyntax.OpGreaterThan:
			return []constraint{{node, minKey, v + 1}}, v >= -1
		case hclsyntax.OpGreaterThanOrEqual:
			if v < 0 {
				return nil, true
			}
			return []constraint{{node, minKey, v}}, true
		case hclsyntax.OpEqual:
			return []constraint{{node, minKey, v}, {node, maxKey, v}}, v >= 0
		}
		return nil, false
	}
	node, ok := t.subject(lhs, scope)
	if !ok || (node["type"] != "number" && node["type"] != "integer") {
		return nil, false
	}
	num := json.Number(n.Text('g', -1))
	switch op {
	case hclsyntax.OpLessThan:
		return []constraint{{node, "maximum", num}, {node, "exclusiveMaximum", true}}, true
	case hclsyntax.OpLessThanOrEqual:
		return []constraint{{node, "maximum", num}}, true
	case hclsyntax.OpGreaterThan:
		return []constraint{{node, "minimum", num}, {node, "exclusiveMinimum", true}}, true
	case hclsyntax.OpGreaterThanOrEqual:
		return []constraint{{node, "minimum", num}}, true
	case hclsyntax.OpEqual:
		return []constraint{{node, "enum", []any{num}}}, true
	}
	return nil, false
}

// notEmpty translates x != "" into minLength: 1.
func (t *translator) notEmpty(lhs, rhs hclsyntax.Expression, scope map[string]map[string]any) ([]constraint, bool) {
	for _, pair := range [][2]hclsyntax.Expression{{lhs, rhs}, {rhs, lhs}} {
		if s, ok := constString(pair[1]); ok && s == "" {
			if node, ok := t.subject(pair[0], scope); ok && node["type"] == "string" {
				return []constraint{{node, "minLength", int64(1)}}, true
			}
		}
	}
	return nil, false
}

func flip(op *hclsyntax.Operation) *hclsyntax.Operation {
	switch op {
	case hclsyntax.OpLessThan:
		return hclsyntax.OpGreaterThan
	case hclsyntax.OpLessThanOrEqual:
		return hclsyntax.OpGreaterThanOrEqual
	case hclsyntax.OpGreaterThan:
		return hclsyntax.OpLessThan
	case hclsyntax.OpGreaterThanOrEqual:
		return hclsyntax.OpLessThanOrEqual
	}
	return op
}

func (t *translator) isNullCheck(e hclsyntax.Expression, scope map[string]map[string]any) bool {
	b, ok := e.(*hclsyntax.BinaryOpExpr)
	if !ok || b.Op != hclsyntax.OpEqual {
		return false
	}
	for _, pair := range [][2]hclsyntax.Expression{{b.LHS, b.RHS}, {b.RHS, b.LHS}} {
		if lit, ok := pair[1].(*hclsyntax.LiteralValueExpr); ok && lit.Val.IsNull() {
			if _, ok := t.subject(pair[0], scope); ok {
				return true
			}
		}
	}
	return false
}

// subject resolves var.<name>(.attr)* or a for-expression's variable to
// the schema node it is about.
func (t *translator) subject(e hclsyntax.Expression, scope map[string]map[string]any) (map[string]any, bool) {
	tr, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		return nil, false
	}
	var node map[string]any
	steps := tr.Traversal
	root := steps.RootName()
	switch {
	case root == "var":
		if len(steps) < 2 {
			return nil, false
		}
		attr, ok := steps[1].(hcl.TraverseAttr)
		if !ok || attr.Name != t.varName {
			return nil, false
		}
		node, steps = t.root, steps[2:]
	case scope[root] != nil:
		node, steps = scope[root], steps[1:]
	default:
		return nil, false
	}
	for _, s := range steps {
		attr, ok := s.(hcl.TraverseAttr)
		if !ok {
			return nil, false
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[attr.Name].(map[string]any)
		if !ok {
			return nil, false
		}
		node = next
	}
	return node, true
}

func scalarType(node map[string]any) bool {
	switch node["type"] {
	case "string", "number", "integer", "boolean":
		return true
	}
	return false
}

func constValue(e hclsyntax.Expression) (cty.Value, bool) {
	if len(e.Variables()) > 0 {
		return cty.NilVal, false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return cty.NilVal, false
	}
	return v, true
}

func constString(e hclsyntax.Expression) (string, bool) {
	v, ok := constValue(e)
	if !ok || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

func constNumber(e hclsyntax.Expression) (*big.Float, bool) {
	v, ok := constValue(e)
	if !ok || v.Type() != cty.Number {
		return nil, false
	}
	return v.AsBigFloat(), true
}

func constList(e hclsyntax.Expression) ([]any, bool) {
	v, ok := constValue(e)
	if !ok {
		return nil, false
	}
	t := v.Type()
	if !t.IsTupleType() && !t.IsListType() && !t.IsSetType() {
		return nil, false
	}
	var out []any
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() {
			return nil, false
		}
		switch ev.Type() {
		case cty.String:
			out = append(out, ev.AsString())
		case cty.Number:
			out = append(out, json.Number(ev.AsBigFloat().Text('g', -1)))
		case cty.Bool:
			out = append(out, ev.True())
		default:
			return nil, false
		}
	}
	return out, true
}
