package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file reads the schema text and turns the normalised schema into the
// CRD type (ParseOpenAPISchema); the normaliser itself is in normalize.go
// (every node), normalize_levels.go (what each level adds), keywords.go
// (which keywords are kept, dropped or refused) and ref.go ($ref).

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
