package compactcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Decoding packed kinds straight from the API server's JSON.
//
// An informer fed by client-go reads each object of a watch stream whole
// several times before Transform packs it: the framer scans the event to
// find its end, the decoder sniffs its kind, decodes the envelope, sniffs
// the object's kind again and decodes it into a tree of maps, and Pack
// then encodes most of that tree back into JSON. For a controller
// restarting over 100,000 instances and their 100,000 HelmReleases that is
// more than half of its CPU.
//
// Parse goes from the object's JSON to its Object in one validated pass
// and a few quick ones: the decoded metadata fields are read from their
// bytes, and every other field is copied into Packed as the server sent it,
// never decoded. Unpack reads it back as it reads what Pack wrote: the
// same object, but for the number formats the server chose, which Parse
// keeps (Pack turns 1.0 into 1).

// Parse returns the Object the JSON object data packs into: the same as
// Pack gives of it decoded, once the metadata fields named in drop (the
// manager's cache drops "managedFields") are deleted. data is not kept.
func Parse(data []byte, drop ...string) (*Object, error) {
	v, err := single(data)
	if err != nil {
		return nil, fmt.Errorf("decoding an object: %w", err)
	}
	return parse(v, drop)
}

// single is the one JSON value data holds, checked, without the whitespace
// around it.
func single(data []byte) ([]byte, error) {
	start := skipWS(data, 0)
	end, err := validEnd(data, start, 0)
	if err != nil {
		return nil, err
	}
	if skipWS(data, end) != len(data) {
		return nil, errors.New("data after its end")
	}
	return data[start:end], nil
}

// member is one field of a JSON object: its key as written (quoted) and its
// value.
type member struct{ key, value []byte }

// unescaped is the member's key unquoted, without a copy unless it has
// escapes (which no key the API server writes has).
func (m member) unescaped() []byte {
	k := unquoted(m.key)
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	s, err := jsonString(m.key)
	if err != nil {
		return k
	}
	return []byte(s)
}

