package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Extensions kept from the definition's schema: the ones CRD schemas support.
var keptExtensions = map[string]bool{
	"x-kubernetes-preserve-unknown-fields": true,
	"x-kubernetes-int-or-string":           true,
	"x-kubernetes-embedded-resource":       true,
	"x-kubernetes-list-type":               true,
	"x-kubernetes-list-map-keys":           true,
	"x-kubernetes-map-type":                true,
	"x-kubernetes-validations":             true,
}

// Keywords of a CRD schema (apiextensionsv1.JSONSchemaProps) that are kept
// as written (after normalisation of their sub-schemas).
var keptKeywords = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "default": true, "example": true,
	"externalDocs": true, "nullable": true, "enum": true,
	"maximum": true, "exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true, "multipleOf": true,
	"maxLength": true, "minLength": true, "pattern": true,
	"maxItems": true, "minItems": true, "uniqueItems": true, "items": true,
	"maxProperties": true, "minProperties": true, "required": true, "properties": true, "additionalProperties": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"const": true, "$ref": true,
}

// Annotations CRD schemas reject or cannot hold; dropped.
var droppedKeywords = map[string]bool{
	"$schema": true, "$id": true, "id": true, "$comment": true, "$anchor": true, "examples": true,
	"readOnly": true, "writeOnly": true, "deprecated": true, "contentEncoding": true, "contentMediaType": true,
	"definitions": true, "$defs": true,
}

// Keywords that constrain values in ways a CRD cannot enforce; refused.
var refusedKeywords = map[string]string{
	"patternProperties":     "use additionalProperties with a schema for maps",
	"dependencies":          "express it with x-kubernetes-validations (CEL)",
	"dependentRequired":     "express it with x-kubernetes-validations (CEL)",
	"dependentSchemas":      "express it with x-kubernetes-validations (CEL)",
	"propertyNames":         "express it with x-kubernetes-validations (CEL) on a map",
	"if":                    "express it with x-kubernetes-validations (CEL)",
	"then":                  "express it with x-kubernetes-validations (CEL)",
	"else":                  "express it with x-kubernetes-validations (CEL)",
	"unevaluatedProperties": "use additionalProperties",
	"unevaluatedItems":      "describe the items with items",
	"prefixItems":           "describe the items with one items schema",
	"contains":              "express it with x-kubernetes-validations (CEL)",
	"minContains":           "express it with x-kubernetes-validations (CEL)",
	"maxContains":           "express it with x-kubernetes-validations (CEL)",
	"additionalItems":       "describe the items with one items schema",
}

// Limits that keep a hostile or broken schema from exhausting memory.
const (
	maxRefDepth = 32
	maxNodes    = 20000
	maxDepth    = 64
)

// ParseOpenAPISchema reads a definition's application.openAPISchema and
// returns it as a structural schema for an instance's spec (see the package
// documentation for every change it makes). Errors are *Error: InvalidJSON
// with the offset, line and column of a syntax error, InvalidSchema with the
// path of the offending field (openAPISchema.properties[size].type).
//
// Only the structural-schema checks run here; BuildCRD validates the whole
// CRD (defaults, CEL rules and their cost) as the API server would.
func ParseOpenAPISchema(s string) (*apiextensionsv1.JSONSchemaProps, error) {
	raw, err := decodeJSON(s)
	if err != nil {
		return nil, err
	}
	n := &normalizer{root: raw}
	node, err := n.schema(raw, field.NewPath(schemaRoot), levelRoot, 0)
	if err != nil {
		return nil, err
	}
	props, err := toProps(node)
	if err != nil {
		return nil, err
	}
	if err := checkStructural(props); err != nil {
		return nil, err
	}
	if err := expandDefaults(props); err != nil {
		return nil, err
	}
	return props, nil
}

// decodeJSON parses the schema text, keeping numbers exact.
func decodeJSON(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			// Offset counts the bytes read, the offending one included.
			return nil, jsonError(s, syn.Offset-1, syn.Error())
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, jsonError(s, int64(len(s)), "unexpected end of JSON input")
		default:
			return nil, &Error{Reason: reasonInvalidJSON, Field: schemaRoot, Message: "openAPISchema is not valid JSON: " + err.Error()}
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, jsonError(s, dec.InputOffset(), "unexpected data after the top-level value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, newError(reasonInvalidSchema, schemaRoot, "must be a JSON object describing the instance's spec, got %s", jsonKind(v))
	}
	return m, nil
}

