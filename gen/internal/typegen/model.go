package typegen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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

// named reports whether the type has its own methods (DeepCopyInto, Equal,
// diff): structs and the named root map.
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

// comparable reports whether == compares the values by content.
func (t *Type) comparable() bool {
	switch t.Kind {
	case KString, KInt, KFloat, KBool, KIntOrString, KEnum:
		return true
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

// PackageName is the Go package of a kind: its lower-cased name, with
// characters a package name cannot hold removed.
func PackageName(kind string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(kind) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "kind" + s
	}
	if goKeywords[s] {
		s += "kind"
	}
	return s
}

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true, "defer": true,
	"else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
	"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true,
	"select": true, "struct": true, "switch": true, "type": true, "var": true,
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
		elem, err := m.typeOf(s.AdditionalProperties.Schema, fld+".additionalProperties", name+"Value", false, errf)
		if err != nil {
			return nil, err
		}
		m.noteNullableElem(s.AdditionalProperties.Schema, &elem)
		return &Type{Kind: KMap, Elem: elem}, nil
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
		elem, err := m.typeOf(s.Items.Schema, fld+".items", name+"Item", false, errf)
		if err != nil {
			return nil, err
		}
		m.noteNullableElem(s.Items.Schema, &elem)
		return &Type{Kind: KSlice, Elem: elem}, nil
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
	"DeepCopy": true, "DeepCopyInto": true, "Equal": true, "Diff": true, "MarshalJSON": true, "UnmarshalJSON": true,
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

// specPath renders a schema field path as a path in the instance:
// openAPISchema.properties[a].additionalProperties.items → spec.a[*][*].
func specPath(fld string) string {
	var b strings.Builder
	b.WriteString("spec")
	prev := ""
	for _, seg := range splitPath(fld) {
		switch {
		case prev == "properties":
			b.WriteString("." + seg)
		case seg == "additionalProperties" || seg == "items":
			b.WriteString("[*]")
		}
		prev = seg
	}
	return b.String()
}

func splitPath(fld string) []string {
	var segs []string
	rest := strings.TrimPrefix(fld, schemaRoot)
	for len(rest) > 0 {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			j := strings.IndexAny(rest, ".[")
			if j < 0 {
				j = len(rest)
			}
			segs = append(segs, rest[:j])
			rest = rest[j:]
		case '[':
			j := -1
			for k := 1; k < len(rest); k++ {
				if rest[k] == ']' && (k+1 == len(rest) || rest[k+1] == '.' || rest[k+1] == '[') {
					j = k
					break
				}
			}
			if j < 0 {
				return append(segs, rest[1:])
			}
			segs = append(segs, rest[1:j])
			rest = rest[j+1:]
		default:
			return segs
		}
	}
	return segs
}

// fieldDoc is a field's doc comment: its description, then its default and
// constraints as the API server enforces them.
func fieldDoc(s *apiextensionsv1.JSONSchemaProps, required bool) []string {
	var doc []string
	if s.Title != "" && s.Description == "" {
		doc = append(doc, docLines(s.Title)...)
	}
	doc = append(doc, docLines(s.Description)...)
	var facts []string
	if s.Default != nil {
		facts = append(facts, "Default: "+compactJSON(s.Default.Raw)+".")
	}
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			vals = append(vals, compactJSON(e.Raw))
		}
		facts = append(facts, "One of: "+strings.Join(vals, ", ")+".")
	}
	num := func(label string, v *float64, exclusive bool) {
		if v == nil {
			return
		}
		if exclusive {
			label += " (exclusive)"
		}
		facts = append(facts, fmt.Sprintf("%s: %v.", label, *v))
	}
	num("Minimum", s.Minimum, s.ExclusiveMinimum)
	num("Maximum", s.Maximum, s.ExclusiveMaximum)
	num("Multiple of", s.MultipleOf, false)
	count := func(label string, v *int64) {
		if v != nil {
			facts = append(facts, fmt.Sprintf("%s: %d.", label, *v))
		}
	}
	count("Minimum length", s.MinLength)
	count("Maximum length", s.MaxLength)
	count("Minimum items", s.MinItems)
	count("Maximum items", s.MaxItems)
	count("Minimum properties", s.MinProperties)
	count("Maximum properties", s.MaxProperties)
	if s.Pattern != "" {
		facts = append(facts, "Pattern: "+s.Pattern)
	}
	if s.Format != "" {
		facts = append(facts, "Format: "+s.Format+".")
	}
	if s.Nullable {
		facts = append(facts, "May be null.")
	}
	if len(facts) > 0 {
		if len(doc) > 0 {
			doc = append(doc, "")
		}
		doc = append(doc, facts...)
	}
	if len(doc) > 0 {
		doc = append(doc, "")
	}
	if required {
		doc = append(doc, "+required")
	} else {
		doc = append(doc, "+optional")
	}
	return doc
}

func compactJSON(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// docLines splits text into comment lines, without characters a line
// comment cannot hold and without anything the Go tool would read as a
// directive.
func docLines(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.Map(func(r rune) rune {
			if r == '\t' {
				return ' '
			}
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
				return -1
			}
			return r
		}, l)
		l = strings.TrimRight(l, " ")
		out = append(out, l)
	}
	return out
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{
	"id": "ID", "url": "URL", "uri": "URI", "cidr": "CIDR", "dns": "DNS", "ip": "IP", "http": "HTTP",
	"https": "HTTPS", "api": "API", "cpu": "CPU", "tls": "TLS", "ssl": "SSL", "json": "JSON", "yaml": "YAML",
	"uid": "UID", "uuid": "UUID", "ttl": "TTL", "vpc": "VPC", "ssh": "SSH", "sql": "SQL", "az": "AZ",
	"acl": "ACL", "arn": "ARN", "ttls": "TTLs", "ips": "IPs", "ids": "IDs", "urls": "URLs",
}

// Identifier turns a JSON name into an exported Go identifier:
// max_connections → MaxConnections, endpointURL → EndpointURL, v15 → V15.
// fallback is used when nothing of the name is left.
func Identifier(s, fallback string) string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, string(cur))
			cur = nil
		}
	}
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			cur = append(cur, r)
			continue
		}
		flush()
	}
	flush()
	var b strings.Builder
	for _, p := range parts {
		if up, ok := initialisms[strings.ToLower(p)]; ok && (p == strings.ToLower(p)) {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	out := b.String()
	if out == "" {
		return fallback
	}
	if unicode.IsDigit(rune(out[0])) {
		out = "X" + out
	}
	return out
}
