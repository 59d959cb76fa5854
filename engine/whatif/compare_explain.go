package whatif

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
)

// Why a match is what it is: the reasons written for each pair (a
// detector's count, rate or threshold at that moment, the lab's own
// state near it), and the findings several disagreements share.

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
