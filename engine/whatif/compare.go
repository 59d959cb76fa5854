package whatif

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
)

// Match says how an event of Envoy's event log and the lab's replay of
// the same traffic compare.
type Match string

const (
	// Agree: Envoy and the lab did the same thing to the host, with the
	// same detector, in the same interval.
	Agree Match = "agree"
	// Disagree: both acted on the host in the same interval, but not alike
	// (another detector, enforced or not, another count or threshold).
	Disagree Match = "disagree"
	// OnlyEnvoy: Envoy's event log has it; the lab did nothing like it.
	OnlyEnvoy Match = "only_envoy"
	// OnlyLab: the lab did it; Envoy's event log has nothing like it.
	OnlyLab Match = "only_lab"
)

// Comparison is Envoy's event log beside the lab's replay of the access
// log of the same traffic.
type Comparison struct {
	// Result is the lab's replay the events were matched against.
	Result *Result `json:"-"`
	// TickPhaseMs is when, after Result.Start, the lab's first tick fell:
	// where Envoy's interval timer fired, read from its tick events
	// (returns, success-rate and failure-percentage ejections). 0 when the
	// event log has none, and the lab ticked every interval from Start.
	TickPhaseMs int64 `json:"tick_phase_ms"`
	// TickEvents is how many of Envoy's events TickPhaseMs was read from.
	TickEvents int           `json:"tick_events"`
	Events     []MatchedPair `json:"events"`
	Summary    MatchSummary  `json:"summary"`
	// Findings are what the disagreements have in common, in sentences,
	// each naming the field it points to.
	Findings []Finding `json:"findings"`
}

// MatchedPair is one Envoy event, one lab event, or both.
type MatchedPair struct {
	Match Match       `json:"match"`
	Host  string      `json:"host"`
	Envoy *EnvoyEvent `json:"envoy,omitempty"`
	Lab   *LabEvent   `json:"lab,omitempty"`
	// DeltaMs is the lab's time minus Envoy's, for a pair.
	DeltaMs *int64 `json:"delta_ms,omitempty"`
	// Why explains a disagreement (and notes on an agreement) from what
	// the lab can see.
	Why []string `json:"why,omitempty"`
	// Field is the config field a disagreement points to, if one.
	Field string `json:"field,omitempty"`
}

// EnvoyEvent is an event-log line, with its time on the replay's clock.
type EnvoyEvent struct {
	eventlog.Event
	AtMs int64 `json:"at_ms"`
	// Kind is the lab's word for it: eject, detect (an EJECT with enforced
	// false), degrade (type DEGRADED) or uneject.
	Kind string `json:"kind"`
}

// LabEvent is one of the replay's events.
type LabEvent struct {
	AtMs         int64     `json:"at_ms"`
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"`
	Detector     string    `json:"detector,omitempty"`
	NumEjections uint32    `json:"num_ejections,omitempty"`
	// For success-rate and failure-percentage ejections: the host's rate,
	// and for success rate the mean and threshold, as the lab computed
	// them (0–100, not truncated).
	HostSuccessRate *float64 `json:"host_success_rate,omitempty"`
	Mean            *float64 `json:"mean,omitempty"`
	Threshold       *float64 `json:"threshold,omitempty"`
	raw             engine.Event
}

// MatchSummary counts the matches.
type MatchSummary struct {
	EnvoyEvents int `json:"envoy_events"`
	LabEvents   int `json:"lab_events"`
	Agree       int `json:"agree"`
	Disagree    int `json:"disagree"`
	OnlyEnvoy   int `json:"only_envoy"`
	OnlyLab     int `json:"only_lab"`
}

// Disagreements is every match that is not an agreement.
func (s MatchSummary) Disagreements() int { return s.Disagree + s.OnlyEnvoy + s.OnlyLab }

// Finding is a conclusion drawn from several events.
type Finding struct {
	Field string `json:"field"`
	Text  string `json:"text"`
}

// NamesClusters says whether some line names its upstream cluster
// (Istio's format, or JSON with upstream_cluster); Envoy's default format
// does not, and such a log is all of one cluster, whatever its name.
func (l *Log) NamesClusters() bool {
	for _, e := range l.Entries {
		if e.Cluster != "" {
			return true
		}
	}
	return false
}

