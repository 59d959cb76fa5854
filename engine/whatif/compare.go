package whatif

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/explain"
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

// explain decides agree or disagree for a pair and says why, or why one
// side has nothing.
func (m *matcher) explain(p *MatchedPair) {
	switch p.Match {
	case Agree:
		m.explainPair(p)
	case OnlyEnvoy:
		m.explainOnlyEnvoy(p)
	case OnlyLab:
		m.explainOnlyLab(p)
	}
}

func (m *matcher) explainPair(p *MatchedPair) {
	e, l := p.Envoy, p.Lab
	disagree := func(field, format string, a ...any) {
		p.Match, p.Field = Disagree, field
		p.Why = append(p.Why, fmt.Sprintf(format, a...))
	}
	switch {
	case e.Kind == "uneject":
		if abs(*p.DeltaMs) >= m.cfg.IntervalMs/2 {
			disagree("base_ejection_time", "Envoy returned %s at %s, the lab at %s: the ejections lasted differently long (base_ejection_time × the host's backoff, max_ejection_time, max_ejection_time_jitter), or they began at other times.",
				e.Host, clock(e.Time), clock(l.Time))
		}
		return
	case e.Kind != l.Kind && e.Detector == l.Detector:
		field := ""
		if t, ok := engine.ParseEjectionType(e.Detector); ok {
			field = t.EnforcingField()
		}
		disagree(field, "Envoy %s and the lab %s on %s: %s is %d%% here%s.", verb(e.Kind), verb(l.Kind), e.Detector, field, l.raw.Enforcing, drawNote(l.raw.Enforcing, field))
		return
	case e.Detector != l.Detector:
		disagree(fieldOf(e.Detector), "Envoy %s %s on %s, the lab on %s: their counters or rates reached different thresholds first.", verb(e.Kind), e.Host, e.Detector, l.Detector)
		if t, _ := engine.ParseEjectionType(e.Detector); isConsecutive(t) {
			if n, threshold := m.streakAt(e), m.threshold(t); n != threshold && n > 0 {
				p.Why = append(p.Why, fmt.Sprintf("The log shows %d %s in a row on %s up to %s; %s is %d here: Envoy ran with %s = %d (a runtime override, outlier_detection.%s, or another config).", n, failureWord(t), e.Host, clock(e.Time), t, threshold, t, n, t))
			}
		}
		return
	}
	if t, _ := engine.ParseEjectionType(e.Detector); isConsecutive(t) {
		if n, threshold := m.streakAt(e), m.threshold(t); n != threshold && n > 0 {
			disagree(t.String(), "Envoy %s %s after %d in a row in the log (up to %s); %s is %d here.", verb(e.Kind), e.Host, n, clock(e.Time), t, threshold)
		}
	}
	if sr := e.SuccessRate; sr != nil && l.HostSuccessRate != nil {
		m.compareRates(p, sr, l, disagree)
	}
	if e.Kind == "eject" && l.NumEjections != e.NumEjections {
		p.Why = append(p.Why, fmt.Sprintf("Envoy counts this as ejection %d of %s, the lab as %d: Envoy ejected it before the access log begins, so its backoff (and ejection time) may be longer than the lab's.", e.NumEjections, e.Host, l.NumEjections))
	}
}

// compareRates sets the lab's numbers beside Envoy's, which are uint32:
// the lab's are truncated to compare.
func (m *matcher) compareRates(p *MatchedPair, sr *eventlog.SuccessRate, l *LabEvent, disagree func(string, string, ...any)) {
	trunc := func(f float64) uint32 { return uint32(max(0, math.Floor(f))) }
	if sr.Threshold != nil && l.Threshold != nil && *sr.Threshold != trunc(*l.Threshold) {
		disagree("success_rate_stdev_factor", "Envoy's success-rate threshold was %d%% (cluster average %d%%, %s at %d%%); the lab's is %s%% (mean %s%%, %s at %s%%), with success_rate_stdev_factor %d: %s",
			*sr.Threshold, *sr.ClusterAverage, p.Host, sr.Host, pct(*l.Threshold), pct(*l.Mean), p.Host, pct(*l.HostSuccessRate), m.cfg.SuccessRateStdevFactor, srCauses)
		return
	}
	if sr.Host != trunc(*l.HostSuccessRate) {
		disagree("", "Envoy saw %s at %d%% success, the lab at %s%%: %s", p.Host, sr.Host, pct(*l.HostSuccessRate), srCauses)
	}
}

