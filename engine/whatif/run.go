package whatif

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/replay"
	"outlierlab/engine/scenario"
)

// Options is what a replay runs with.
type Options struct {
	Config engine.Config
	// PanicThreshold is common_lb_config.healthy_panic_threshold: in panic
	// Envoy sends traffic to ejected hosts too, so their lines are replayed.
	PanicThreshold float64
	// Cluster keeps the lines of one upstream cluster; "" when the log has
	// one (or does not say).
	Cluster string
	// Seed seeds the enforcing_* draws and the ejection jitter.
	Seed uint64
	// Hosts are hosts of the cluster beyond those the log names (Envoy's
	// /clusters lists them all): a host that served nothing still counts
	// in max_ejection_percent's denominator, every host of the cluster.
	Hosts []string
	// FirstTickMs, in (0, interval), puts the first tick that many ms
	// after Start (and every later one an interval on), where Envoy's
	// timer fired (Compare reads it from Envoy's event log); 0 is one
	// interval after Start.
	FirstTickMs int64
	// Progress, if not nil, is told now and then how many of the lines to
	// replay have been (done of total).
	Progress func(done, total int)
}

// Result is a replay: the detector's events in the replay format
// (shared/spec/replay.md: at_ms since Start), one frame per interval for
// the lab's charts, and what the log could not show.
type Result struct {
	// Start is t = 0: the first line's second (ticks fall on Start +
	// k·interval).
	Start  time.Time        `json:"start_time"`
	Hosts  []string         `json:"hosts"`
	Events []replay.Event   `json:"events"`
	Frames []scenario.Frame `json:"frames"`
	// Clients in frames are the log's own outcomes (what happened under
	// the config that ran), not what this config would have changed.
	Summary Summary `json:"summary"`
	// Raw holds the engine's events (for sentences: engine/explain).
	Raw []engine.Event `json:"-"`
}

// Summary counts what was replayed and what could not be.
type Summary struct {
	Lines               int `json:"lines"`
	Unparsed            int `json:"unparsed"`
	OtherCluster        int `json:"other_cluster"`
	Requests            int `json:"requests"`
	Reported            int `json:"reported"`
	NotReported         int `json:"not_reported"`
	DroppedWhileEjected int `json:"dropped_while_ejected"`
	// AttemptsKnown: the log has %UPSTREAM_REQUEST_ATTEMPT_COUNT% (some
	// line gives a count).
	AttemptsKnown    bool        `json:"attempts_known"`
	Retried          int         `json:"retried"`
	EarlierAttempts  int         `json:"earlier_attempts"`
	RetriesExhausted int         `json:"retries_exhausted"`
	Ejections        int         `json:"ejections"`
	Unejections      int         `json:"unejections"`
	Overflows        int         `json:"overflows"`
	Detections       int         `json:"detections_not_enforced"`
	EndMs            int64       `json:"end_ms"`
	Unparsable       []LineError `json:"unparsed_lines,omitempty"`
	Caveats          []string    `json:"caveats"`
}

// Planned is what a replay would work on, known before it runs: the
// requests of the chosen cluster, their hosts and the time they span.
type Planned struct {
	Requests, Hosts int
	Span            time.Duration // first start (to the second) to last answer
}

// Plan checks what Run checks first (the interval, the cluster, a request
// to replay) and says how much there is to replay, without replaying it.
func Plan(log *Log, opts Options) (Planned, error) {
	entries, _, err := replayable(log, opts)
	if err != nil {
		return Planned{}, err
	}
	first, last := entries[0].Start, entries[0].Answer
	for _, e := range entries {
		if e.Start.Before(first) {
			first = e.Start
		}
		if e.Answer.After(last) {
			last = e.Answer
		}
	}
	return Planned{Requests: len(entries), Hosts: len(withHosts(hostsOf(entries), opts.Hosts)), Span: last.Sub(first.Truncate(time.Second))}, nil
}

