package measure

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRounds(t *testing.T) {
	for _, tc := range []struct {
		n, r int
		want [][2]int
	}{
		{2000, 5, [][2]int{{0, 400}, {400, 800}, {800, 1200}, {1200, 1600}, {1600, 2000}}},
		{10, 3, [][2]int{{0, 3}, {3, 6}, {6, 10}}},
		{3, 10, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{5, 0, [][2]int{{0, 5}}},
		{0, 4, [][2]int{{0, 0}}},
	} {
		if got := Rounds(tc.n, tc.r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Rounds(%d, %d) = %v, want %v", tc.n, tc.r, got, tc.want)
		}
	}
}

func TestRoundsFor(t *testing.T) {
	for n, want := range map[int]int{0: 3, 200: 3, 800: 3, 2000: 5, 10000: 10, 50000: 10} {
		if got := RoundsFor(n); got != want {
			t.Errorf("RoundsFor(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.7}, 0.7},
		{[]float64{0.9, 0.6, 0.8}, 0.8},
		{[]float64{0.9, 0.6, 0.8, 0.7}, 0.75},
	} {
		in := append([]float64(nil), tc.xs...)
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.xs) {
			t.Errorf("Median reordered its input: %v", tc.xs)
		}
	}
}

func TestTally(t *testing.T) {
	var tl Tally
	s := time.Second
	tl.Add(map[string]time.Duration{"apiserver": 10 * s, "bench": s}, map[string]time.Duration{"apiserver": 13 * s, "bench": 2 * s}, 2*s)
	tl.Add(map[string]time.Duration{"apiserver": 20 * s, "bench": 5 * s, "helm": 0}, map[string]time.Duration{"apiserver": 21 * s, "bench": 5 * s, "helm": 2 * s}, s)
	got := tl.Format(2)
	if want := "apiserver 4.0, helm 2.0, bench 1.0; together 7.0 of 2 cores x 3.0s = 6.0"; got != want {
		t.Fatalf("Format = %q, want %q", got, want)
	}
}

func TestAddDelta(t *testing.T) {
	scrape := func(s string) []Sample { return ParseMetrics(strings.NewReader(s)) }
	var acc []Sample
	acc = AddDelta(acc,
		scrape(`apiserver_request_total{resource="benches",verb="POST"} 10`),
		scrape(`apiserver_request_total{resource="benches",verb="POST"} 110
apiserver_request_total{resource="events",verb="POST"} 100`))
	// A raw round between the two spans is not counted.
	acc = AddDelta(acc,
		scrape(`apiserver_request_total{resource="benches",verb="POST"} 310
apiserver_request_total{resource="events",verb="POST"} 100
apiserver_request_total{resource="helmreleases",verb="POST"} 200`),
		scrape(`apiserver_request_total{resource="benches",verb="POST"} 410
apiserver_request_total{resource="events",verb="POST"} 200
apiserver_request_total{resource="helmreleases",verb="POST"} 300`))
	if got := Sum(acc, "apiserver_request_total", map[string]string{"resource": "benches"}); got != 200 {
		t.Errorf("benches POSTs = %v, want 200", got)
	}
	if got, want := RequestMix(nil, acc, 200), "POST benches 1.00, POST events 1.00, POST helmreleases 0.50"; got != want {
		t.Errorf("RequestMix = %q, want %q", got, want)
	}
}