const srCauses = "Envoy's buckets held requests the log lacks (retried attempts, another Envoy's traffic in or out of the log), or a runtime override (outlier_detection.success_rate_stdev_factor) moved the threshold."

func (m *matcher) explainOnlyEnvoy(p *MatchedPair) {
	e := p.Envoy
	add := func(format string, a ...any) { p.Why = append(p.Why, fmt.Sprintf(format, a...)) }
	switch {
	case e.AtMs < 0:
		add("It is before the access log begins (%s).", clock(m.res.Start))
		return
	case e.AtMs > m.res.Summary.EndMs+m.cfg.IntervalMs:
		add("It is after the replay ends (%s).", clock(m.res.Start.Add(time.Duration(m.res.Summary.EndMs)*time.Millisecond)))
		return
	case e.Kind == "uneject":
		if prev := m.previousEnvoy(e, eventlog.Eject); prev != nil {
			add("It ends Envoy's ejection of line %d, which the lab did not make the same way.", prev.Line)
		} else {
			add("Envoy ejected %s before its event log (or this stretch of it) begins.", e.Host)
		}
		return
	}
	if lab := m.labEjectedAt(e.Host, e.AtMs); lab != nil {
		add("The lab had ejected %s already, at %s (%s).", e.Host, clock(m.res.Start.Add(time.Duration(lab.AtMs)*time.Millisecond)), lab.Detector)
		return
	}
	if o := m.overflowNear(e.Host, e.AtMs); o != nil {
		add("The lab's cap refused it: 100·(%d+1)/%d = %s%% is over max_ejection_percent %d%%. The lab counts %d hosts; Envoy's cluster may have more (a host that served nothing is not in the log: give Envoy's /clusters), which lets more out.",
			o.Cap.Active, o.Cap.Hosts, pct(o.Cap.Percent), o.Cap.MaxPercent, o.Cap.Hosts)
		p.Field = "max_ejection_percent"
		return
	}
	t, _ := engine.ParseEjectionType(e.Detector)
	switch {
	case isConsecutive(t):
		n, threshold := m.streakAt(e), m.threshold(t)
		switch {
		case n == 0:
			add("The log shows no %s failure of %s just before %s: the failures Envoy counted are not in this log (retried attempts, another Envoy's traffic).", t, e.Host, clock(e.Time))
		case n < threshold:
			add("The log shows %d %s in a row on %s up to %s; %s is %d here. Envoy %s at %d: it ran with %s = %d (a runtime override, outlier_detection.%s, or another config)%s.",
				n, failureWord(t), e.Host, clock(e.Time), t, threshold, verb(e.Kind), n, t, n, t, m.hiddenAttempts())
			p.Field = t.String()
		default:
			add("The log shows %d %s in a row on %s up to %s, as many as %s (%d) asks, yet the lab did not act: the lab saw them in another order.", n, failureWord(t), e.Host, clock(e.Time), t, threshold)
		}
	case t == engine.SuccessRate || t == engine.FailurePercentage || t == engine.SuccessRateLocalOrigin || t == engine.FailurePercentageLocalOrigin:
		m.explainRateOnlyEnvoy(p, t)
	default:
		add("The lab did not %s %s then.", strings.TrimSuffix(e.Kind, "e"), e.Host)
	}
}

