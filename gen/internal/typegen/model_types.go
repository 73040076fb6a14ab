package typegen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// typeOf maps a structural schema node to a Go type. name is the type name
// a struct or enum at this node gets; fld names the node for errors.
func (m *Model) typeOf(s *apiextensionsv1.JSONSchemaProps, fld, name string, root bool, errf ErrorFunc) (*Type, error) {
	preserve := s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	switch {
	case s.XIntOrString:
		return &Type{Kind: KIntOrString}, nil
	case s.Type == "object" && len(s.Properties) > 0:
		return m.structOf(s, fld, name, preserve, root, errf)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return m.containerOf(KMap, s.AdditionalProperties.Schema, fld+".additionalProperties", name+"Value", errf)
	case s.Type == "object":
		// Free-form (preserve-unknown-fields) or an embedded resource: keep
		// every key and value as written.
		m.uses["json"] = true
		return &Type{Kind: KMap, Elem: &Type{Kind: KJSON}}, nil
	case s.Type == "array":
		if s.Items == nil || s.Items.Schema == nil {
			if s.Items != nil && len(s.Items.JSONSchemas) > 0 {
				return nil, errf(fld+".items", "a list of item schemas (a tuple) cannot be expressed as a Go slice: describe the items with one schema")
			}
			m.uses["json"] = true
			return &Type{Kind: KSlice, Elem: &Type{Kind: KJSON}}, nil
		}
		return m.containerOf(KSlice, s.Items.Schema, fld+".items", name+"Item", errf)
	case s.Type == "string":
		if vals, ok := stringEnum(s); ok {
			return m.enumOf(s, fld, name, vals), nil
		}
		return &Type{Kind: KString}, nil
	case s.Type == "integer":
		return &Type{Kind: KInt, Int32: s.Format == "int32"}, nil
	case s.Type == "number":
		return &Type{Kind: KFloat}, nil
	case s.Type == "boolean":
		return &Type{Kind: KBool}, nil
	case s.Type == "" && preserve:
		m.uses["json"] = true
		return &Type{Kind: KJSON}, nil
	}
	return nil, errf(fld, "a schema of type %q cannot be expressed as a Go type", s.Type)
}

// containerOf is a map (KMap) or a slice (KSlice) of the type of elem, the
// schema of its values or items.
func (m *Model) containerOf(kind TypeKind, elem *apiextensionsv1.JSONSchemaProps, fld, name string, errf ErrorFunc) (*Type, error) {
	t, err := m.typeOf(elem, fld, name, false, errf)
	if err != nil {
		return nil, err
	}
	m.noteNullableElem(elem, &t)
	return &Type{Kind: kind, Elem: t}, nil
}

// noteNullableElem makes the elements of a list or map pointers when they
// may be null, so a null survives a round trip.
func (m *Model) noteNullableElem(s *apiextensionsv1.JSONSchemaProps, t **Type) {
	if s.Nullable && (*t).Kind != KJSON && (*t).Kind != KSlice && (*t).Kind != KMap {
		*t = &Type{Kind: KPtr, Elem: *t}
	}
}

func stringEnum(s *apiextensionsv1.JSONSchemaProps) ([]string, bool) {
	if len(s.Enum) == 0 {
		return nil, false
	}
	var vals []string
	seen := map[string]bool{}
	for _, e := range s.Enum {
		if string(e.Raw) == "null" {
			continue
		}
		var v string
		if err := json.Unmarshal(e.Raw, &v); err != nil {
			return nil, false
		}
		if !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	return vals, len(vals) > 0
}

func (m *Model) enumOf(s *apiextensionsv1.JSONSchemaProps, fld, name string, vals []string) *Type {
	e := &Enum{Name: m.uniqueName(name), Path: specPath(fld)}
	e.Doc = append(e.Doc, fmt.Sprintf("%s is the type of %s.", e.Name, e.Path))
	taken := map[string]bool{}
	for _, v := range vals {
		base := e.Name + Identifier(v, "Empty")
		n := base
		for i := 2; taken[n] || m.used[n]; i++ {
			n = fmt.Sprintf("%s%d", base, i)
		}
		taken[n] = true
		m.used[n] = true
		e.Values = append(e.Values, EnumValue{GoName: n, Value: v})
	}
	m.Enums = append(m.Enums, e)
	return &Type{Kind: KEnum, Name: e.Name, Enum: e}
}

// Method names of generated structs; a field may not take one.
var methodNames = map[string]bool{
	"DeepCopy": true, "DeepCopyInto": true, "MarshalJSON": true, "UnmarshalJSON": true,
	"Values": true, "Vars": true,
}

func (m *Model) structOf(s *apiextensionsv1.JSONSchemaProps, fld, name string, extra, root bool, errf ErrorFunc) (*Type, error) {
	st := &Struct{Path: specPath(fld), Extra: extra}
	if root {
		st.Name = name
	} else {
		st.Name = m.uniqueName(name)
	}
	t := &Type{Kind: KStruct, Name: st.Name, Struct: st}
	if root {
		st.Doc = append(st.Doc, fmt.Sprintf("%s is the spec of a %s.", st.Name, m.Kind))
		if s.Description != "" {
			st.Doc = append(st.Doc, "")
			st.Doc = append(st.Doc, docLines(s.Description)...)
		}
	} else {
		st.Doc = append(st.Doc, fmt.Sprintf("%s is %s.", st.Name, st.Path))
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	fieldNames := map[string]bool{}
	for k := range methodNames {
		fieldNames[k] = true
	}
	for _, k := range names {
		pfld := fmt.Sprintf("%s.properties[%s]", fld, k)
		if !validJSONKey(k) {
			return nil, errf(pfld, "the property name %q cannot be a Go struct field's JSON name (empty, or has a quote, backslash, comma or control character)", k)
		}
		goName := Identifier(k, "Field")
		if fieldNames[goName] {
			base := goName
			goName = base + "Field"
			for i := 2; fieldNames[goName]; i++ {
				goName = fmt.Sprintf("%sField%d", base, i)
			}
		}
		fieldNames[goName] = true
		ps := s.Properties[k]
		typeName := goName
		if !root {
			typeName = st.Name + goName
		}
		ft, err := m.typeOf(&ps, pfld, typeName, false, errf)
		if err != nil {
			return nil, err
		}
		f := &Field{GoName: goName, JSONName: k, Required: required[k]}
		switch {
		case ft.Kind == KSlice || ft.Kind == KMap:
			if !f.Required {
				f.Omit = "omitzero"
			}
		case f.Required && !ps.Nullable:
		default:
			ft = &Type{Kind: KPtr, Elem: ft}
			if !f.Required {
				f.Omit = "omitempty"
			}
		}
		f.Type = ft
		f.Doc = fieldDoc(&ps, f.Required)
		st.Fields = append(st.Fields, f)
	}
	if extra {
		n := "Extra"
		for i := 2; fieldNames[n]; i++ {
			n = fmt.Sprintf("Extra%d", i)
		}
		st.ExtraName = n
		m.uses["json"] = true
	}
	m.Structs = append(m.Structs, st)
	return t, nil
}

// validJSONKey reports whether encoding/json can use k as a field's name
// (its isValidTag).
func validJSONKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
