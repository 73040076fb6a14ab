package measure

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Efficiency is write efficiency: the time the API server needs for the
// writes the pipeline cannot avoid, writes times raw (the time to create the
// same number of objects directly with unthrottled clients), over the time
// the pipeline took.
func Efficiency(writes int, raw, pipeline time.Duration) float64 {
	if pipeline <= 0 {
		return 0
	}
	return float64(writes) * raw.Seconds() / pipeline.Seconds()
}

// Verdict says whether value meets target: at least target when higher is
// better, at most target otherwise.
func Verdict(value, target float64, higherIsBetter bool) string {
	if (higherIsBetter && value >= target) || (!higherIsBetter && value <= target) {
		return "met"
	}
	return "missed"
}

// Figure prints one figure with its target and verdict, and returns it as a
// result row: setting, figure, value, target, verdict.
func Figure(setting, name string, value float64, unit string, target float64, higherIsBetter bool) []string {
	cmp := "<="
	if higherIsBetter {
		cmp = ">="
	}
	v := Verdict(value, target, higherIsBetter)
	val := strconv.FormatFloat(value, 'f', 2, 64) + unit
	tgt := cmp + " " + strconv.FormatFloat(target, 'f', -1, 64) + unit
	fmt.Printf("  %-42s %-14s target %-12s %s\n", name, val, tgt, v)
	return []string{setting, name, val, tgt, v}
}

// Report prints a figure that has no target (reported only) and returns its row.
func Report(setting, name, value string) []string {
	fmt.Printf("  %-42s %-14s (reported)\n", name, value)
	return []string{setting, name, value, "-", "reported"}
}

// AppendRows appends tab-separated rows to the file at path (none when path is empty).
func AppendRows(path string, rows ...[]string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	Check(err)
	defer f.Close()
	for _, r := range rows {
		_, err := fmt.Fprintln(f, strings.Join(r, "\t"))
		Check(err)
	}
}

// Sample is one series of a Prometheus text exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// ParseMetrics reads the samples of a Prometheus text exposition; comments
// and malformed lines are skipped.
func ParseMetrics(r io.Reader) []Sample {
	return parseMetrics(r, nil)
}

// parseMetrics is ParseMetrics of the samples whose metric name keep keeps
// (all when keep is nil); the others are skipped before their labels are
// read.
func parseMetrics(r io.Reader, keep func(name string) bool) []Sample {
	var out []Sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		if keep != nil {
			if i := strings.IndexAny(l, "{ "); i < 0 || !keep(l[:i]) {
				continue
			}
		}
		s := Sample{Labels: map[string]string{}}
		rest := l
		if i := strings.IndexByte(l, '{'); i >= 0 {
			j := strings.LastIndexByte(l, '}')
			if j < i {
				continue
			}
			s.Name = l[:i]
			for _, kv := range splitLabels(l[i+1 : j]) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.Labels[k] = strings.Trim(v, `"`)
				}
			}
			rest = strings.TrimSpace(l[j+1:])
		} else {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			s.Name, rest = f[0], f[1]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.Value = v
		out = append(out, s)
	}
	return out
}

// splitLabels splits a{...} label text at commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Sum adds the values of the samples called name whose labels include every
// pair of match.
func Sum(samples []Sample, name string, match map[string]string) float64 {
	t := 0.0
next:
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		for k, v := range match {
			if s.Labels[k] != v {
				continue next
			}
		}
		t += s.Value
	}
	return t
}

// RequestMix is what the API server served between two scrapes of its
// metrics, per instance: apiserver_request_total by verb and resource
// (/subresource), watches aside, the most frequent first, those under 0.01
// per instance left out. It shows which requests a pipeline costs.
func RequestMix(before, after []Sample, n int) string {
	return mix(before, after, n, "apiserver_request_total", func(s Sample) string {
		if s.Labels["verb"] == "WATCH" {
			return ""
		}
		key := s.Labels["verb"] + " " + s.Labels["resource"]
		if sub := s.Labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		return key
	})
}

// WatchEventMix is, in the same form, the watch events the API server sent
// between two scrapes, per n, by kind (or resource, as newer servers label
// them): one event sent to each watcher of a changed object, so it shows what
// the watchers of a phase cost beside its requests.
func WatchEventMix(before, after []Sample, n int) string {
	return Mix(before, after, n, "apiserver_watch_events_total", "kind", "resource")
}

// FlowMix is, in the same form, the requests API Priority and Fairness
// dispatched between two scrapes, per instance, by flow schema and priority
// level: where the API server placed the clients' requests.
func FlowMix(before, after []Sample, n int) string {
	return mix(before, after, n, "apiserver_flowcontrol_dispatched_requests_total", func(s Sample) string {
		return s.Labels["flow_schema"] + "/" + s.Labels["priority_level"]
	})
}