// explainRateOnlyEnvoy sets Envoy's numbers beside the lab's pass at the
// tick nearest Envoy's.
func (m *matcher) explainRateOnlyEnvoy(p *MatchedPair, t engine.EjectionType) {
	e := p.Envoy
	f := m.frameNear(e.AtMs)
	if f < 0 {
		p.Why = append(p.Why, "The lab has no tick near it.")
		return
	}
	fr := &m.res.Frames[f]
	pass := fr.External
	if t == engine.SuccessRateLocalOrigin || t == engine.FailurePercentageLocalOrigin {
		pass = fr.Local
	}
	var host *float64
	var requests uint64
	for _, h := range fr.Hosts {
		if h.Name == e.Host {
			rate := h.SuccessRate
			requests = h.Requests
			if h.Requests > 0 {
				host = &rate
			}
		}
	}
	envoy := "Envoy: no rates in its line"
	if e.SuccessRate != nil {
		envoy = fmt.Sprintf("Envoy: %s at %d%%", e.Host, e.SuccessRate.Host)
	}
	if e.SuccessRate != nil && e.SuccessRate.Threshold != nil {
		envoy += fmt.Sprintf(", cluster average %d%%, threshold %d%%", *e.SuccessRate.ClusterAverage, *e.SuccessRate.Threshold)
	}
	lab := fmt.Sprintf("the lab, at its tick %s: %s had %d requests", clock(m.res.Start.Add(time.Duration(fr.TMs)*time.Millisecond)), e.Host, requests)
	if host != nil {
		lab += fmt.Sprintf(" at %s%%", pct(*host))
	}
	isSR := t == engine.SuccessRate || t == engine.SuccessRateLocalOrigin
	gate, volume, hostsVolume, minimum := pass.FPGate, pass.FPRequestVolume, pass.FPHostsVolume, pass.FPMinimumHosts
	if isSR {
		gate, volume, hostsVolume, minimum = pass.SRGate, pass.SRRequestVolume, pass.SRHostsVolume, pass.SRMinimumHosts
	}
	switch {
	case gate != engine.GateRan:
		lab += fmt.Sprintf("; %d hosts had the request volume (%d), and %d are needed, so the pass did not run", hostsVolume, volume, minimum)
		p.Field = map[bool]string{true: "success_rate_request_volume", false: "failure_percentage_request_volume"}[isSR]
	case isSR:
		lab += fmt.Sprintf("; mean %s%%, threshold %s%%", pct(pass.Mean), pct(pass.Threshold))
		p.Field = "success_rate_stdev_factor"
	default:
		lab += fmt.Sprintf("; failure_percentage_threshold %d%%", pass.FPThreshold)
		p.Field = "failure_percentage_threshold"
	}
	p.Why = append(p.Why, envoy+"; "+lab+". "+srCauses)
}

func (m *matcher) explainOnlyLab(p *MatchedPair) {
	l := p.Lab
	add := func(format string, a ...any) { p.Why = append(p.Why, fmt.Sprintf(format, a...)) }
	if isReturn(l.Kind) {
		if ej := m.labEjectionBefore(l); ej != nil && ej.Match != OnlyLab {
			add("Envoy's event log has no return of %s within an interval of %s, though Envoy ejected it too (line %d): its UNEJECT line is missing (set aside above?) or after the event log ends.", p.Host, clock(l.Time), ej.Envoy.Line)
			return
		}
		add("It ends the lab's ejection of %s, which Envoy did not make the same way.", p.Host)
		return
	}
	t := l.raw.Detector
	if l.Kind == "detect" {
		add("Envoy writes an EJECT line with enforced false for a detection it does not enforce, and there is none: Envoy did not detect it.")
	}
	if isConsecutive(t) {
		add("Envoy logged no %s of %s within an interval of %s. Envoy writes nothing when its cap refuses an ejection (ejections_overflow counts it), nor while the host is ejected already; or it ran with a higher %s (a runtime override, outlier_detection.%s), or the log holds requests this Envoy did not proxy.",
			t, p.Host, clock(l.Time), t, t)
		p.Field = t.String()
		return
	}
	add("Envoy logged no %s of %s within an interval of %s: its cap may have refused it (Envoy logs no overflow), or its buckets held other requests than the log's (its ticks, retried attempts, another Envoy's traffic).", t, p.Host, clock(l.Time))
}

