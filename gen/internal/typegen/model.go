package typegen

import (
	"fmt"
	"sort"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/schema"
)

// TypeKind is the shape of a Go type.
type TypeKind int

// Shapes of Go types.
const (
	KString      TypeKind = iota // string
	KInt                         // int64 (int32 with format: int32)
	KFloat                       // float64
	KBool                        // bool
	KIntOrString                 // intstr.IntOrString
	KJSON                        // apiextensionsv1.JSON: any value
	KEnum                        // a named string type with constants
	KStruct                      // a named struct
	KSlice                       // []Elem
	KMap                         // map[string]Elem (named when it is the root spec)
	KPtr                         // *Elem
)

// Type is a Go type of the generated package.
type Type struct {
	Kind TypeKind
	// Name of a named type (KEnum, KStruct, or the root KMap).
	Name   string
	Int32  bool
	Elem   *Type
	Struct *Struct
	Enum   *Enum
}

// named reports whether the type has its own DeepCopyInto: structs and the
// named root map.
func (t *Type) named() bool {
	return t.Kind == KStruct || (t.Kind == KMap && t.Name != "")
}

// plain reports whether assigning the value copies it entirely.
func (t *Type) plain() bool {
	switch t.Kind {
	case KString, KInt, KFloat, KBool, KIntOrString, KEnum:
		return true
	case KStruct:
		for _, f := range t.Struct.Fields {
			if !f.Type.plain() {
				return false
			}
		}
		return !t.Struct.Extra
	}
	return false
}

// Struct is a named struct generated for an object schema with properties.
type Struct struct {
	Name string
	// Path is where the object sits in the spec (spec.backup).
	Path   string
	Doc    []string
	Fields []*Field
	// Extra is set when the object also keeps keys it does not name
	// (x-kubernetes-preserve-unknown-fields next to properties): they are
	// held in the Extra field and written back by MarshalJSON.
	Extra     bool
	ExtraName string
}

// Field is a field of a generated struct.
type Field struct {
	GoName   string
	JSONName string
	Type     *Type
	// Omit is the json tag option: "omitempty" (pointers), "omitzero"
	// (slices and maps: nil is left out, an empty one is kept), or "".
	Omit     string
	Required bool
	Doc      []string
}

// Enum is a named string type with one constant per value.
type Enum struct {
	Name   string
	Path   string
	Doc    []string
	Values []EnumValue
}

// EnumValue is one constant of an Enum.
type EnumValue struct {
	GoName string
	Value  string
}

// Model is everything generated for one kind.
type Model struct {
	Kind       string
	ListKind   string
	Plural     string
	Singular   string
	Definition string
	Backend    cozyv1alpha1.BackendType
	Package    string
	// Spec is the root spec type: a struct, or a named map.
	Spec    *Type
	Structs []*Struct
	Enums   []*Enum
	// Doc is the definition's title and description.
	Doc []string

	used       map[string]bool
	uses       map[string]bool
	paths      map[string]bool
	importPath string
}

// ErrorFunc reports a problem at a field of the openAPISchema (named as
// pkg/schema names fields).
type ErrorFunc func(fld, format string, args ...any) error

func defaultErrorf(fld, format string, args ...any) error {
	return fmt.Errorf("%s: %s", fld, fmt.Sprintf(format, args...))
}

// Build reads a definition through pkg/schema (the code that builds the CRD
// the appdef controller serves) and returns the model of its Go package.
// errf places errors in the input; nil names fields only.
func Build(def *cozyv1alpha1.ApplicationDefinition, errf ErrorFunc) (*Model, error) {
	if errf == nil {
		errf = defaultErrorf
	}
	backend, err := def.ResolvedBackend()
	if err != nil {
		return nil, errf("spec.backend", "%v", err)
	}
	app := def.Spec.Application
	if app.Kind == "" || !unicode.IsUpper(rune(app.Kind[0])) {
		return nil, errf("spec.application.kind", "must be a CamelCase kind, got %q", app.Kind)
	}
	if err := precheck(app.OpenAPISchema, errf); err != nil {
		return nil, err
	}
	props, err := schema.ParseOpenAPISchema(app.OpenAPISchema)
	if err != nil {
		return nil, err
	}
	return buildModel(def, backend.Type, props, errf)
}

// BuildFromProps builds the model from a parsed spec schema (tests, fuzzing).
func buildModel(def *cozyv1alpha1.ApplicationDefinition, backend cozyv1alpha1.BackendType, props *apiextensionsv1.JSONSchemaProps, errf ErrorFunc) (*Model, error) {
	app := def.Spec.Application
	m := &Model{
		Kind:       app.Kind,
		ListKind:   app.Kind + "List",
		Plural:     app.Plural,
		Singular:   app.Singular,
		Definition: def.Name,
		Backend:    backend,
		Package:    PackageName(app.Kind),
		used:       map[string]bool{},
		uses:       map[string]bool{},
		paths:      map[string]bool{},
	}
	if props.Title != "" {
		m.Doc = append(m.Doc, props.Title+".")
	}
	// Package-level identifiers the generated code declares.
	for _, n := range []string{m.Kind, m.ListKind, m.Kind + "Spec", "GroupVersion", "GroupVersionKind",
		"GroupVersionResource", "SchemeBuilder", "AddToScheme", "FromUnstructured", "Kind", "ListKind", "Plural",
		"Singular", "DefinitionName", "BackendType", "Group", "APIVersion"} {
		m.used[n] = true
	}
	root := props.DeepCopy()
	t, err := m.typeOf(root, schemaRoot, m.Kind+"Spec", true, errf)
	if err != nil {
		return nil, err
	}
	switch t.Kind {
	case KStruct:
	case KMap:
		t.Name = m.Kind + "Spec"
	default:
		return nil, errf(schemaRoot, "the spec must be an object")
	}
	m.Spec = t
	sort.Slice(m.Structs, func(i, j int) bool { return m.Structs[i].Name < m.Structs[j].Name })
	sort.Slice(m.Enums, func(i, j int) bool { return m.Enums[i].Name < m.Enums[j].Name })
	return m, nil
}

const schemaRoot = "openAPISchema"

// uniqueName returns name, or name with a number appended, whichever is
// free among the package's identifiers.
func (m *Model) uniqueName(name string) string {
	if !m.used[name] {
		m.used[name] = true
		return name
	}
	if k := m.Kind + name; !m.used[k] {
		m.used[k] = true
		return k
	}
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s%d", name, i)
		if !m.used[n] {
			m.used[n] = true
			return n
		}
	}
}
