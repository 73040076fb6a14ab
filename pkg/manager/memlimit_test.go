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
	for _, tc := range []struct{ limit, want int64 }{
		{256 << 20, 192 << 20}, // the limit less 64 MiB
		{192 << 20, 128 << 20},
		{100 << 20, 50 << 20}, // at least half of a small limit
		{1 << 30, 960 << 20},
	} {
		if got := SoftMemoryLimit(tc.limit); got != tc.want {
			t.Errorf("SoftMemoryLimit(%d MiB) = %d MiB, want %d MiB", tc.limit>>20, got>>20, tc.want>>20)
		}
	}
}