// replayable is the entries Run replays: the chosen cluster's.
func replayable(log *Log, opts Options) ([]Entry, int, error) {
	if opts.Config.IntervalMs <= 0 {
		return nil, 0, fmt.Errorf("interval: %d ms is not positive", opts.Config.IntervalMs)
	}
	entries, other, err := selectCluster(log.Entries, opts.Cluster)
	if err != nil {
		return nil, 0, err
	}
	if len(entries) == 0 {
		return nil, 0, fmt.Errorf("the log has no request to replay (%s, %d did not parse)", nLines(log.Lines), log.Unparsed)
	}
	return entries, other, nil
}

// Run replays the log's requests through the detector.
func Run(log *Log, opts Options) (*Result, error) {
	entries, other, err := replayable(log, opts)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Answer.Before(entries[j].Answer) })
	start := entries[0].Start
	for _, e := range entries {
		if e.Start.Before(start) {
			start = e.Start
		}
	}
	named := hostsOf(entries)
	r := newReplayer(opts, start.Truncate(time.Second), withHosts(named, opts.Hosts))
	r.named = len(named)
	r.res.Summary.Lines, r.res.Summary.Unparsed, r.res.Summary.OtherCluster = log.Lines, log.Unparsed, other
	r.res.Summary.Unparsable = log.Errors
	for i, e := range entries {
		if opts.Progress != nil && i%4096 == 0 {
			opts.Progress(i, len(entries))
		}
		r.feed(e)
	}
	r.finish()
	if opts.Progress != nil {
		opts.Progress(len(entries), len(entries))
	}
	return r.res, nil
}

// selectCluster keeps one cluster's entries: the chosen one, or the only
// one the log names.
func selectCluster(all []Entry, name string) ([]Entry, int, error) {
	count := map[string]int{}
	for _, e := range all {
		count[e.Cluster]++
	}
	if name == "" {
		named := 0
		for c := range count {
			if c != "" {
				named++
			}
		}
		if named <= 1 {
			return slices.Clone(all), 0, nil
		}
		return nil, 0, fmt.Errorf("the log has requests for %d upstream clusters (%s); choose one: outlier detection runs per cluster", named, clusterList(count))
	}
	if count[name] == 0 {
		return nil, 0, fmt.Errorf("cluster %q: no request in the log (clusters: %s)", name, clusterList(count))
	}
	var out []Entry
	for _, e := range all {
		if e.Cluster == name {
			out = append(out, e)
		}
	}
	return out, len(all) - len(out), nil
}

func clusterList(count map[string]int) string {
	names := make([]string, 0, len(count))
	for c := range count {
		if c != "" {
			names = append(names, c)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		return count[names[i]] > count[names[j]] || count[names[i]] == count[names[j]] && names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("%s: %d", c, count[c])
	}
	if len(parts) > 6 {
		parts = append(parts[:6], "…")
	}
	return strings.Join(parts, ", ")
}

// hostsOf lists the distinct upstream hosts in order of first answer.
func hostsOf(entries []Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if e.Host != "" && !seen[e.Host] {
			seen[e.Host] = true
			out = append(out, e.Host)
		}
	}
	return out
}