// labEjectionBefore is the pair of the lab's last ejection of the host
// before its return l.
func (m *matcher) labEjectionBefore(l *LabEvent) *MatchedPair {
	idx := m.pairAt[l.raw.Host]
	for k := sort.Search(len(idx), func(k int) bool { return pairAt(m.pairs[idx[k]]) > l.AtMs }) - 1; k >= 0; k-- {
		if p := &m.pairs[idx[k]]; p.Lab != nil && p.Lab.Kind == "eject" && p.Lab.AtMs <= l.AtMs {
			return p
		}
	}
	return nil
}

// previousEnvoy is the host's last Envoy event of the action before e.
func (m *matcher) previousEnvoy(e *EnvoyEvent, a eventlog.Action) *eventlog.Event {
	return m.lastEnvoyBefore(e, func(x *eventlog.Event) bool { return x.Action == a })
}

// lastEnvoyBefore is the host's last Envoy event before e that is ok.
func (m *matcher) lastEnvoyBefore(e *EnvoyEvent, ok func(*eventlog.Event) bool) *eventlog.Event {
	idx := m.envoyAt[e.Host]
	for k := sort.Search(len(idx), func(k int) bool { return !m.envoy[idx[k]].Time.Before(e.Time) }) - 1; k >= 0; k-- {
		if x := &m.envoy[idx[k]]; ok(x) {
			return x
		}
	}
	return nil
}

// labEjectedAt is the lab's ejection of host in force at ms, if any.
func (m *matcher) labEjectedAt(host string, ms int64) *engine.Event {
	idx := m.rawAt[host]
	for k := sort.Search(len(idx), func(k int) bool { return m.res.Raw[idx[k]].AtMs > ms }) - 1; k >= 0; k-- {
		switch e := &m.res.Raw[idx[k]]; e.Kind {
		case engine.EventEject:
			return e
		case engine.EventUneject:
			return nil
		}
	}
	return nil
}

func (m *matcher) overflowNear(host string, ms int64) *engine.Event {
	for _, i := range m.overflowAt[host] {
		if o := &m.overflows[i]; abs(o.AtMs-ms) <= m.cfg.IntervalMs {
			return o
		}
	}
	return nil
}

// frameNear is the frame whose tick is nearest ms (within an interval).
func (m *matcher) frameNear(ms int64) int {
	fs := m.res.Frames
	i := sort.Search(len(fs), func(i int) bool { return fs[i].TMs >= ms })
	best := -1
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(fs) && abs(fs[j].TMs-ms) <= m.cfg.IntervalMs && (best < 0 || abs(fs[j].TMs-ms) < abs(fs[best].TMs-ms)) {
			best = j
		}
	}
	return best
}

func (m *matcher) hiddenAttempts() string {
	s := m.res.Summary
	switch {
	case s.Retried > 0:
		return fmt.Sprintf(", unless the %d earlier attempts of retried requests, which the log does not show, were failures on it", s.EarlierAttempts)
	case !s.AttemptsKnown && s.RetriesExhausted > 0:
		return fmt.Sprintf(", unless retried attempts the log does not show (%d lines say URX) were failures on it", s.RetriesExhausted)
	}
	return ""
}

func (m *matcher) threshold(t engine.EjectionType) uint32 {
	switch t {
	case engine.Consecutive5xx:
		return m.cfg.Consecutive5xx
	case engine.ConsecutiveGatewayFailure:
		return m.cfg.ConsecutiveGatewayFailure
	}
	return m.cfg.ConsecutiveLocalOriginFailure
}

// streakAt is how many failures of the detector's kind the host had in a
// row in the log, answered at or before Envoy's event, since its last
// success or Envoy's last event for it (a detection, ejected or not,
// resets the counter, onConsecutiveErrorWorker; so does a return,
// unejectHost).
func (m *matcher) streakAt(e *EnvoyEvent) uint32 {
	t, _ := engine.ParseEjectionType(e.Detector)
	since := int64(math.MinInt64)
	if x := m.lastEnvoyBefore(e, func(x *eventlog.Event) bool { return x.Action == eventlog.Uneject || x.Detector == e.Detector }); x != nil {
		since = m.at(x.Time)
	}
	return m.streaks.at(e.Host, t, since, e.AtMs)
}