// parse is Parse on a validated JSON value.
func parse(data []byte, drop []string) (*Object, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("decoding an object: not a JSON object")
	}
	o := &Object{}
	var rest, metadataRest []member
	var apiVersion, kind string
	metadataSeen := false
	err := members(data, func(m member) error {
		switch string(m.unescaped()) {
		case "apiVersion":
			apiVersion = stringOrEmpty(m.value)
		case "kind":
			kind = stringOrEmpty(m.value)
		case "metadata":
			if m.value[0] != '{' {
				return errors.New("metadata is not an object")
			}
			metadataSeen = true
			return members(m.value, func(f member) error {
				k := f.unescaped()
				for _, d := range drop {
					if string(k) == d {
						return nil
					}
				}
				if !decodedField[string(k)] {
					metadataRest = append(metadataRest, f)
					return nil
				}
				return o.decode(string(k), f.value)
			})
		default:
			rest = append(rest, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decoding an object: %w", err)
	}
	if !metadataSeen {
		return nil, errors.New("decoding an object: it has no metadata")
	}
	o.APIVersion, o.Kind = intern(apiVersion), intern(kind)
	if len(metadataRest) > 0 {
		rest = append(rest, member{key: []byte(`"metadata"`), value: jsonObject(metadataRest)})
	}
	if len(rest) > 0 {
		o.Packed = string(dicts.compress(schema.FromAPIVersionAndKind(apiVersion, kind), jsonObject(rest)))
	}
	return o, nil
}

// decode sets the Decoded metadata field k from its JSON value as an
// unstructured object's accessors read it: a value of another type than
// the field's reads as the field's zero value.
func (o *Object) decode(k string, v []byte) error {
	switch k {
	case "name":
		o.name = stringOrEmpty(v)
	case "namespace":
		o.namespace = intern(stringOrEmpty(v))
	case "uid":
		o.uid = types.UID(stringOrEmpty(v))
	case "resourceVersion":
		o.resourceVersion = stringOrEmpty(v)
	case "generation":
		o.generation, _ = strconv.ParseInt(string(v), 10, 64)
	case "deletionTimestamp":
		if s := stringOrEmpty(v); s != "" {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err == nil && !t.IsZero() {
				o.deletionTimestamp = &t
			}
		}
	case "labels":
		if v[0] != '{' {
			return nil
		}
		l := map[string]string{}
		ok := true
		err := members(v, func(m member) error {
			k, err := jsonString(m.key)
			if err != nil {
				return err
			}
			if m.value[0] != '"' {
				ok = false
				return nil
			}
			l[k], err = jsonString(m.value)
			return err
		})
		if err != nil || !ok {
			return err
		}
		o.labels = labelList(l)
	case "finalizers":
		if v[0] != '[' {
			return nil
		}
		var f []string
		ok := true
		err := elements(v, func(e []byte) error {
			if e[0] != '"' {
				ok = false
				return nil
			}
			s, err := jsonString(e)
			f = append(f, intern(s))
			return err
		})
		if err != nil || !ok {
			return err
		}
		o.finalizers = f
	default:
		return fmt.Errorf("metadata field %q is kept decoded, but Parse does not read it", k)
	}
	return nil
}

// ParseBookmark returns the Object of a watch stream's bookmark: its kind,
// its resourceVersion and its annotations (which tell the end of a watch's
// initial events), the only fields a bookmark carries.
func ParseBookmark(data []byte) (*Object, error) {
	var b struct {
		metav1.TypeMeta
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decoding a bookmark: %w", err)
	}
	return &Object{TypeMeta: b.TypeMeta, resourceVersion: b.Metadata.ResourceVersion, annotations: b.Metadata.Annotations}, nil
}

// ParseList returns the metadata and the items, each parsed as Parse does,
// of the JSON list data.
func ParseList(data []byte, drop ...string) (metav1.ListMeta, []*Object, error) {
	var meta metav1.ListMeta
	var items []*Object
	list, err := single(data)
	if err == nil && list[0] != '{' {
		err = errors.New("not a JSON object")
	}
	if err == nil {
		err = members(list, func(m member) error {
			switch string(m.unescaped()) {
			case "metadata":
				return json.Unmarshal(m.value, &meta)
			case "items":
				if m.value[0] != '[' {
					return nil // null: no items
				}
				return elements(m.value, func(e []byte) error {
					o, err := parse(e, drop)
					items = append(items, o)
					return err
				})
			}
			return nil
		})
	}
	if err != nil {
		return meta, nil, fmt.Errorf("decoding a list: %w", err)
	}
	return meta, items, nil
}

// jsonObject writes the members ms, by key, as a JSON object: the order
// json.Marshal gives a map's keys, so the packed fields of every object of
// a kind are laid out alike for its dictionary.
func jsonObject(ms []member) []byte {
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(unquoted(a.key), unquoted(b.key)) })
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.value) + 2
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.key...)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}

// unquoted is the bytes between a JSON string's quotes, escapes as written.
func unquoted(s []byte) []byte { return s[1 : len(s)-1] }

// jsonString decodes the validated JSON string s.
func jsonString(s []byte) (string, error) {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(unquoted(s)), nil
	}
	var out string
	err := json.Unmarshal(s, &out)
	return out, err
}

// stringOrEmpty is the validated JSON value v when it is a string, "" when
// it is anything else.
func stringOrEmpty(v []byte) string {
	if v[0] != '"' {
		return ""
	}
	s, err := jsonString(v)
	if err != nil {
		return ""
	}
	return s
}

// members calls fn for each member of the validated JSON object obj.
func members(obj []byte, fn func(member) error) error {
	i := skipWS(obj, 1)
	if obj[i] == '}' {
		return nil
	}
	for {
		kEnd := stringEnd(obj, i)
		v := skipWS(obj, skipWS(obj, kEnd)+1) // past the colon
		vEnd := skipEnd(obj, v)
		if err := fn(member{key: obj[i:kEnd], value: obj[v:vEnd]}); err != nil {
			return err
		}
		i = skipWS(obj, vEnd)
		if obj[i] == '}' {
			return nil
		}
		i = skipWS(obj, i+1) // past the comma
	}
}

