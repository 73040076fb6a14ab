package manager

import "testing"

func TestParseCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int64
		ok      bool
	}{
		{"268435456\n", 268435456, true},    // v2 or v1, 256Mi
		{"max\n", 0, false},                 // v2 without a limit
		{"9223372036854771712\n", 0, false}, // v1 without a limit
		{"", 0, false},
		{"garbage", 0, false},
		{"0", 0, false},
	} {
		got, ok := ParseCgroupMemoryLimit(tc.content)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseCgroupMemoryLimit(%q) = %d, %v; want %d, %v", tc.content, got, ok, tc.want, tc.ok)
		}
	}
	if got, want := SoftMemoryLimit(256<<20), int64(241591910); got != want {
		t.Errorf("SoftMemoryLimit(256Mi) = %d, want %d", got, want)
	}
}
