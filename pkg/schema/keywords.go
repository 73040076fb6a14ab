package schema

import (
	"encoding/json"
	"sort"

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
