package course

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/lint"
	"outlierlab/engine/scenario"
)

// A metric is one quantity read from a run, with one name and one unit:
// checks bound it ({kind: clients, name: failure_pct, max: 1}) and
// placeholders print it ({{failure_pct@30s-end}}), from this one table.
//
// Its subject says what it describes, and so when it is read and what
// argument it takes: the run's settings (no time), the success-rate pass
// or the cluster at a tick, a stat at a tick, one host's frame at a tick,
// the clients over the intervals of a window, or one host over a window.
type metric struct {
	name    string
	subject subject
	// arg is what follows the name in a placeholder ({{success_rate:h5}}):
	// a host, a stat, a setting or a number.
	arg argKind
	// unit is "%", "ms", "s" or "" (a count or a plain number).
	unit string
	// places is how many decimals prose shows (trailing zeros dropped);
	// seconds are written in full with their unit, as the time axis does.
	places int
	// ran: read only when the success-rate pass ran (its mean, threshold
	// and stdev are -1 otherwise).
	ran bool
	// absent, if set, is what a negative value means (a host that served
	// no requests has success rate -1): prose shows a dash, while a check
	// compares the number, so max: 0 holds for a host that served nothing.
	absent string
	// num reads a number; word reads a metric that is not one (the gate,
	// the ejected hosts, a setting's value).
	num  func(r *reading) (float64, error)
	word func(r *reading) (string, error)
}

type subject uint8

const (
	subjectSettings subject = iota // the run's settings
	subjectPass                    // the external-origin success-rate pass at a tick
	subjectCluster                 // the cluster after a tick
	subjectStat                    // a cumulative stat at a tick
	subjectHost                    // one host's frame at a tick
	subjectClients                 // downstream clients over a window's intervals
	subjectShare                   // one host over a window's intervals
)

type whenKind uint8

const (
	whenNone   whenKind = iota // a property of the settings
	whenTick                   // a tick's state
	whenWindow                 // a sum over intervals
)

func (s subject) when() whenKind {
	switch s {
	case subjectSettings:
		return whenNone
	case subjectClients, subjectShare:
		return whenWindow
	}
	return whenTick
}

type argKind uint8

const (
	argNone argKind = iota
	argHost
	argStat
	argSetting
	argNumber
)

// reading is what a metric is read from: the run (its settings), the
// frame at a tick and one host's part of it, or a window's frames; arg
// is the placeholder's argument.
type reading struct {
	run    *scenario.Result
	frame  *scenario.Frame
	host   *scenario.HostFrame
	frames []scenario.Frame
	arg    string
}

func (r *reading) settings() (engine.Config, int) {
	return r.run.Config, r.run.Scenario.Cluster.Hosts
}

func (r *reading) clients() scenario.ClientTotals { return scenario.Totals(r.frames) }

// count and number adapt a plain reader.
func count[T ~int | ~uint32 | ~uint64](f func(r *reading) T) func(r *reading) (float64, error) {
	return func(r *reading) (float64, error) { return float64(f(r)), nil }
}

func number(f func(r *reading) float64) func(r *reading) (float64, error) {
	return func(r *reading) (float64, error) { return f(r), nil }
}

