package web

import (
	"fmt"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/view"
)

// The decision log says, for every interval, what the detector decided and
// why, with the numbers it compared and the setting that decided: the one
// thing no chart can say. Sentences are built from the engine's events and
// rate passes, never from text the engine wrote, so the wording lives here.

// sentence collects the spans of one log entry.
type sentence struct{ parts []view.Span }

func (s *sentence) text(format string, args ...any) *sentence {
	s.parts = append(s.parts, view.Span{Text: fmt.Sprintf(format, args...)})
	return s
}

// field names an Envoy setting; the page renders it as code.
func (s *sentence) field(name string) *sentence {
	s.parts = append(s.parts, view.Span{Text: name, Field: true})
	return s
}

func entry(atMs int64, tone, badge string, s *sentence) view.LogEntry {
	return view.LogEntry{Time: fmtMs(atMs), Tone: tone, Badge: badge, Parts: s.parts}
}

// decisionsOf is every decision of one interval, oldest first: the events
// in the order the detector made them, then what the tick's rate passes
// decided without an event (skipped for volume, ran and found nobody).
func decisionsOf(f *scenario.Frame, cfg engine.Config) []view.LogEntry {
	var out []view.LogEntry
	for _, g := range groupRepeats(f.Events) {
		e := eventEntry(g.first, f, cfg)
		if g.count > 1 {
			e.Parts = append(e.Parts, view.Span{Text: fmt.Sprintf(" The same, %d times in all, until %s.", g.count, fmtMs(g.lastMs))})
		}
		out = append(out, e)
	}
	out = append(out, passEntries(f, &f.External, cfg)...)
	if cfg.SplitExternalLocalOriginErrors {
		out = append(out, passEntries(f, &f.Local, cfg)...)
	}
	return out
}

// repeat is one event and how many identical ones followed it.
type repeat struct {
	first  *engine.Event
	count  int
	lastMs int64
}

// groupRepeats folds the decisions that repeat within an interval into one
// entry: a host failing hard trips consecutive_5xx every five requests, and
// with the cap full each trip is the same refusal, thousands of times. Two
// events are the same when they differ only in time: same host, detector,
// outcome and cap arithmetic.
func groupRepeats(events []engine.Event) []repeat {
	type key struct {
		host      string
		kind      engine.EventKind
		det       engine.EjectionType
		active    uint64
		hosts     int
		enforcing uint32
	}
	var out []repeat
	at := map[key]int{}
	for i := range events {
		e := &events[i]
		repeatable := (e.Kind == engine.EventOverflow || e.Kind == engine.EventDetect) &&
			(e.Detector == engine.Consecutive5xx || e.Detector == engine.ConsecutiveGatewayFailure || e.Detector == engine.ConsecutiveLocalOriginFailure)
		if !repeatable {
			out = append(out, repeat{first: e, count: 1, lastMs: e.AtMs})
			continue
		}
		k := key{e.Host, e.Kind, e.Detector, e.Cap.Active, e.Cap.Hosts, e.Enforcing}
		if j, ok := at[k]; ok {
			out[j].count++
			out[j].lastMs = e.AtMs
			continue
		}
		at[k] = len(out)
		out = append(out, repeat{first: e, count: 1, lastMs: e.AtMs})
	}
	return out
}

// eventEntry is one engine.Event as a sentence.
func eventEntry(e *engine.Event, f *scenario.Frame, cfg engine.Config) view.LogEntry {
	s := &sentence{}
	switch e.Kind {
	case engine.EventUneject:
		s.text("%s returns to service after %s out: ", e.Host, fmtMs(e.EjectedMs))
		if e.Cause == engine.UnejectActiveHealthCheck {
			s.text("an active health check passed (").field("successful_active_health_check_uneject_host").text(").")
		} else {
			s.text("its ejection time had elapsed at this sweep.")
		}
		return entry(e.AtMs, "return", "RETURNS", s)
	case engine.EventDegrade:
		s.text("%s is marked degraded (", e.Host).field("detect_degraded_hosts").text(").")
		return entry(e.AtMs, "detect", "DEGRADED", s)
	case engine.EventUndegrade:
		s.text("%s is no longer degraded.", e.Host)
		return entry(e.AtMs, "return", "RETURNS", s)
	}

	detection(s, e, f, cfg)
	s.text(": detected; ")
	capArithmetic(s, e.Cap)
	switch e.Kind {
	case engine.EventOverflow:
		s.text(": refused (overflow).")
		return entry(e.AtMs, "overflow", "OVERFLOW", s)
	case engine.EventDetect:
		s.text(": admitted; ").field(e.Detector.EnforcingField()).text(" %d%%: ", e.Enforcing)
		if e.Enforcing == 0 {
			s.text("not enforced, so not ejected (detect only).")
		} else {
			s.text("the draw said no, so not ejected (detect only).")
		}
		return entry(e.AtMs, "detect", "DETECT ONLY", s)
	}
	s.text(": ejected for %s", fmtMs(e.DurationMs))
	ejectionTime(s, e, cfg)
	s.text(".")
	return entry(e.AtMs, "eject", "EJECTED", s)
}