// Compare replays the log with opts, its ticks where Envoy's fired, and
// matches the replay's events with Envoy's: per host, an ejection with an
// ejection and a return with a return, at most an interval apart.
func Compare(log *Log, events *eventlog.Log, opts Options) (*Comparison, error) {
	entries, _, err := replayable(log, opts)
	if err != nil {
		return nil, err
	}
	start := entries[0].Start
	for _, e := range entries {
		if e.Start.Before(start) {
			start = e.Start
		}
	}
	start = start.Truncate(time.Second)
	c := &Comparison{Events: []MatchedPair{}, Findings: []Finding{}}
	c.TickPhaseMs, c.TickEvents = tickPhase(events.Events, start, opts.Config.IntervalMs)
	opts.FirstTickMs = c.TickPhaseMs
	res, err := Run(log, opts)
	if err != nil {
		return nil, err
	}
	c.Result = res
	envoy := slices.Clone(events.Events)
	sort.SliceStable(envoy, func(i, j int) bool { return envoy[i].Time.Before(envoy[j].Time) })
	m := matcher{cfg: opts.Config, res: res, streaks: newStreaks(entries, opts.Config.SplitExternalLocalOriginErrors), envoy: envoy}
	m.match(c)
	c.Findings = m.findings()
	return c, nil
}

// tickPhase is where Envoy's interval timer fires, as ms after start
// modulo the interval: the residue most of its tick events share (within
// 50 ms: the timer is re-armed after each tick's work, so it drifts),
// their median. Returns and success-rate or failure-percentage
// ejections happen at ticks (DetectorImpl::onIntervalTimer); a return
// at an active health check does not, and is outvoted.
func tickPhase(events []eventlog.Event, start time.Time, intervalMs int64) (int64, int) {
	var res []int64
	for _, e := range events {
		if e.Action == eventlog.Uneject || strings.HasPrefix(e.Detector, "success_rate") || strings.HasPrefix(e.Detector, "failure_percentage") {
			ms := e.Time.Sub(start).Milliseconds()
			if ms >= 0 {
				res = append(res, ms%intervalMs)
			}
		}
		if len(res) == 1000 {
			break
		}
	}
	if len(res) == 0 {
		return 0, 0
	}
	near := func(a, b int64) bool {
		d := (a - b + intervalMs) % intervalMs
		return d <= 50 || intervalMs-d <= 50
	}
	// offset is s−r on the circle of residues, in (−interval/2, interval/2].
	offset := func(r, s int64) int64 {
		d := ((s-r)%intervalMs + intervalMs) % intervalMs
		if d > intervalMs/2 {
			d -= intervalMs
		}
		return d
	}
	var best []int64
	center := int64(0)
	for _, r := range res {
		var group []int64
		for _, s := range res {
			if near(r, s) {
				group = append(group, offset(r, s))
			}
		}
		if len(group) > len(best) {
			best, center = group, r
		}
	}
	slices.Sort(best)
	return ((center+best[len(best)/2])%intervalMs + intervalMs) % intervalMs, len(best)
}

// matcher pairs the events. Each list is indexed by host (its indices in
// time order), so that a day's events pair in n·log n, not n².
type matcher struct {
	cfg     engine.Config
	res     *Result
	streaks streaks
	envoy   []eventlog.Event
	pairs   []MatchedPair
	// overflows are the lab's cap refusals (Envoy logs none of its own).
	overflows []engine.Event

	envoyAt, rawAt, overflowAt, pairAt map[string][]int
}

// byHost indexes a time-ordered list by host.
func byHost[T any](list []T, host func(*T) string) map[string][]int {
	out := map[string][]int{}
	for i := range list {
		h := host(&list[i])
		out[h] = append(out[h], i)
	}
	return out
}

func (m *matcher) at(t time.Time) int64 { return t.Sub(m.res.Start).Milliseconds() }