// elements calls fn for each element of the validated JSON array arr.
func elements(arr []byte, fn func([]byte) error) error {
	i := skipWS(arr, 1)
	if arr[i] == ']' {
		return nil
	}
	for {
		end := skipEnd(arr, i)
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = skipWS(arr, end)
		if arr[i] == ']' {
			return nil
		}
		i = skipWS(arr, i+1)
	}
}

// The scanners. validEnd checks what it reads as a JSON value (as
// encoding/json would, but for the characters inside strings); the others
// run on values it has checked.

// errIncomplete is validEnd's error for a value that data ends inside of.
var errIncomplete = errors.New("unexpected end of JSON input")

// maxDepth bounds the nesting validEnd follows.
const maxDepth = 10000

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS is the index of the first byte at or after i that is not JSON
// whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// stringEnd is the index past the validated JSON string starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// skipEnd is the index past the validated JSON value starting at b[i].
func skipEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && !isWS(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// validEnd checks the JSON value starting at b[i] (no whitespace before it)
// and returns the index past it; errIncomplete when b ends inside it.
func validEnd(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errIncomplete
	}
	if depth > maxDepth {
		return 0, errors.New("JSON nested too deep")
	}
	switch c := b[i]; c {
	case '"':
		return validStringEnd(b, i)
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, nil
		}
		for {
			var err error
			if c == '{' {
				if i >= len(b) {
					return 0, errIncomplete
				}
				if b[i] != '"' {
					return 0, syntaxError(b, i, "a string key")
				}
				if i, err = validStringEnd(b, i); err != nil {
					return 0, err
				}
				if i = skipWS(b, i); i >= len(b) {
					return 0, errIncomplete
				}
				if b[i] != ':' {
					return 0, syntaxError(b, i, "a colon")
				}
				i = skipWS(b, i+1)
			}
			if i, err = validEnd(b, i, depth+1); err != nil {
				return 0, err
			}
			if i = skipWS(b, i); i >= len(b) {
				return 0, errIncomplete
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case closing:
				return i + 1, nil
			default:
				return 0, syntaxError(b, i, "a comma or "+string(closing))
			}
		}
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	}
	return numberEnd(b, i)
}

func syntaxError(b []byte, i int, want string) error {
	return fmt.Errorf("invalid character %q at offset %d, want %s", b[i], i, want)
}

// validStringEnd checks the JSON string at b[i] and returns the index past it.
func validStringEnd(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return 0, syntaxError(b, i, "no control character in a string")
		case c == '\\':
			if i++; i >= len(b) {
				return 0, errIncomplete
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for j := 1; j <= 4; j++ {
					if i+j >= len(b) {
						return 0, errIncomplete
					}
					if !isHex(b[i+j]) {
						return 0, syntaxError(b, i+j, "a hexadecimal digit")
					}
				}
				i += 4
			default:
				return 0, syntaxError(b, i, "an escape")
			}
		}
	}
	return 0, errIncomplete
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func literalEnd(b []byte, i int, lit string) (int, error) {
	n := min(len(lit), len(b)-i)
	if string(b[i:i+n]) != lit[:n] {
		return 0, syntaxError(b, i, lit)
	}
	if n < len(lit) {
		return 0, errIncomplete
	}
	return i + n, nil
}

// numberEnd checks the JSON number at b[i] (-?int frac? exp?) and returns the
// index past it. A number that reaches the end of b is incomplete: more
// digits may follow.
func numberEnd(b []byte, i int) (int, error) {
	start := i
	digits := func() (int, error) {
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == len(b) {
			return 0, errIncomplete
		}
		if i == j {
			return 0, syntaxError(b, i, "a digit")
		}
		return i - j, nil
	}
	if b[i] == '-' {
		if i++; i >= len(b) {
			return 0, errIncomplete
		}
	}
	lead := b[i]
	n, err := digits()
	if err != nil {
		return 0, err
	}
	if lead == '0' && n > 1 {
		return 0, syntaxError(b, start, "a number without leading zeros")
	}
	if b[i] == '.' {
		i++
		if _, err := digits(); err != nil {
			return 0, err
		}
	}
	if b[i] == 'e' || b[i] == 'E' {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if _, err := digits(); err != nil {
			return 0, err
		}
	}
	return i, nil
}