// metrics is the table. Within a subject names are unique; a name used by
// two subjects ("requests": a host's, the clients') is the same quantity
// with the same unit, counted at another place (TestMetricTable).
var metrics = []metric{
	// The settings.
	{name: "hosts", num: count(func(r *reading) int { _, n := r.settings(); return n })},
	{name: "interval", unit: "s", num: number(func(r *reading) float64 { return float64(r.run.Config.IntervalMs) / 1000 })},
	{name: "k", places: 3, num: number(func(r *reading) float64 { return r.run.Config.StdevFactor() })},
	{name: "cap_pct", unit: "%", num: count(func(r *reading) uint32 { return r.run.Config.MaxEjectionPercent })},
	// The cap's arithmetic is the detector's own (engine.CapAdmits, through
	// lint for the count): the share the first ejection would make, how
	// many the cap admits at once.
	{name: "cap_first", unit: "%", places: 1, num: number(func(r *reading) float64 {
		cfg, n := r.settings()
		return engine.CapAdmits(0, n, cfg.MaxEjectionPercent, cfg.AlwaysEjectOneHost).Percent
	})},
	{name: "cap_admits", num: count(func(r *reading) int { cfg, n := r.settings(); return lint.MaxAdmitted(cfg, n) })},
	{name: "sr_bound", places: 2, num: number(func(r *reading) float64 { k := r.run.Config.StdevFactor(); return 1 + k*k })},
	{name: "sr_needed", arg: argNumber, num: count(func(r *reading) int { bad, _ := strconv.Atoi(r.arg); return srNeeded(r.run.Config, bad) })},
	{name: "setting", arg: argSetting, word: func(r *reading) (string, error) { return settingValue(r.run, r.arg) }},

	// The success-rate pass at a tick (the names a success_rate check bounds).
	{name: "mean", subject: subjectPass, unit: "%", places: 1, ran: true, num: number(func(r *reading) float64 { return r.frame.SuccessRate.Mean })},
	{name: "threshold", subject: subjectPass, unit: "%", places: 1, ran: true, num: number(func(r *reading) float64 { return r.frame.SuccessRate.Threshold })},
	{name: "stdev", subject: subjectPass, unit: "%", places: 2, ran: true, num: number(func(r *reading) float64 { return r.frame.SuccessRate.StdDev })},
	{name: "hosts_with_volume", subject: subjectPass, num: count(func(r *reading) int { return r.frame.SuccessRate.HostsWithVolume })},
	{name: "gate", subject: subjectPass, word: func(r *reading) (string, error) {
		sr := r.frame.SuccessRate
		if sr.Gate == "ran" {
			return "ran", nil
		}
		return fmt.Sprintf("skipped: %d hosts with enough requests, %d needed", sr.HostsWithVolume, sr.MinimumHosts), nil
	}},

	// The cluster after a tick.
	// The tick's own time, "40 s": a moment the prose names ("at 40 s"),
	// written so that it must be a tick of the run (a plan's notes write
	// no number as plain text, engine/plan).
	{name: "tick", subject: subjectCluster, word: func(r *reading) (string, error) { return fmtSeconds(r.frame.TMs), nil }},
	{name: "ejected", subject: subjectCluster, word: func(r *reading) (string, error) {
		if names := ejectedNames(r.frame); len(names) > 0 {
			return strings.Join(names, ", "), nil
		}
		return "none", nil
	}},
	{name: "ejected_count", subject: subjectCluster, num: count(func(r *reading) int { return len(ejectedNames(r.frame)) })},
	{name: "cap_next", subject: subjectCluster, unit: "%", places: 1, num: number(func(r *reading) float64 {
		cfg, n := r.settings()
		return engine.CapAdmits(r.frame.Stats[engine.StatEjectionsActive], n, cfg.MaxEjectionPercent, cfg.AlwaysEjectOneHost).Percent
	})},
	{name: "panic", subject: subjectCluster, word: func(r *reading) (string, error) { return yesNo(r.frame.Panic), nil }},
	{name: "healthy", subject: subjectCluster, num: count(func(r *reading) int { return r.frame.Healthy })},
	{name: "healthy_pct", subject: subjectCluster, unit: "%", places: 1, num: func(r *reading) (float64, error) {
		if len(r.frame.Hosts) == 0 {
			return 0, errors.New("no hosts")
		}
		return 100 * float64(r.frame.Healthy) / float64(len(r.frame.Hosts)), nil
	}},
	// outlier_detection.ejections_active summed over a mesh's clients (a
	// dashboard's sum over pods: a host out for seven proxies counts
	// seven); one client's own gauge when there is one client.
	{name: "ejections_active_sum", subject: subjectCluster, num: count(func(r *reading) uint64 {
		if m := r.frame.Mesh; m != nil {
			return m.EjectionsActiveSum
		}
		return r.frame.Stats[engine.StatEjectionsActive]
	})},
	{name: "stat", subject: subjectStat, arg: argStat, num: count(func(r *reading) uint64 { v, _ := statValue(r.frame, r.arg); return v })},

	// One host's frame at a tick (the names a host check bounds).
	{name: "success_rate", subject: subjectHost, arg: argHost, unit: "%", places: 1, absent: "no requests", num: number(func(r *reading) float64 { return r.host.SuccessRate })},
	{name: "requests", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint64 { return r.host.Requests })},
	// The failures the detector counted from the host in the interval
	// (its external-origin bucket): a host ejected by consecutive_5xx
	// fails at least the threshold, more when a success lands mid-streak.
	{name: "failures", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint64 { return r.host.Requests - r.host.Successes })},
	{name: "multiplier", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint32 { return r.host.Multiplier })},
	{name: "num_ejections", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint32 { return r.host.NumEjections })},
	{name: "returns_in_s", subject: subjectHost, arg: argHost, unit: "s", num: number(func(r *reading) float64 { return float64(r.host.ReturnsInMs) / 1000 })},
	{name: "consecutive_5xx", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint32 { return r.host.Consecutive5xx })},
	{name: "attempts", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint64 { return r.host.Attempts })},
	{name: "local_success_rate", subject: subjectHost, arg: argHost, unit: "%", places: 1, absent: "no local-origin requests", num: number(func(r *reading) float64 {
		if r.host.LocalRequests == 0 {
			return -1
		}
		return r.host.LocalRate
	})},
	{name: "local_requests", subject: subjectHost, arg: argHost, num: count(func(r *reading) uint64 { return r.host.LocalRequests })},
	// How many of a mesh's clients have the host ejected after the tick
	// (with one client: 1 or 0).
	{name: "ejected_by", subject: subjectHost, arg: argHost, num: count(func(r *reading) int {
		if m := r.frame.Mesh; m != nil {
			return m.EjectedBy[slices.IndexFunc(r.frame.Hosts, func(h scenario.HostFrame) bool { return h.Name == r.host.Name })]
		}
		if r.host.Ejected {
			return 1
		}
		return 0
	})},

	// The clients over a window's intervals (the names a clients check
	// bounds): shares of their requests, sums, and the worst interval's
	// latency.
	{name: "failure_pct", subject: subjectClients, unit: "%", places: 2, num: number(func(r *reading) float64 { return r.clients().FailurePct() })},
	{name: "retry_pct", subject: subjectClients, unit: "%", places: 1, num: number(func(r *reading) float64 { return r.clients().RetryPct() })},
	{name: "requests", subject: subjectClients, num: count(func(r *reading) uint64 { return r.clients().Requests })},
	{name: "failures", subject: subjectClients, num: count(func(r *reading) uint64 { return r.clients().Failures })},
	{name: "retries", subject: subjectClients, num: count(func(r *reading) uint64 { return r.clients().RetriesSent })},
	{name: "retry_overflow", subject: subjectClients, num: count(func(r *reading) uint64 { return r.clients().BudgetRefusals })},
	{name: "no_healthy", subject: subjectClients, num: count(func(r *reading) uint64 { return r.clients().NoHealthy })},
	{name: "p99_ms", subject: subjectClients, unit: "ms", num: number(func(r *reading) float64 { return r.clients().LatencyP99Ms })},
	{name: "p50_ms", subject: subjectClients, unit: "ms", num: number(func(r *reading) float64 { return r.clients().LatencyP50Ms })},

	// One host over a window: its share of all attempts.
	{name: "share", subject: subjectShare, arg: argHost, unit: "%", places: 1, num: func(r *reading) (float64, error) {
		mine, all, found := scenario.HostAttempts(r.frames, r.arg)
		if !found {
			return 0, fmt.Errorf("no host %s", r.arg)
		}
		return pct(mine, all), nil
	}},
	// The time of the host's first ejection in the window, to a tenth of a
	// second as the decision log writes it, or "none": a run's own moment
	// for a claim only a window can bound (consecutive_5xx on random
	// failures fires at a time no two seeds share).
	{name: "first_eject_at", subject: subjectShare, arg: argHost, word: func(r *reading) (string, error) {
		if hostIn(&r.frames[0], r.arg) == nil {
			return "", fmt.Errorf("no host %s", r.arg)
		}
		for _, f := range r.frames {
			for _, e := range f.Events {
				if e.Host == r.arg && e.Kind == engine.EventEject {
					return fmtSeconds((e.AtMs + 50) / 100 * 100), nil
				}
			}
		}
		return "none", nil
	}},
}