// Mix is, in the same form, the growth of the counter called name between
// two scrapes, per n, by the values of labels (joined by a space): what a
// controller's own metrics say it wrote, by method or by kind and outcome.
func Mix(before, after []Sample, n int, name string, labels ...string) string {
	return mix(before, after, n, name, func(s Sample) string {
		vs := make([]string, len(labels))
		for i, l := range labels {
			vs[i] = s.Labels[l]
		}
		return strings.TrimSpace(strings.Join(vs, " "))
	})
}

// Means is, between two scrapes, the mean of the histogram called name (its
// _sum over its _count) by the value of label, with the count beside, the
// longest first: "helmreleases 4.10s (1), benches 2.00s (1)". It shows where
// a phase waited, as the API server measured it.
func Means(before, after []Sample, name, label string) string {
	grown := AddDelta(nil, before, after)
	delta := func(suffix string) map[string]float64 {
		m := map[string]float64{}
		for _, s := range grown {
			if s.Name == name+suffix {
				m[s.Labels[label]] += s.Value
			}
		}
		return m
	}
	sums, counts := delta("_sum"), delta("_count")
	var out []ranked
	for k, c := range counts {
		if c > 0 && sums[k]/c >= 0.005 {
			out = append(out, ranked{k, sums[k] / c, fmt.Sprintf("%s %.2fs (%.0f)", k, sums[k]/c, c)})
		}
	}
	return joinRanked(out)
}

// mix counts the samples called name by key (those whose key is empty left
// out) from before to after, per n, the most frequent first, those under
// 0.01 per n left out.
func mix(before, after []Sample, n int, name string, key func(Sample) string) string {
	count := func(samples []Sample) map[string]float64 {
		m := map[string]float64{}
		for _, s := range samples {
			if s.Name != name {
				continue
			}
			if k := key(s); k != "" {
				m[k] += s.Value
			}
		}
		return m
	}
	b, a := count(before), count(after)
	var out []ranked
	for k, v := range a {
		if per := (v - b[k]) / float64(n); per >= 0.01 {
			out = append(out, ranked{k, per, fmt.Sprintf("%s %.2f", k, per)})
		}
	}
	return joinRanked(out)
}

// ranked is one entry of a summary line: its key, the value it is ranked
// by, and its text.
type ranked struct {
	key   string
	value float64
	text  string
}

// joinRanked joins the entries' texts, the highest value first (equal
// values by key).
func joinRanked(out []ranked) string {
	sort.Slice(out, func(i, j int) bool {
		if out[i].value != out[j].value {
			return out[i].value > out[j].value
		}
		return out[i].key < out[j].key
	})
	parts := make([]string, len(out))
	for i, r := range out {
		parts[i] = r.text
	}
	return strings.Join(parts, ", ")
}

// WriteCount is the mutating API requests among samples (client-go's
// rest_client_requests_total by method).
func WriteCount(samples []Sample) int {
	t := 0.0
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		t += Sum(samples, "rest_client_requests_total", map[string]string{"method": m})
	}
	return int(t)
}

// Scrape fetches and parses a metrics URL.
func Scrape(url string) ([]Sample, error) {
	return ScrapeOnly(url)
}

// ScrapeOnly fetches a metrics URL and parses the samples of the metrics
// named (all when none is): a poll of a controller holding 100,000 objects'
// readiness series (pkg/readymetric) then reads the few it needs of some
// 10 MB. The names are asked of the endpoint too (client_golang's name[]
// filter, where it serves one), so it may leave the others out.
func ScrapeOnly(url string, names ...string) ([]Sample, error) {
	var keep func(string) bool
	if len(names) > 0 {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "name[]=" + n
		}
		url += "?" + strings.Join(q, "&")
		keep = func(name string) bool { return slices.Contains(names, name) }
	}
	resp, err := http.Get(url) //nolint:gosec // a local URL given on the command line
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body, keep), nil
}