// withHosts is the log's hosts, then the others' not among them.
func withHosts(named, others []string) []string {
	out := slices.Clone(named)
	for _, h := range others {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// replayer is one replay under way.
type replayer struct {
	opts     Options
	clock    engine.ManualClock
	d        *engine.Detector
	hosts    map[string]*engine.HostMonitor
	index    map[string]int
	start    time.Time
	nextTick int64
	lastMs   int64
	cur      interval
	res      *Result
	named    int // hosts the log names (the first of res.Hosts)
}

// interval accumulates the traffic between two ticks.
type interval struct {
	attempts  []uint64
	requests  uint64
	failures  uint64
	durations []int64
	panic     bool
}

func newReplayer(opts Options, start time.Time, hosts []string) *replayer {
	r := &replayer{opts: opts, start: start, hosts: map[string]*engine.HostMonitor{}, index: map[string]int{}, nextTick: opts.Config.IntervalMs}
	if opts.FirstTickMs > 0 && opts.FirstTickMs < opts.Config.IntervalMs {
		r.nextTick = opts.FirstTickMs
	}
	r.d = engine.NewDetector(opts.Config, &r.clock, rand.New(rand.NewPCG(opts.Seed, 0x7768617469660000)))
	for i, h := range hosts {
		r.hosts[h] = r.d.AddHost(h)
		r.index[h] = i
	}
	r.cur.attempts = make([]uint64, len(hosts))
	r.res = &Result{Start: start, Hosts: hosts, Events: []replay.Event{}, Frames: []scenario.Frame{}}
	return r
}

// feed ticks up to the entry's time, then gives the detector its result.
func (r *replayer) feed(e Entry) {
	at := e.Answer.Sub(r.start).Milliseconds()
	for r.nextTick <= at {
		r.tick()
	}
	r.clock.Ms, r.lastMs = at, at
	s := &r.res.Summary
	s.Requests++
	s.AttemptsKnown = s.AttemptsKnown || e.Attempts > 0
	if e.Attempts > 1 {
		s.Retried++
		s.EarlierAttempts += e.Attempts - 1
	}
	if slices.Contains(e.Flags, "URX") {
		s.RetriesExhausted++
	}
	r.cur.requests++
	if e.Code >= 500 || e.Code == 0 {
		r.cur.failures++
	}
	if e.DurationMs >= 0 {
		r.cur.durations = append(r.cur.durations, e.DurationMs)
	}
	panicking := r.inPanic()
	r.cur.panic = r.cur.panic || panicking
	m := r.hosts[e.Host]
	if rep, _ := Classify(e); rep == ReportNothing || m == nil {
		s.NotReported++
		return
	}
	if m.Ejected() && !panicking {
		// Outside panic Envoy routes around an ejected host: this request
		// would have gone elsewhere, with an outcome the log cannot show.
		s.DroppedWhileEjected++
		return
	}
	s.Reported++
	r.cur.attempts[r.index[e.Host]]++
	put(m, e)
}

// inPanic is the load balancer's panic test for one priority without
// degraded hosts (recalculatePerPriorityPanic, load_balancer_impl.cc; the
// same arithmetic as engine/sim's balancer): availability
// min(100, 140·healthy/total) below 100, and 100·healthy/total below the
// threshold.
func (r *replayer) inPanic() bool {
	total := uint64(len(r.hosts))
	if total == 0 {
		return false
	}
	healthy := total - r.d.EjectionsActive()
	if min(100, 140*healthy/total) == 100 {
		return false
	}
	return 100*float64(healthy)/float64(total) < min(r.opts.PanicThreshold, 100)
}

// finish ticks past the last line until every ejected host is back, so
// the replay shows when each would have returned.
func (r *replayer) finish() {
	cfg := r.opts.Config
	limit := r.lastMs + max(cfg.MaxEjectionTimeMs, cfg.BaseEjectionTimeMs) + cfg.MaxEjectionTimeJitterMs + 2*cfg.IntervalMs
	// The tick at nextTick−interval has run; the last line's interval
	// closes at the first tick after it.
	for r.nextTick-cfg.IntervalMs <= r.lastMs || (r.d.EjectionsActive() > 0 && r.nextTick <= limit) {
		r.tick()
	}
	s := &r.res.Summary
	s.EndMs = r.clock.Ms
	s.Caveats = caveats(s, len(r.res.Hosts))
	if extra := len(r.res.Hosts) - r.named; extra > 0 {
		s.Caveats[0] = fmt.Sprintf("Hosts are the cluster's %d: the %d the log names and %d more from Envoy's /clusters that served nothing in it; max_ejection_percent counts all of them, as Envoy does.", len(r.res.Hosts), r.named, extra)
	}
}