// detection is the first half of a detection sentence: what crossed which
// line, with the numbers and the field that draws the line.
func detection(s *sentence, e *engine.Event, f *scenario.Frame, cfg engine.Config) {
	switch e.Detector {
	case engine.SuccessRate, engine.SuccessRateLocalOrigin:
		what, pass := "success rate", &f.External
		if e.Detector == engine.SuccessRateLocalOrigin {
			what, pass = "local-origin success rate", &f.Local
		}
		// As many digits as it takes to show the host below the line, and
		// as many for the mean and σ that draw it.
		rate, thr := scenario.Distinct(e.HostSuccessRate, e.Threshold)
		d := decimals(thr)
		s.text("%s %s %s%% is below the threshold %s%% (mean %s − %s × %s, ",
			e.Host, what, rate, thr,
			strconv.FormatFloat(e.Mean, 'f', d, 64), strconv.FormatFloat(cfg.StdevFactor(), 'f', -1, 64), sigma(pass.StdDev, d))
		s.field("success_rate_stdev_factor").text(")")
	case engine.FailurePercentage, engine.FailurePercentageLocalOrigin:
		what := "failure percentage"
		if e.Detector == engine.FailurePercentageLocalOrigin {
			what = "local-origin failure percentage"
		}
		// "At or above" holds for equal numbers: one decimal never
		// contradicts it (a rate that rounds up to the threshold is in it).
		s.text("%s %s %s%% is at or above %d%% (", e.Host, what, pct1(100-e.HostSuccessRate), cfg.FailurePercentageThreshold)
		s.field("failure_percentage_threshold").text(")")
	case engine.Consecutive5xx:
		s.text("%s returned %d errors in a row (", e.Host, cfg.Consecutive5xx).field("consecutive_5xx").text(")")
	case engine.ConsecutiveGatewayFailure:
		s.text("%s returned %d gateway failures (502/503/504) in a row (", e.Host, cfg.ConsecutiveGatewayFailure).field("consecutive_gateway_failure").text(")")
	case engine.ConsecutiveLocalOriginFailure:
		s.text("%s had %d local-origin failures in a row (", e.Host, cfg.ConsecutiveLocalOriginFailure).field("consecutive_local_origin_failure").text(")")
	default:
		s.text("%s: %s", e.Host, e.Detector)
	}
}

// capArithmetic writes max_ejection_percent's check the way Envoy makes it:
// the share of hosts ejected if this one were, against the cap.
func capArithmetic(s *sentence, c engine.CapCheck) {
	op := "≤"
	if c.Percent > float64(c.MaxPercent) {
		op = ">"
	}
	// A share just over the cap (10.005% of 2000 hosts) keeps the digits
	// that show it over.
	share, _ := scenario.Distinct(c.Percent, float64(c.MaxPercent))
	if c.Percent == float64(c.MaxPercent) {
		share = pct1(c.Percent)
	}
	s.text("cap (%d+1)/%d = %s%% %s %d%% (", c.Active, c.Hosts, share, op, c.MaxPercent)
	s.field("max_ejection_percent").text(")")
	if c.ByAlwaysEjectOne {
		s.text(", but no host is ejected yet (").field("always_eject_one_host").text(")")
	}
}

// ejectionTime explains an ejection's length: base × the host's backoff,
// capped by max_ejection_time, plus jitter.
func ejectionTime(s *sentence, e *engine.Event, cfg engine.Config) {
	raw := cfg.BaseEjectionTimeMs * int64(e.Backoff)
	s.text(" (")
	if raw > cfg.MaxEjectionTimeMs {
		s.field("max_ejection_time").text(" %s; ", fmtMs(cfg.MaxEjectionTimeMs))
		s.field("base_ejection_time").text(" %s × %d = %s", fmtMs(cfg.BaseEjectionTimeMs), e.Backoff, fmtMs(raw))
	} else {
		s.field("base_ejection_time").text(" %s × %d", fmtMs(cfg.BaseEjectionTimeMs), e.Backoff)
	}
	if e.JitterMs > 0 {
		s.text(" + %s jitter", fmtMs(e.JitterMs))
	}
	s.text(")")
}

