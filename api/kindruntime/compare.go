package kindruntime

import (
	"bytes"
	"reflect"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
)

var (
	jsonType   = reflect.TypeFor[apiextensionsv1.JSON]()
	intstrType = reflect.TypeFor[intstr.IntOrString]()
)

// Equal reports whether a and b, two values of the same generated type (or
// pointers to them), encode to the same JSON; a nil and an empty list or map
// differ (one is left out, the other is written).
func Equal(a, b any) bool { return len(Diff(a, b)) == 0 }

// Diff returns the paths of the fields in which a and b, two values of the
// same generated type (or pointers to them), differ, in the order the fields
// are declared (map keys sorted): e.g. resources.cpu, users[app].password,
// databases[orders].extensions[0]. Fields are named by their JSON names; a
// value that differs as a whole (nil against set, lists of other lengths) is
// one path.
func Diff(a, b any) []string {
	var d []string
	diff("", reflect.ValueOf(a), reflect.ValueOf(b), &d)
	return d
}

func diff(path string, a, b reflect.Value, d *[]string) {
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		if a.IsValid() != b.IsValid() || (a.IsValid() && a.Type() != b.Type()) {
			*d = append(*d, path)
		}
		return
	}
	switch t := a.Type(); {
	case t == jsonType:
		if !jsonEqual(a.Interface().(apiextensionsv1.JSON), b.Interface().(apiextensionsv1.JSON)) {
			*d = append(*d, path)
		}
	case t == intstrType:
		if a.Interface() != b.Interface() {
			*d = append(*d, path)
		}
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*d = append(*d, path)
			}
			return
		}
		diff(path, a.Elem(), b.Elem(), d)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			diff(joinPath(path, jsonName(f)), a.Field(i), b.Field(i), d)
		}
	case t.Kind() == reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			*d = append(*d, path)
			return
		}
		for i := range a.Len() {
			diff(path+"["+strconv.Itoa(i)+"]", a.Index(i), b.Index(i), d)
		}
	case t.Kind() == reflect.Map:
		if a.IsNil() != b.IsNil() {
			*d = append(*d, path)
			return
		}
		for _, k := range unionKeys(a, b) {
			p := path + "[" + k.String() + "]"
			av, bv := a.MapIndex(k), b.MapIndex(k)
			if av.IsValid() != bv.IsValid() {
				*d = append(*d, p)
				continue
			}
			diff(p, av, bv, d)
		}
	default:
		if a.Interface() != b.Interface() {
			*d = append(*d, path)
		}
	}
}

// jsonName is the name a field is written under; "" for a field kept out of
// JSON (the keys an object keeps beyond its named fields are written next to
// them, so they are named by their keys alone).
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}

// joinPath names a field of the object at path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	if name == "" {
		return path
	}
	return path + "." + name
}

// unionKeys returns the keys of two maps with string keys, sorted.
func unionKeys(a, b reflect.Value) []reflect.Value {
	keys := a.MapKeys()
	for _, k := range b.MapKeys() {
		if !a.MapIndex(k).IsValid() {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

// jsonEqual compares two JSON values by content (object keys in any order).
func jsonEqual(a, b apiextensionsv1.JSON) bool {
	if bytes.Equal(a.Raw, b.Raw) {
		return true
	}
	var av, bv any
	if len(a.Raw) > 0 && sigsjson.UnmarshalCaseSensitivePreserveInts(a.Raw, &av) != nil {
		return false
	}
	if len(b.Raw) > 0 && sigsjson.UnmarshalCaseSensitivePreserveInts(b.Raw, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
