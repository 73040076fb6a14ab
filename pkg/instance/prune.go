package instance

import "slices"

// Prune drops the empty values a typed struct leaves behind when converted
// to unstructured (nil, "", false, empty maps and lists), recursively, so an
// applied intent holds only the fields a backend means to own. Values under
// the keys named in keep (the tenant's own data, such as Helm values) are
// left exactly as written.
func Prune(m map[string]any, keep ...string) {
	for k, v := range m {
		if slices.Contains(keep, k) {
			continue
		}
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case bool:
			if !x {
				delete(m, k)
			}
		case map[string]any:
			Prune(x, keep...)
			if len(x) == 0 {
				delete(m, k)
			}
		case []any:
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}