func (m *matcher) match(c *Comparison) {
	var lab []*LabEvent
	for _, e := range m.res.Raw {
		if e.Kind == engine.EventOverflow {
			m.overflows = append(m.overflows, e)
			continue
		}
		lab = append(lab, labEvent(e, m.res.Start))
	}
	m.envoyAt = byHost(m.envoy, func(e *eventlog.Event) string { return e.Host })
	m.rawAt = byHost(m.res.Raw, func(e *engine.Event) string { return e.Host })
	m.overflowAt = byHost(m.overflows, func(e *engine.Event) string { return e.Host })
	labAt := byHost(lab, func(l **LabEvent) string { return (*l).raw.Host })
	used := make([]bool, len(lab))
	for _, e := range m.envoy {
		ev := &EnvoyEvent{Event: e, AtMs: m.at(e.Time), Kind: envoyKind(e)}
		best, bestScore := -1, int64(math.MaxInt64)
		near := labAt[e.Host]
		from := sort.Search(len(near), func(k int) bool { return lab[near[k]].AtMs >= ev.AtMs-m.cfg.IntervalMs })
		for _, i := range near[from:] {
			l := lab[i]
			if l.AtMs > ev.AtMs+m.cfg.IntervalMs {
				break
			}
			if used[i] || isReturn(l.Kind) != (ev.Kind == "uneject") {
				continue
			}
			d := abs(l.AtMs - ev.AtMs)
			score := d
			if !sameKind(ev, l) {
				score += 2 * m.cfg.IntervalMs // an exact match first
			}
			if score < bestScore {
				best, bestScore = i, score
			}
		}
		if best < 0 {
			m.pairs = append(m.pairs, MatchedPair{Match: OnlyEnvoy, Host: e.Host, Envoy: ev})
			continue
		}
		used[best] = true
		d := lab[best].AtMs - ev.AtMs
		m.pairs = append(m.pairs, MatchedPair{Match: Agree, Host: e.Host, Envoy: ev, Lab: lab[best], DeltaMs: &d})
	}
	for i, l := range lab {
		if !used[i] {
			m.pairs = append(m.pairs, MatchedPair{Match: OnlyLab, Host: l.raw.Host, Lab: l})
		}
	}
	sort.SliceStable(m.pairs, func(i, j int) bool { return pairAt(m.pairs[i]) < pairAt(m.pairs[j]) })
	m.pairAt = byHost(m.pairs, func(p *MatchedPair) string { return p.Host })
	for i := range m.pairs {
		m.explain(&m.pairs[i])
	}
	c.Events = m.pairs
	s := &c.Summary
	s.EnvoyEvents, s.LabEvents = len(m.envoy), len(lab)
	for _, p := range m.pairs {
		switch p.Match {
		case Agree:
			s.Agree++
		case Disagree:
			s.Disagree++
		case OnlyEnvoy:
			s.OnlyEnvoy++
		case OnlyLab:
			s.OnlyLab++
		}
	}
}

func pairAt(p MatchedPair) int64 {
	if p.Envoy != nil {
		return p.Envoy.AtMs
	}
	return p.Lab.AtMs
}

func labEvent(e engine.Event, start time.Time) *LabEvent {
	l := &LabEvent{AtMs: e.AtMs, Time: start.Add(time.Duration(e.AtMs) * time.Millisecond), Kind: e.Kind.String(), raw: e}
	if isReturn(l.Kind) {
		return l
	}
	l.Detector = e.Detector.String()
	if e.Kind == engine.EventEject {
		l.NumEjections = e.NumEjections
	}
	switch e.Detector {
	case engine.SuccessRate, engine.SuccessRateLocalOrigin:
		l.HostSuccessRate, l.Mean, l.Threshold = &e.HostSuccessRate, &e.Mean, &e.Threshold
	case engine.FailurePercentage, engine.FailurePercentageLocalOrigin:
		l.HostSuccessRate = &e.HostSuccessRate
	}
	return l
}

// envoyKind is the lab's word for an event-log line.
func envoyKind(e eventlog.Event) string {
	switch {
	case e.Action == eventlog.Uneject:
		return "uneject"
	case e.Detector == engine.Degraded.String():
		return "degrade"
	case !e.Enforced:
		return "detect"
	}
	return "eject"
}

func isReturn(kind string) bool { return kind == "uneject" || kind == "undegrade" }

// sameKind: an UNEJECT line ends an ejection or a degradation alike.
func sameKind(e *EnvoyEvent, l *LabEvent) bool {
	if e.Kind == "uneject" {
		return isReturn(l.Kind)
	}
	return e.Kind == l.Kind && e.Detector == l.Detector
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