func jsonError(s string, offset int64, msg string) *Error {
	if offset > int64(len(s)) {
		offset = int64(len(s))
	}
	if offset < 0 {
		offset = 0
	}
	line, col := 1, 1
	for _, r := range s[:offset] {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{
		Reason:  reasonInvalidJSON,
		Field:   schemaRoot,
		Message: fmt.Sprintf("openAPISchema is not valid JSON: %s at offset %d (line %d, column %d)", msg, offset, line, col),
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

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

type normalizer struct {
	root  map[string]any
	refs  []string
	nodes int
}

// schema normalises one schema node (see the package documentation) and
// returns a new map; shared sub-trees (inlined $ref targets) are never
// modified in place.
func (n *normalizer) schema(v any, p *field.Path, lvl level, depth int) (map[string]any, error) {
	n.nodes++
	if n.nodes > maxNodes {
		return nil, newError(reasonInvalidSchema, p.String(), "the schema has more than %d nodes (after inlining $ref); simplify it", maxNodes)
	}
	if depth > maxDepth {
		return nil, newError(reasonInvalidSchema, p.String(), "the schema nests deeper than %d levels", maxDepth)
	}
	var in map[string]any
	switch x := v.(type) {
	case map[string]any:
		in = x
	case bool:
		if x && lvl != levelValue {
			in = map[string]any{"x-kubernetes-preserve-unknown-fields": true}
			break
		}
		return nil, newError(reasonInvalidSchema, p.String(), "a boolean schema (%t) is not supported here; write a schema object", x)
	default:
		return nil, newError(reasonInvalidSchema, p.String(), "must be a schema (a JSON object), got %s", jsonKind(v))
	}

	if ref, ok := in["$ref"]; ok {
		return n.inlineRef(in, ref, p, lvl, depth)
	}

	m := make(map[string]any, len(in))
	for _, k := range sortedKeys(in) {
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

	// Draft 6+ writes exclusive bounds as numbers; CRDs as booleans.
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

	if err := normaliseType(m, p); err != nil {
		return nil, err
	}

	if lvl != levelValue {
		// anyOf/oneOf of a schema and null: that schema, nullable.
		for _, key := range []string{"anyOf", "oneOf"} {
			if merged, ok := nullableUnion(m, key); ok {
				return n.schema(merged, p, lvl, depth+1)
			}
		}
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

	sub := levelField
	if lvl == levelValue {
		sub = levelValue
	}

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
				return nil, err
			}
			m["additionalProperties"] = s
		default:
			return nil, newError(reasonInvalidSchema, p.Child("additionalProperties").String(), "must be a boolean or a schema, got %s", jsonKind(ap))
		}
	}

	if props, ok := m["properties"]; ok {
		pm, isMap := props.(map[string]any)
		if !isMap {
			return nil, newError(reasonInvalidSchema, p.Child("properties").String(), "must be an object mapping names to schemas, got %s", jsonKind(props))
		}
		out := make(map[string]any, len(pm))
		for _, name := range sortedKeys(pm) {
			s, err := n.schema(pm[name], p.Child("properties").Key(name), sub, depth+1)
			if err != nil {
				return nil, err
			}
			out[name] = s
		}
		if len(out) == 0 {
			delete(m, "properties")
		} else {
			m["properties"] = out
		}
	}

	// A CRD cannot say "these properties, and other keys of this schema":
	// keep the properties and preserve the other keys unvalidated.
	if _, hasProps := m["properties"]; hasProps && lvl != levelValue {
		if _, hasAP := m["additionalProperties"]; hasAP {
			delete(m, "additionalProperties")
			m["x-kubernetes-preserve-unknown-fields"] = true
		}
	}

	if items, ok := m["items"]; ok {
		switch x := items.(type) {
		case []any:
			return nil, newError(reasonInvalidSchema, p.Child("items").String(), "a list of item schemas (tuple validation) is not supported by Kubernetes CRD schemas: describe the items with one schema")
		default:
			s, err := n.schema(x, p.Child("items"), sub, depth+1)
			if err != nil {
				return nil, err
			}
			m["items"] = s
		}
	}

	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, ok := m[key]
		if !ok {
			continue
		}
		branches, isList := list.([]any)
		if !isList {
			return nil, newError(reasonInvalidSchema, p.Child(key).String(), "must be a list of schemas, got %s", jsonKind(list))
		}
		out := make([]any, 0, len(branches))
		for i, b := range branches {
			s, err := n.schema(b, p.Child(key).Index(i), levelValue, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		m[key] = out
	}
	if not, ok := m["not"]; ok {
		s, err := n.schema(not, p.Child("not"), levelValue, depth+1)
		if err != nil {
			return nil, err
		}
		m["not"] = s
	}

	if u, ok := m["uniqueItems"]; ok {
		delete(m, "uniqueItems")
		if u == true && lvl != levelValue {
			if it, ok := m["items"].(map[string]any); ok && isScalarType(it["type"]) && it["nullable"] != true {
				if _, set := m["x-kubernetes-list-type"]; !set {
					m["x-kubernetes-list-type"] = "set"
				}
			}
		}
	}

	if lvl == levelRoot {
		if _, typed := m["type"]; !typed && m["x-kubernetes-int-or-string"] != true {
			m["type"] = "object"
		}
	}
	if lvl != levelValue {
		inferType(m)
	}
	if lvl == levelRoot {
		if t, _ := m["type"].(string); t != "object" {
			return nil, newError(reasonInvalidSchema, p.Child("type").String(), "must be object: openAPISchema describes an instance's spec, which is an object (got %q)", t)
		}
	}
	return m, nil
}

var (
	numberKeywords  = map[string]bool{"maximum": true, "minimum": true, "multipleOf": true}
	integerKeywords = map[string]bool{"maxLength": true, "minLength": true, "maxItems": true, "minItems": true, "maxProperties": true, "minProperties": true}
	boolKeywords    = map[string]bool{"nullable": true, "uniqueItems": true, "x-kubernetes-preserve-unknown-fields": true,
		"x-kubernetes-int-or-string": true, "x-kubernetes-embedded-resource": true}
	stringKeywords = map[string]bool{"format": true, "title": true, "description": true, "pattern": true,
		"x-kubernetes-list-type": true, "x-kubernetes-map-type": true}
	stringListKeywords = map[string]bool{"required": true, "x-kubernetes-list-map-keys": true}
)

// checkKeywordType checks the JSON type of a keyword's value, so a mistake
// is reported with the field's full path.
func checkKeywordType(k string, v any, p *field.Path) error {
	bad := func(want string) error {
		return newError(reasonInvalidSchema, p.Child(k).String(), "must be %s, got %s", want, jsonKind(v))
	}
	switch {
	case numberKeywords[k]:
		if _, ok := v.(json.Number); !ok {
			return bad("a number")
		}
	case integerKeywords[k]:
		n, ok := v.(json.Number)
		if !ok {
			return bad("an integer")
		}
		if _, err := n.Int64(); err != nil {
			return bad("an integer")
		}
	case boolKeywords[k]:
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	case k == "exclusiveMinimum" || k == "exclusiveMaximum":
		switch v.(type) {
		case bool, json.Number:
		default:
			return bad("a boolean or a number")
		}
	case stringKeywords[k]:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case stringListKeywords[k]:
		l, ok := v.([]any)
		if !ok {
			return bad("a list of strings")
		}
		for _, e := range l {
			if _, ok := e.(string); !ok {
				return bad("a list of strings")
			}
		}
	case k == "enum":
		if _, ok := v.([]any); !ok {
			return bad("a list")
		}
	case k == "x-kubernetes-validations":
		l, ok := v.([]any)
		if !ok {
			return bad("a list of rules")
		}
		for _, e := range l {
			if _, ok := e.(map[string]any); !ok {
				return bad("a list of rules")
			}
		}
	}
	return nil
}

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

// normaliseType reads JSON Schema's type lists: [X, "null"] is a nullable X,
// [integer, string] is int-or-string, [integer, number] is a number.
func normaliseType(m map[string]any, p *field.Path) error {
	t, ok := m["type"]
	if !ok {
		return nil
	}
	switch x := t.(type) {
	case string:
		if x == "null" {
			return newError(reasonInvalidSchema, p.Child("type").String(), `"null" alone is not a type Kubernetes can store; use nullable: true on the field's real type`)
		}
		return nil
	case []any:
		var types []string
		for _, e := range x {
			s, isString := e.(string)
			if !isString {
				return newError(reasonInvalidSchema, p.Child("type").String(), "must be a string or a list of strings")
			}
			if s == "null" {
				m["nullable"] = true
				continue
			}
			types = append(types, s)
		}
		sort.Strings(types)
		switch {
		case len(types) == 1:
			m["type"] = types[0]
		case len(types) == 2 && types[0] == "integer" && types[1] == "string":
			delete(m, "type")
			m["x-kubernetes-int-or-string"] = true
		case len(types) == 2 && types[0] == "integer" && types[1] == "number":
			m["type"] = "number"
		default:
			return newError(reasonInvalidSchema, p.Child("type").String(),
				"a value of several types %v cannot be expressed in a CRD: pick one type, or use x-kubernetes-preserve-unknown-fields: true to accept any value", types)
		}
		return nil
	default:
		return newError(reasonInvalidSchema, p.Child("type").String(), "must be a string, got %s", jsonKind(t))
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// toProps decodes the normalised schema into the CRD type, strictly: a
// keyword with a value of the wrong JSON type is an error naming it.
func toProps(m map[string]any) (*apiextensionsv1.JSONSchemaProps, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, newError(reasonInvalidSchema, schemaRoot, "cannot re-encode the schema: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := dec.Decode(props); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			fld := schemaRoot
			if te.Field != "" {
				fld += "." + te.Field
			}
			return nil, newError(reasonInvalidSchema, fld, "must be %s, got a JSON %s", goTypeName(te.Type.String()), te.Value)
		}
		return nil, newError(reasonInvalidSchema, schemaRoot, "%v", err)
	}
	return props, nil
}

func goTypeName(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "float"):
		return "a number"
	case t == "bool":
		return "a boolean"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map"):
		return "an object"
	}
	return "a " + t
}

// checkStructural runs the API server's structural-schema checks on the
// spec schema, placed where a CRD places it (a property of the root).
func checkStructural(props *apiextensionsv1.JSONSchemaProps) error {
	wrapper := &apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": *props},
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(wrapper, internal, nil); err != nil {
		return newError(reasonInvalidSchema, schemaRoot, "%v", err)
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return newError(reasonInvalidSchema, schemaRoot, "not a structural schema: %v", err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		return fromFieldErrors(reasonInvalidSchema, "openAPISchema is not a structural schema", errs)
	}
	return nil
}