func isConsecutive(t engine.EjectionType) bool {
	return t == engine.Consecutive5xx || t == engine.ConsecutiveGatewayFailure || t == engine.ConsecutiveLocalOriginFailure
}

func fieldOf(detector string) string {
	if t, ok := engine.ParseEjectionType(detector); ok && isConsecutive(t) {
		return t.String()
	}
	return ""
}

func failureWord(t engine.EjectionType) string {
	switch t {
	case engine.ConsecutiveGatewayFailure:
		return "gateway errors (502–504)"
	case engine.ConsecutiveLocalOriginFailure:
		return "local-origin failures"
	}
	return "5xx responses"
}

func verb(kind string) string {
	return map[string]string{"eject": "ejected", "detect": "detected (not enforced)", "degrade": "degraded", "uneject": "returned", "undegrade": "undegraded"}[kind]
}

func drawNote(p uint32, field string) string {
	if p == 0 || p >= 100 {
		return fmt.Sprintf(", which draws nothing: Envoy ran with another %s (a runtime override, outlier_detection.%s)", field, field)
	}
	return ": the enforcing draws fell differently"
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func pct(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// findings are what several consecutive disagreements share: Envoy
// acting at a count other than this config's.
func (m *matcher) findings() []Finding {
	out := []Finding{}
	for _, t := range []engine.EjectionType{engine.Consecutive5xx, engine.ConsecutiveGatewayFailure, engine.ConsecutiveLocalOriginFailure} {
		counts := map[uint32][]int{}
		for _, p := range m.pairs {
			if p.Envoy == nil || p.Envoy.Action != eventlog.Eject || p.Envoy.Detector != t.String() || (p.Match != Disagree && p.Match != OnlyEnvoy) {
				continue
			}
			// Every one counts, those after no failure in the log too:
			// a finding needs them all at one count.
			n := m.streakAt(p.Envoy)
			counts[n] = append(counts[n], p.Envoy.Line)
		}
		if len(counts) != 1 || len(counts[0]) > 0 {
			continue
		}
		for n, lines := range counts {
			if n == m.threshold(t) {
				continue
			}
			out = append(out, Finding{Field: t.String(), Text: fmt.Sprintf(
				"Envoy acted on %s after %d %s in a row (event-log %s), where this config's %s is %d: Envoy ran with %s = %d, from a runtime override (outlier_detection.%s) or another config. Replay with %s: %d to compare the rest.",
				t, n, failureWord(t), linesList(lines), t, m.threshold(t), t, n, t, t, n)})
		}
	}
	return out
}

func linesList(lines []int) string {
	parts := make([]string, 0, min(len(lines), 6))
	for i, l := range lines {
		if i == 6 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprint(l))
	}
	word := "lines "
	if len(lines) == 1 {
		word = "line "
	}
	return word + strings.Join(parts, ", ")
}

// streaks are each host's results in answer order, as the consecutive
// counters see them.
type streaks map[string][]result

type result struct {
	atMs              int64
	fail5xx, failGW   bool // adds to consecutive_5xx / consecutive_gateway_failure
	resetGW           bool // a 5xx that is not a gateway error resets the gateway count
	failLocal, okLoc  bool // local-origin failure / success (split mode)
	reported, success bool
}

// newStreaks classifies each entry as put does: in non-split mode a
// connect failure counts as a 503 and a timeout as a 504
// (putResultNoLocalExternalSplit); split, both are local-origin failures
// and the external counters see only responses.
func newStreaks(entries []Entry, split bool) streaks {
	s := streaks{}
	start := time.Time{}
	for _, e := range entries {
		if start.IsZero() || e.Start.Before(start) {
			start = e.Start
		}
	}
	start = start.Truncate(time.Second)
	sorted := slices.Clone(entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Answer.Before(sorted[j].Answer) })
	for _, e := range sorted {
		rep, connected := Classify(e)
		r := result{atMs: e.Answer.Sub(start).Milliseconds(), reported: rep != ReportNothing}
		code := e.Code
		switch rep {
		case ReportNothing:
			continue
		case ReportConnectFailed, ReportTimeout:
			if split {
				r.failLocal = true
				code = 0
			} else if rep == ReportTimeout {
				code = 504
			} else {
				code = 503
			}
		default:
			r.okLoc = split && connected
		}
		switch {
		case code >= 502 && code <= 504:
			r.fail5xx, r.failGW = true, true
		case code >= 500 && code < 600:
			r.fail5xx, r.resetGW = true, true
		case code != 0:
			r.success = true
		}
		s[e.Host] = append(s[e.Host], r)
	}
	return s
}

