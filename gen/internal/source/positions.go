package source

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Positions maps the fields of a JSON document to their lines.
type Positions struct {
	text  string
	lines map[string]int
}

// IndexJSON records the line of every object key and array element of a
// JSON document. A document that is not valid JSON is indexed up to the
// error.
func IndexJSON(text string) *Positions {
	p := &Positions{text: text, lines: map[string]int{}}
	dec := json.NewDecoder(strings.NewReader(text))
	p.lines[""] = p.lineAt(0)
	p.value(dec, nil, 0)
	return p
}

func (p *Positions) lineAt(offset int64) int {
	if offset > int64(len(p.text)) {
		offset = int64(len(p.text))
	}
	return strings.Count(p.text[:offset], "\n") + 1
}

// value reads one value whose path is segs; it returns false on a syntax
// error.
func (p *Positions) value(dec *json.Decoder, segs []string, depth int) bool {
	if depth > 200 {
		return false
	}
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return true
	}
	switch d {
	case '{':
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false
			}
			k, _ := kt.(string)
			child := append(append([]string(nil), segs...), k)
			p.lines[strings.Join(child, "\x00")] = p.lineAt(dec.InputOffset())
			if !p.value(dec, child, depth+1) {
				return false
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			child := append(append([]string(nil), segs...), strconv.Itoa(i))
			p.lines[strings.Join(child, "\x00")] = p.lineAt(dec.InputOffset() + 1)
			if !p.value(dec, child, depth+1) {
				return false
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err == nil
}

// Line returns the line of a field named as pkg/schema names fields
// (openAPISchema.properties[size].anyOf[0]): the line of the longest prefix
// of the path that exists in the document, 1 for the document itself.
func (p *Positions) Line(fld string) int {
	segs := SplitPath(fld)
	for n := len(segs); n >= 0; n-- {
		if l, ok := p.lines[strings.Join(segs[:n], "\x00")]; ok {
			return l
		}
	}
	return 1
}

// SplitPath splits a field path (root.a[b].c[0]) into its segments after
// the root: [a b c 0].
func SplitPath(fld string) []string {
	var segs []string
	i := strings.IndexAny(fld, ".[")
	if i < 0 {
		return nil
	}
	rest := fld[i:]
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
			j := strings.LastIndex(rest, "]")
			// The key ends at the first "]" followed by "." or "[" or the end.
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
