package helmbackend

import "encoding/json"

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// pruneZero drops the empty values typed structs leave behind when converted
// (empty strings, maps and lists, nil), so the applied intent holds only the
// fields we mean to own.
func pruneZero(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case map[string]any:
			if k == "values" {
				continue // the tenant's values are kept exactly as written
			}
			pruneZero(x)
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
