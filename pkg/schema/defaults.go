package schema

import (
	"encoding/json"
	"reflect"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// expandDefaults rewrites every object or array default in the spec schema
// as the value the API server stores when it applies that default: the
// default as written, with the defaults of its members applied, recursively
// (the API server's own defaulting algorithm). An instance therefore gets
// exactly what it got before the rewrite; only the CRD changes.
//
// Why: a definition written for upstream Cozystack often says
//
//	"backup": {"type": "object", "default": {}, "required": ["enabled"],
//	           "properties": {"enabled": {"type": "boolean", "default": false}}}
//
// Upstream defaults instances in its own code, which applies the nested
// defaults after the object's default and so stores {"enabled": false}. The
// API server does the same when it defaults an instance, but when it accepts a
// CRD it checks each default as written, and {} lacks the required "enabled":
// the CRD would be refused. Written as {"enabled": false}, the default is
// valid and means the same.
//
// A default that still does not satisfy its schema once expanded (a required
// member with no default, a value of the wrong type, a value outside its
// enum) is left for the CRD validation in Build, which refuses it naming the
// field, e.g. openAPISchema.properties[backup].default.enabled.
//
// Scalar defaults and defaults that expansion does not change keep their
// bytes as written. Defaults inside value validations (anyOf, oneOf, allOf,
// not) are not touched: the API server ignores them when defaulting and the
// CRD validation refuses them.
func expandDefaults(props *apiextensionsv1.JSONSchemaProps) error {
	return expandDefaultsAt(props, field.NewPath(schemaRoot))
}

func expandDefaultsAt(s *apiextensionsv1.JSONSchemaProps, p *field.Path) error {
	if s == nil {
		return nil
	}
	for _, name := range sortedPropNames(s.Properties) {
		child := s.Properties[name]
		if err := expandDefaultsAt(&child, p.Child("properties").Key(name)); err != nil {
			return err
		}
		s.Properties[name] = child
	}
	if s.Items != nil && s.Items.Schema != nil {
		if err := expandDefaultsAt(s.Items.Schema, p.Child("items")); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		if err := expandDefaultsAt(s.AdditionalProperties.Schema, p.Child("additionalProperties")); err != nil {
			return err
		}
	}
	if s.Default == nil {
		return nil
	}
	expanded, changed, err := expandedDefault(s)
	if err != nil {
		return newError(reasonInvalidSchema, p.Child("default").String(), "%v", err)
	}
	if changed {
		s.Default = &apiextensionsv1.JSON{Raw: expanded}
	}
	return nil
}

// expandedDefault returns s's default with the nested defaults applied, and
// whether that differs from the default as written.
func expandedDefault(s *apiextensionsv1.JSONSchemaProps) ([]byte, bool, error) {
	var written any
	if err := utiljson.Unmarshal(s.Default.Raw, &written); err != nil {
		return nil, false, err
	}
	switch written.(type) {
	case map[string]any, []any:
	default:
		// Scalars have no members to default.
		return nil, false, nil
	}
	node := *s
	node.Default = nil
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&node, internal, nil); err != nil {
		return nil, false, err
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, false, err
	}
	// Decode again: Default works in place.
	var value any
	if err := utiljson.Unmarshal(s.Default.Raw, &value); err != nil {
		return nil, false, err
	}
	structuraldefaulting.Default(value, ss)
	if reflect.DeepEqual(value, written) {
		return nil, false, nil
	}
	out, err := json.Marshal(value)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

func sortedPropNames(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
