package measure

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Rounds splits n items into r rounds of nearly equal size, in order: the
// half-open index range [lo, hi) of each. r is clamped to [1, n] (one empty
// round when n is 0).
func Rounds(n, r int) [][2]int {
	r = max(1, min(r, n))
	out := make([][2]int, r)
	for k := range r {
		out[k] = [2]int{k * n / r, (k + 1) * n / r}
	}
	return out
}

// RoundsFor is how many rounds a measurement of n items is interleaved in:
// one per 400 items, at least three (the verdict is the rounds' median, and
// one round is not a verdict) and at most ten. Rounds of 400 at n=2,000
// (about 1.5 s of raw creates and 5 s of pipeline each) and of 1,000 at
// n=10,000 alternate often enough to sample a machine whose speed moves
// within tens of seconds, and stay long enough that starting and draining a
// round is a small part of it.
func RoundsFor(n int) int { return max(3, min(10, n/400)) }

// Median is the middle value of xs (the mean of the two middle ones when
// their number is even); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Tally adds up, over several timed spans, the CPU time each process used
// and the wall time: where the time of a measurement taken in rounds went.
type Tally struct {
	Used map[string]time.Duration
	Wall time.Duration
}

// Add counts one span of wall time wall, over which each process's CPU time
// went from before to after.
func (t *Tally) Add(before, after map[string]time.Duration, wall time.Duration) {
	if t.Used == nil {
		t.Used = map[string]time.Duration{}
	}
	for name, a := range after {
		t.Used[name] += a - before[name]
	}
	t.Wall += wall
}

// Format lists the processes' CPU seconds, the busiest first, and what the
// machine's cores could give in the tallied wall time.
func (t Tally) Format(cores int) string {
	names := make([]string, 0, len(t.Used))
	for name := range t.Used {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if t.Used[names[i]] != t.Used[names[j]] {
			return t.Used[names[i]] > t.Used[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.1f", name, t.Used[name].Seconds())
	}
	return fmt.Sprintf("%s; together %.1f of %d cores x %.1fs = %.1f", strings.Join(parts, ", "), t.CPU().Seconds(),
		cores, t.Wall.Seconds(), float64(cores)*t.Wall.Seconds())
}

// AddDelta adds, for each series of after, its growth since before to acc
// (matched by name and labels), and returns acc: counters summed over
// several spans, which Sum and RequestMix read as they read one scrape.
func AddDelta(acc, before, after []Sample) []Sample {
	key := func(s Sample) string {
		ks := make([]string, 0, len(s.Labels))
		for k, v := range s.Labels {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		return s.Name + "{" + strings.Join(ks, ",") + "}"
	}
	was := map[string]float64{}
	for _, s := range before {
		was[key(s)] = s.Value
	}
	at := map[string]int{}
	for i, s := range acc {
		at[key(s)] = i
	}
	for _, s := range after {
		k := key(s)
		d := s.Value - was[k]
		if i, ok := at[k]; ok {
			acc[i].Value += d
			continue
		}
		at[k] = len(acc)
		acc = append(acc, Sample{Name: s.Name, Labels: s.Labels, Value: d})
	}
	return acc
}

// CPU is the CPU time of every process of the tally together.
func (t Tally) CPU() time.Duration {
	var sum time.Duration
	for _, d := range t.Used {
		sum += d
	}
	return sum
}