// at counts the host's failures of t in a row answered in (since, ms].
func (s streaks) at(host string, t engine.EjectionType, since, ms int64) uint32 {
	rs := s[host]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].atMs > ms })
	var n uint32
	for i--; i >= 0 && rs[i].atMs > since; i-- {
		r := rs[i]
		switch t {
		case engine.Consecutive5xx:
			if !r.fail5xx {
				if r.success {
					return n
				}
				continue
			}
		case engine.ConsecutiveGatewayFailure:
			if !r.failGW {
				if r.success || r.resetGW {
					return n
				}
				continue
			}
		default:
			if !r.failLocal {
				if r.okLoc {
					return n
				}
				continue
			}
		}
		n++
	}
	return n
}

// WriteCompareText writes the comparison for a reader: what was read of
// the event log (and what was set aside, by line), the timer's phase,
// every match with its reasons, the findings.
func WriteCompareText(out io.Writer, c *Comparison, events *eventlog.Log, cfg engine.Config) error {
	var b strings.Builder
	w := &b
	s := c.Summary
	fmt.Fprintf(w, "Envoy's event log: %d events of cluster %q (%d lines)\n", len(events.Events), events.Cluster, events.Lines)
	if k := events.Counts; k.BadLines+k.UnknownActions+k.UnknownFields+k.OtherCluster > 0 {
		fmt.Fprintf(w, "warning: %d lines set aside (bad %d, unknown action or type %d, other cluster %d), %d read without fields the proto lacks:\n",
			k.Skipped(), k.BadLines, k.UnknownActions, k.OtherCluster, k.UnknownFields)
		for _, p := range events.Problems {
			fmt.Fprintf(w, "  line %d: %s\n", p.Line, p.Reason)
		}
		if n := k.BadLines + k.UnknownActions + k.UnknownFields + k.OtherCluster; n > len(events.Problems) {
			fmt.Fprintf(w, "  … and %d more\n", n-len(events.Problems))
		}
	}
	if c.TickEvents > 0 {
		fmt.Fprintf(w, "Envoy's interval timer fires %s s past the log's first second, every %s s (from %d of its events); the lab ticks there too.\n",
			explain.Seconds(c.TickPhaseMs), explain.Seconds(cfg.IntervalMs), c.TickEvents)
	}
	fmt.Fprintf(w, "\nmatched (Envoy %d events, the lab %d): agree %d, disagree %d, only Envoy %d, only the lab %d\n",
		s.EnvoyEvents, s.LabEvents, s.Agree, s.Disagree, s.OnlyEnvoy, s.OnlyLab)
	for _, p := range c.Events {
		envoy, lab := "-", "-"
		at := c.Result.Start
		if e := p.Envoy; e != nil {
			envoy = fmt.Sprintf("%s (line %d)", strings.TrimSpace(e.Kind+" "+e.Detector), e.Line)
			at = e.Time
		}
		if l := p.Lab; l != nil {
			lab = strings.TrimSpace(l.Kind + " " + l.Detector)
			if p.Envoy == nil {
				at = l.Time
			}
		}
		if p.DeltaMs != nil && *p.DeltaMs != 0 {
			lab += fmt.Sprintf(" (%+.3f s)", float64(*p.DeltaMs)/1000)
		}
		fmt.Fprintf(w, "  %s  %-10s %-20s envoy: %-44s lab: %s\n", clock(at), p.Match, p.Host, envoy, lab)
		for _, why := range p.Why {
			fmt.Fprintf(w, "      %s\n", why)
		}
	}
	if len(c.Findings) > 0 {
		w.WriteString("\nfindings:\n")
		for _, f := range c.Findings {
			fmt.Fprintf(w, "  - %s\n", f.Text)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
