// Package source reads ApplicationDefinitions from YAML files and locates
// problems in them: every error the generator reports names the file, the
// line (where there is one) and the field.
package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	cozyv1alpha1 "github.com/cozyplane/cozyplane/api/cozystack/v1alpha1"
	"github.com/cozyplane/cozyplane/pkg/schema"
)

// Error is a problem with an input file. Field is a path inside the file's
// object (e.g. openAPISchema.properties[size].type) or "" when the problem
// is the whole file.
type Error struct {
	File    string
	Line    int
	Field   string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		e.File = "<input>"
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" && !strings.HasPrefix(e.Message, e.Field+": ") {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Definition is one ApplicationDefinition read from a file.
type Definition struct {
	Def  *cozyv1alpha1.ApplicationDefinition
	File string
	// Line is where the document starts.
	Line int
	// schemaLine is the line of the openAPISchema value; schemaBlock tells
	// whether it is a block scalar, whose lines map one to one to the
	// schema's.
	schemaLine  int
	schemaBlock bool
	positions   *Positions
}

// Errorf returns an *Error at a field of the definition's openAPISchema
// (a path as pkg/schema writes it: openAPISchema.properties[a].items).
func (d *Definition) Errorf(fld, format string, args ...any) *Error {
	return &Error{File: d.File, Line: d.LineOf(fld), Field: fld, Message: fmt.Sprintf(format, args...)}
}

// Wrap turns an error of pkg/schema into an *Error naming the file and
// line of the offending field.
func (d *Definition) Wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *schema.Error
	if errors.As(err, &se) {
		line := d.LineOf(se.Field)
		// A syntax error says where it is: "(line N, column M)".
		if n, ok := JSONSyntaxLine(se.Message); ok && d.schemaBlock && d.schemaLine > 0 {
			line = d.schemaLine + n
		}
		return &Error{File: d.File, Line: line, Field: se.Field, Message: se.Message}
	}
	var ge *Error
	if errors.As(err, &ge) {
		return err
	}
	return &Error{File: d.File, Line: d.Line, Message: err.Error()}
}

var jsonLine = regexp.MustCompile(`is not valid JSON: .* \(line ([0-9]+), column [0-9]+\)$`)

// JSONSyntaxLine returns the line pkg/schema gives for a JSON syntax error
// ("... is not valid JSON: ... (line N, column M)"), counted from the start
// of the JSON text.
func JSONSyntaxLine(msg string) (int, bool) {
	m := jsonLine.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// LineOf returns the file line of a field of the openAPISchema, the line of
// openAPISchema itself when the field cannot be placed, or the document's.
func (d *Definition) LineOf(fld string) int {
	if d.schemaLine == 0 {
		return d.Line
	}
	if !d.schemaBlock || d.positions == nil || !strings.HasPrefix(fld, SchemaRoot) {
		return d.schemaLine
	}
	return d.schemaLine + d.positions.Line(fld) // the block starts on the next line
}

// SchemaRoot is how pkg/schema names the openAPISchema in field paths.
const SchemaRoot = "openAPISchema"

// ReadDefinitions reads every ApplicationDefinition (cozystack.io/v1alpha1)
// in a YAML file, which may hold several documents; documents of other kinds
// are skipped.
func ReadDefinitions(file string) ([]*Definition, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseDefinitions(file, b)
}

// ParseDefinitions is ReadDefinitions on the file's content.
func ParseDefinitions(file string, b []byte) ([]*Definition, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []*Definition
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{File: file, Line: yamlErrLine(err), Message: "not valid YAML: " + err.Error()}
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		if scalar(root, "kind") != "ApplicationDefinition" || !strings.HasPrefix(scalar(root, "apiVersion"), cozyv1alpha1.GroupVersion.Group+"/") {
			continue
		}
		var v any
		if err := root.Decode(&v); err != nil {
			return nil, &Error{File: file, Line: root.Line, Message: err.Error()}
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, &Error{File: file, Line: root.Line, Message: "cannot read the document as JSON: " + err.Error()}
		}
		def := &cozyv1alpha1.ApplicationDefinition{}
		dj := json.NewDecoder(bytes.NewReader(j))
		dj.DisallowUnknownFields()
		if err := dj.Decode(def); err != nil {
			return nil, &Error{File: file, Line: root.Line, Message: "not a valid ApplicationDefinition: " + err.Error()}
		}
		d := &Definition{Def: def, File: file, Line: root.Line}
		if n := Path(root, "spec", "application", "openAPISchema"); n != nil {
			d.schemaLine = n.Line
			d.schemaBlock = n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && n.Style&yaml.FoldedStyle == 0
			d.positions = IndexJSON(def.Spec.Application.OpenAPISchema)
		}
		out = append(out, d)
	}
	return out, nil
}

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	// yaml.v3 says "yaml: line N: ...".
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if j > 0 {
			n, _ := strconv.Atoi(rest[:j])
			return n
		}
	}
	return 0
}

func scalar(m *yaml.Node, key string) string {
	if n := Path(m, key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// Path is the node at keys below the mapping n (nil when a key is missing or
// a node on the way is not a mapping).
func Path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}