// passEntries are the sentences for a rate pass that decided without an
// event: skipped (too few hosts, too little volume) or ran and found no
// outlier. Passes that found outliers are told by their events.
func passEntries(f *scenario.Frame, p *engine.RatePass, cfg engine.Config) []view.LogEntry {
	var out []view.LogEntry
	what := "success rate"
	if p.Origin == engine.Local {
		what = "local-origin success rate"
	}
	switch p.SRGate {
	case engine.GateTooFewHosts:
		s := (&sentence{}).text("%s skipped: the cluster has %d hosts, fewer than ", what, p.Hosts).
			field("success_rate_minimum_hosts").text(" %d.", p.SRMinimumHosts)
		out = append(out, entry(f.TMs, "skip", "SKIPPED", s))
	case engine.GateTooFewHostsWithVolume:
		s := (&sentence{}).text("%s skipped: %d %s ≥ %d requests (", what, p.SRHostsVolume, plural(p.SRHostsVolume, "host has", "hosts have"), p.SRRequestVolume).
			field("success_rate_request_volume").text("), %d needed (", p.SRMinimumHosts).
			field("success_rate_minimum_hosts").text(").")
		out = append(out, entry(f.TMs, "skip", "SKIPPED", s))
	case engine.GateRan:
		if p.SROutliers == 0 {
			s := (&sentence{}).text("%s: no host of %d below %s%% (mean %s − %s × %s).",
				what, p.SRHostsVolume, pct1(p.Threshold), pct1(p.Mean), strconv.FormatFloat(cfg.StdevFactor(), 'f', -1, 64), sigma(p.StdDev, 1))
			out = append(out, entry(f.TMs, "info", "NO OUTLIER", s))
		}
	}
	if p.Origin == engine.External && p.SRGate != engine.GateTooFewHosts {
		out = append(out, lowVolumeEntries(f, p)...)
	}
	// Failure percentage only matters to a reader when it can eject.
	enforcing := cfg.EnforcingFailurePercentage
	if p.Origin == engine.Local {
		enforcing = cfg.EnforcingFailurePercentageLocalOrigin
	}
	if enforcing > 0 && p.FPGate == engine.GateTooFewHostsWithVolume {
		s := (&sentence{}).text("failure percentage skipped: %d %s ≥ %d requests (", p.FPHostsVolume, plural(p.FPHostsVolume, "host has", "hosts have"), p.FPRequestVolume).
			field("failure_percentage_request_volume").text("), %d needed (", p.FPMinimumHosts).
			field("failure_percentage_minimum_hosts").text(").")
		out = append(out, entry(f.TMs, "skip", "SKIPPED", s))
	}
	return out
}

// lowVolumeEntries name the hosts left out of success rate because they
// served some requests, but fewer than the volume asks for.
func lowVolumeEntries(f *scenario.Frame, p *engine.RatePass) []view.LogEntry {
	var out []view.LogEntry
	for _, h := range f.Hosts {
		if h.Ejected || h.Requests == 0 || h.Requests >= uint64(p.SRRequestVolume) {
			continue
		}
		s := (&sentence{}).text("%s not counted by success rate: %d requests < ", h.Name, h.Requests).
			field("success_rate_request_volume").text(" %d.", p.SRRequestVolume)
		out = append(out, entry(f.TMs, "skip", "NOT COUNTED", s))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// decimals is how many digits a formatted number has after its point.
func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// sigma writes a standard deviation with d decimals, or more (up to four)
// until it shows two significant digits: a σ of 0.037 points is what puts
// the threshold a few hundredths under the mean, and "0.0" would hide it.
func sigma(sd float64, d int) string {
	for ; ; d++ {
		s := strconv.FormatFloat(sd, 'f', d, 64)
		if d >= 4 || sd == 0 || sd >= 1 || len(strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0")) >= 2 {
			return s
		}
	}
}

// pct1 writes a percentage (or any rate) with one decimal.
func pct1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// fmtMs writes milliseconds as seconds: "40 s", "20.1 s", "0.25 s",
// rounded the way scenario.Seconds rounds (the text output's times read
// the same).
func fmtMs(ms int64) string { return scenario.Seconds(ms) + " s" }