// KV parses "a=1,b=2" into ordered pairs.
func KV(s string) [][2]string {
	var out [][2]string
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// Process is one process the bench measures, by name.
type Process struct {
	Name string
	PID  int
}

// Processes parses lists of name=pid, in order.
func Processes(lists ...string) []Process {
	var out []Process
	for _, l := range lists {
		for _, kv := range KV(l) {
			pid, err := strconv.Atoi(kv[1])
			Check(err)
			out = append(out, Process{Name: kv[0], PID: pid})
		}
	}
	return out
}

// MemoryLimit is the memory limit in MiB of the process named name, from
// limits ("controller=MiB,..."): the controller's own, or that of the
// controller it is another instance of ("helm-s0", "helm-restarted" run
// helm). ok is false when none is given.
func MemoryLimit(limits, name string) (mib float64, ok bool) {
	best := ""
	for _, kv := range KV(limits) {
		k := kv[0]
		if (name == k || strings.HasPrefix(name, k+"-")) && len(k) > len(best) {
			v, err := strconv.ParseFloat(kv[1], 64)
			Check(err)
			best, mib = k, v
		}
	}
	return mib, best != ""
}

// PeakRSS reports the peak RSS of each process of pids ("name=pid,..."),
// judged against its controller's memory limit (limits, MemoryLimit) when
// judged and one is given, else only reported.
func PeakRSS(label, pids, limits string, judged bool) [][]string {
	var rows [][]string
	for _, p := range Processes(pids) {
		mib, err := PeakRSSMiB(p.PID)
		Check(err)
		if limit, ok := MemoryLimit(limits, p.Name); judged && ok {
			rows = append(rows, Figure(label, "peak RSS "+p.Name, mib, " MiB", limit, false))
		} else {
			rows = append(rows, Report(label, "peak RSS "+p.Name, fmt.Sprintf("%.2f MiB", mib)))
		}
	}
	return rows
}

// EventsLost reports, against 0, the events each controller of metrics
// ("name=URL,...") dropped: cozystack_events_lost_total, its queues full or
// the API server refusing or unreachable (pkg/record).
func EventsLost(label, metrics string) [][]string {
	var rows [][]string
	for _, kv := range KV(metrics) {
		s, err := Scrape(kv[1])
		Check(err)
		rows = append(rows, Figure(label, "events lost "+kv[0], Sum(s, "cozystack_events_lost_total", nil), "", 0, false))
	}
	return rows
}

// PeakRSSMiB is the peak resident set (VmHWM) of a process in MiB.
func PeakRSSMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return ParseVmHWM(string(b))
}

// ParseVmHWM reads VmHWM from the text of /proc/<pid>/status, in MiB.
func ParseVmHWM(status string) (float64, error) {
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) < 2 {
				break
			}
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				return 0, err
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM line")
}

// ProcessesCPU reads the CPU time used so far by each process of the
// name=pid lists, and by the bench itself (named "bench").
func ProcessesCPU(lists ...string) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, p := range append(Processes(lists...), Process{Name: "bench", PID: os.Getpid()}) {
		d, err := ProcessCPU(p.PID)
		Check(err)
		out[p.Name] = d
	}
	return out
}

// ProcessCPU is the CPU time (user and system) a process has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseProcessCPU(string(b))
}

// ParseProcessCPU reads utime and stime from the text of /proc/<pid>/stat.
// They count clock ticks of USER_HZ, which Linux fixes at 100 per second in
// what it reports to user space. The command name, in parentheses, may hold
// spaces and parentheses itself: the fields are counted from the last ')'.
func ParseProcessCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/<pid>/stat: no command name")
	}
	// After the name: state (field 3), ..., utime (14), stime (15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/<pid>/stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/<pid>/stat: %w", err)
		}
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// CPUTimes parses the first line of /proc/stat: the machine's busy and total
// CPU time, in clock ticks.
func CPUTimes(stat string) (busy, total uint64, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("no cpu line in /proc/stat")
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += v
		// idle and iowait are the 4th and 5th numbers.
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, nil
}

// WaitQuiet waits until the machine is quiet: less than maxBusy (a fraction
// of all cores) busy over one second, so that a measurement does not share
// the CPU with the API server's start-up work (OpenAPI aggregation after CRDs
// are installed, say). It gives up after timeout and returns how long it
// waited and the last busy fraction seen.
func WaitQuiet(maxBusy float64, timeout time.Duration) (time.Duration, float64) {
	start := time.Now()
	read := func() (uint64, uint64) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0
		}
		busy, total, _ := CPUTimes(string(b))
		return busy, total
	}
	b0, t0 := read()
	for {
		time.Sleep(time.Second)
		b1, t1 := read()
		frac := 0.0
		if t1 > t0 {
			frac = float64(b1-b0) / float64(t1-t0)
		}
		if frac < maxBusy || time.Since(start) >= timeout || t1 == 0 {
			return time.Since(start), frac
		}
		b0, t0 = b1, t1
	}
}

// Durations lists each run's time in seconds, for a reported row.
func Durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1fs", d.Seconds())
	}
	return strings.Join(parts, ", ")
}

// Floats lists each run's figure, for a reported row.
func Floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