// metricOf finds a subject's metric by name.
func metricOf(s subject, name string) (*metric, bool) {
	for i := range metrics {
		if metrics[i].subject == s && metrics[i].name == name {
			return &metrics[i], true
		}
	}
	return nil, false
}

// metricNames lists a subject's numeric metrics in table order: the names
// a check of that subject may bound.
func metricNames(s subject) func() []string {
	return func() []string {
		var out []string
		for _, m := range metrics {
			if m.subject == s && m.num != nil {
				out = append(out, m.name)
			}
		}
		return out
	}
}

// placeholderMetric finds the metric a placeholder names: by its name,
// and where a name has two subjects, the one that takes a host when the
// placeholder gives an argument.
func placeholderMetric(name, arg string) (*metric, bool) {
	var found *metric
	for i := range metrics {
		m := &metrics[i]
		if m.name != name {
			continue
		}
		if found == nil || (arg != "") == (m.arg != argNone) {
			found = m
		}
	}
	return found, found != nil
}

// PlaceholderNames lists the placeholder names, sorted.
func PlaceholderNames() []string {
	set := map[string]bool{}
	for _, m := range metrics {
		set[m.name] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// value reads the metric's number.
func (m *metric) value(r *reading) (float64, error) {
	if m.ran && r.frame.SuccessRate.Gate != "ran" {
		return 0, fmt.Errorf("success rate did not run (%s)", r.frame.SuccessRate.Gate)
	}
	return m.num(r)
}

// text is the metric as prose shows it.
func (m *metric) text(r *reading) (string, error) {
	if m.word != nil {
		return m.word(r)
	}
	v, err := m.value(r)
	switch {
	case err != nil:
		return "", err
	case m.absent != "" && v < 0:
		return "", errors.New(m.absent)
	case m.unit == "s":
		return strconv.FormatFloat(v, 'f', -1, 64) + " s", nil
	}
	return fmtDec(v, m.places), nil
}

// suffix is the unit as a check's detail writes it after a number.
func (m *metric) suffix() string {
	switch m.unit {
	case "", "%":
		return m.unit
	}
	return " " + m.unit
}

// clusterStats are the router/LB counters a stat check can read, by the
// name Envoy gives them under cluster.<name>.
var clusterStats = map[string]func(f *scenario.Frame) uint64{
	"lb_healthy_panic":                 func(f *scenario.Frame) uint64 { return f.Cluster.LbHealthyPanic },
	"upstream_cx_none_healthy":         func(f *scenario.Frame) uint64 { return f.Cluster.UpstreamCxNoneHealthy },
	"upstream_rq_total":                func(f *scenario.Frame) uint64 { return f.Cluster.UpstreamRq },
	"upstream_rq_retry":                func(f *scenario.Frame) uint64 { return f.Cluster.RetrySent },
	"upstream_rq_retry_overflow":       func(f *scenario.Frame) uint64 { return f.Cluster.RetryOverflow },
	"upstream_rq_retry_limit_exceeded": func(f *scenario.Frame) uint64 { return f.Cluster.RetryLimitExceeded },
	"upstream_rq_retry_success":        func(f *scenario.Frame) uint64 { return f.Cluster.RetrySuccess },
	"upstream_rq_per_try_timeout":      func(f *scenario.Frame) uint64 { return f.Cluster.PerTryTimeout },
	"upstream_rq_timeout":              func(f *scenario.Frame) uint64 { return f.Cluster.RouteTimeout },
}

// StatNames lists every name a stat check accepts.
func StatNames() []string {
	var out []string
	for s := engine.Stat(0); s < engine.NumStats; s++ {
		out = append(out, s.Name())
	}
	return append(out, slices.Sorted(maps.Keys(clusterStats))...)
}

// statValue reads a stat by name from a frame.
func statValue(f *scenario.Frame, name string) (uint64, bool) {
	if s, ok := engine.LookupStat(name); ok {
		return f.Stats[s], true
	}
	if g := clusterStats[name]; g != nil {
		return g(f), true
	}
	return 0, false
}

// ejectedNames are the hosts ejected after the frame's tick.
func ejectedNames(f *scenario.Frame) []string {
	var names []string
	for _, h := range f.Hosts {
		if h.Ejected {
			names = append(names, h.Name)
		}
	}
	return names
}

// srNeeded is the fewest valid hosts among which `bad` equally bad hosts
// can all be success-rate outliers: N > bad·(1 + k²) (envoy-semantics.md
// §14.3), the inverse of lint.MaxSuccessRateOutliers. With k = 1.9 that
// is 5 for one bad host, 10 for two.
func srNeeded(cfg engine.Config, bad int) int {
	k := cfg.StdevFactor()
	return int(math.Floor(float64(bad)*(1+k*k))) + 1
}
