package controller

// missingLabels returns the labels of want that an object's current labels lack or hold with
// another value; empty when nothing needs writing.
func missingLabels(current, want map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		if cur, ok := current[k]; !ok || cur != v {
			out[k] = v
		}
	}
	return out
}
