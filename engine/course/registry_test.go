package course

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"outlierlab/engine"
	"outlierlab/engine/lint"
	"outlierlab/engine/scenario"
)

// kindExamples is one valid check of every kind, with every parameter the
// kind takes that it can take together. A kind without an example fails
// TestKindTable: adding a kind means adding its example here.
var kindExamples = map[string]string{
	KindEjected:      `{kind: ejected, host: h2, at: 30s}`,
	KindNotEjected:   `{kind: not_ejected, host: h2, from: 10s, to: 20s}`,
	KindEjectedHosts: `{kind: ejected_hosts, at: 30s, min: 1, max: 1}`,
	KindEvent:        `{kind: event, event: eject, host: h2, detector: success_rate, from: 20s, to: 30s, min: 1, max: 2}`,
	KindStat:         `{kind: stat, name: ejections_overflow, from: 10s, to: 30s, min: 1, max: 3}`,
	KindClients:      `{kind: clients, name: failure_pct, from: 20s, to: 40s, min: 3, max: 4}`,
	KindSuccessRate:  `{kind: success_rate, name: threshold, from: 20s, to: 30s, min: 50, max: 51}`,
	KindHost:         `{kind: host, host: h2, name: success_rate, at: 20s, min: 59, max: 61}`,
	KindShare:        `{kind: share, host: h0, from: 0s, to: 20s, min: 33, max: 34}`,
	KindPanic:        `{kind: panic, from: 30s, to: 40s}`,
	KindNoPanic:      `{kind: no_panic, from: 0s, to: 30s}`,
	KindSetting:      `{kind: setting, name: max_ejection_percent, min: 34, max: 34}`,
}

// kindSignatures pins the table: each kind's parameters as doc.go lists
// them ([x]: optional), so a changed rule shows here and in the docs.
var kindSignatures = map[string]string{
	KindEjected:      "host, at",
	KindNotEjected:   "[host], at | from/to",
	KindEjectedHosts: "at, min/max",
	KindEvent:        "event, [host], [detector], at | from/to, [min/max]",
	KindStat:         "name, at | from/to, min/max",
	KindClients:      "name, [at | from/to], min/max",
	KindSuccessRate:  "[is], [name], at | from/to, [min/max]",
	KindHost:         "host, name, at, min/max",
	KindShare:        "host, [at | from/to], min/max",
	KindPanic:        "at | from/to",
	KindNoPanic:      "at | from/to",
	KindSetting:      "name, [is], [min/max]",
}

func signature(k *kind) string {
	var parts []string
	for _, p := range k.params {
		if p.required {
			parts = append(parts, p.name)
		} else {
			parts = append(parts, "["+p.name+"]")
		}
	}
	switch k.time {
	case timeAt:
		parts = append(parts, "at")
	case timeAtOrWindow:
		parts = append(parts, "at | from/to")
	case timeOptional:
		parts = append(parts, "[at | from/to]")
	}
	switch k.band {
	case bandRequired:
		parts = append(parts, "min/max")
	case bandOptional:
		parts = append(parts, "[min/max]")
	}
	return strings.Join(parts, ", ")
}

func TestKindSignatures(t *testing.T) {
	for _, k := range kinds {
		if got := signature(&k); got != kindSignatures[k.name] {
			t.Errorf("%s takes %q, want %q", k.name, got, kindSignatures[k.name])
		}
	}
	if len(kindSignatures) != len(kinds) {
		t.Errorf("%d signatures for %d kinds", len(kindSignatures), len(kinds))
	}
}

// Every kind checks its parameters with an error that names the check,
// the kind and the parameter: a required one left out, a value not among
// its choices, a parameter it does not take, its times and its band. And
// every example passes on the hand-made run, so each kind's eval is wired.
func TestKindTable(t *testing.T) {
	run := handResult()
	for _, k := range kinds {
		src, ok := kindExamples[k.name]
		if !ok {
			t.Errorf("kind %s has no example in kindExamples", k.name)
			continue
		}
		base := mustCheck(t, src)
		if r := Evaluate(base, run, WholeRun); !r.Pass {
			t.Errorf("%s: %s", src, r.Detail)
		}
		prefix := "check (" + k.name + "): "
		bad := func(what string, mutate func(c *Check), want string) {
			t.Helper()
			c := base
			mutate(&c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, %s: got %v, want %q…%q", src, what, err, prefix, want)
			}
		}
		for _, p := range k.params {
			if p.required {
				bad("without "+p.name, func(c *Check) { setField(c, p.name, "") }, "needs "+p.name)
			}
			if p.choices != nil {
				bad(p.name+" bogus", func(c *Check) { setField(c, p.name, "bogus") }, p.name+` "bogus" is not one of `)
			}
		}
		takes := k.takes()
		for _, f := range checkFields {
			// A window on a kind that reads one tick is refused by the
			// time rule (below), with a better message.
			if k.time == timeAt && (f.name == "from" || f.name == "to") {
				continue
			}
			if !slices.Contains(takes, f.name) {
				bad("with "+f.name, func(c *Check) { setAny(c, f.name) }, "does not take "+f.name)
			}
		}
		switch k.time {
		case timeAt:
			bad("a window", func(c *Check) { c.From, c.To = 10000, 20000 }, "use at or from/to, not both")
			bad("no at", func(c *Check) { c.At = 0 }, "needs at")
			bad("a window, no at", func(c *Check) { c.At, c.From, c.To = 0, 10000, 20000 }, "takes at, not from/to")
		case timeAtOrWindow:
			bad("no time", func(c *Check) { c.At, c.From, c.To = 0, 0, 0 }, "needs at or from/to")
		}
		if k.time == timeAtOrWindow || k.time == timeOptional {
			bad("to before from", func(c *Check) { c.At, c.From, c.To = 0, 30000, 20000 }, "to 20 s is before from 30 s")
			bad("at and a window", func(c *Check) { c.At, c.From, c.To = 10000, 0, 20000 }, "use at or from/to, not both")
		}
		if k.band != bandNone {
			two, one := 2.0, 1.0
			bad("max below min", func(c *Check) { c.Min, c.Max = &two, &one }, "max 1 is below min 2")
		}
		if k.band == bandRequired {
			bad("no band", func(c *Check) { c.Min, c.Max = nil, nil }, "needs min or max")
		}
	}
	for name := range kindExamples {
		if _, ok := kindOf(name); !ok {
			t.Errorf("example for %s, which is not a kind", name)
		}
	}
	if strings.Join(Kinds, " ") != strings.Join(kindNames(), " ") || len(Kinds) != len(kinds) {
		t.Errorf("Kinds = %v", Kinds)
	}
}

// setField sets a string parameter by its lesson-file name.
func setField(c *Check, name, v string) {
	switch name {
	case "host":
		c.Host = v
	case "event":
		c.Event = v
	case "detector":
		c.Detector = v
	case "name":
		c.Name = v
	case "is":
		c.Is = v
	case "thin_margin":
		c.ThinMargin = v
	default:
		panic("setField " + name)
	}
}

// setAny gives any parameter a value.
func setAny(c *Check, name string) {
	one := 1.0
	switch name {
	case "at":
		c.At, c.From, c.To = 10000, 0, 0
	case "from":
		c.At, c.From = 0, 10000
	case "to":
		c.At, c.To = 0, End
	case "min":
		c.Min = &one
	case "max":
		c.Max = &one
	default:
		setField(c, name, "h1")
	}
}

// metricCases are the known values of every metric on handResult (with
// the additions of knownRun): the placeholder that reads it, its text,
// and for a number the value a check compares.
var metricCases = []struct {
	subject subject
	name    string
	ph      string
	text    string
	value   float64
}{
	{subjectSettings, "hosts", "hosts", "3", 3},
	{subjectSettings, "interval", "interval", "10 s", 10},
	{subjectSettings, "k", "k", "1.9", 1.9},
	{subjectSettings, "cap_pct", "cap_pct", "34", 34},
	{subjectSettings, "cap_first", "cap_first", "33.3", 100.0 / 3},
	{subjectSettings, "cap_admits", "cap_admits", "1", 1},
	{subjectSettings, "sr_bound", "sr_bound", "4.61", 1 + 1.9*1.9},
	{subjectSettings, "sr_needed", "sr_needed:2", "10", 10},
	{subjectSettings, "setting", "setting:max_ejection_percent", "34", 0},
	{subjectPass, "mean", "mean@20s", "86.7", 86.7},
	{subjectPass, "threshold", "threshold@20s", "50.8", 50.8},
	{subjectPass, "stdev", "stdev@20s", "18.9", 18.9},
	{subjectPass, "hosts_with_volume", "hosts_with_volume@10s", "2", 2},
	{subjectPass, "gate", "gate@10s", "skipped: 2 hosts with enough requests, 3 needed", 0},
	{subjectCluster, "tick", "tick@40s", "40 s", 0},
	{subjectCluster, "ejected", "ejected@40s", "h2", 0},
	{subjectCluster, "ejected_count", "ejected_count@40s", "1", 1},
	{subjectCluster, "cap_next", "cap_next@40s", "66.7", 200.0 / 3},
	{subjectCluster, "panic", "panic@40s", "yes", 0},
	{subjectCluster, "healthy", "healthy@40s", "2", 2},
	{subjectCluster, "healthy_pct", "healthy_pct@40s", "66.7", 200.0 / 3},
	{subjectCluster, "ejections_active_sum", "ejections_active_sum@40s", "1", 1},
	{subjectStat, "stat", "stat:ejections_overflow@30s", "2", 2},
	{subjectHost, "success_rate", "success_rate:h2@20s", "60", 60},
	{subjectHost, "requests", "requests:h0@10s", "100", 100},
	{subjectHost, "failures", "failures:h2@20s", "40", 40},
	{subjectHost, "multiplier", "multiplier:h2@40s", "1", 1},
	{subjectHost, "num_ejections", "num_ejections:h2@40s", "1", 1},
	{subjectHost, "returns_in_s", "returns_in_s:h2@40s", "20 s", 20},
	{subjectHost, "consecutive_5xx", "consecutive_5xx:h0@20s", "2", 2},
	{subjectHost, "attempts", "attempts:h0@10s", "100", 100},
	{subjectHost, "local_success_rate", "local_success_rate:h2@20s", "40", 40},
	{subjectHost, "local_requests", "local_requests:h2@20s", "10", 10},
	{subjectHost, "ejected_by", "ejected_by:h2@40s", "1", 1},
	// The intervals to 30 and 40 s: 70 failures and 200 retries in 2000
	// requests.
	{subjectClients, "failure_pct", "failure_pct@20s-40s", "3.5", 3.5},
	{subjectClients, "retry_pct", "retry_pct@20s-40s", "10", 10},
	{subjectClients, "requests", "requests@20s-40s", "2000", 2000},
	{subjectClients, "failures", "failures@20s-40s", "70", 70},
	{subjectClients, "retries", "retries@20s-40s", "200", 200},
	{subjectClients, "retry_overflow", "retry_overflow@20s-40s", "4", 4},
	{subjectClients, "no_healthy", "no_healthy@20s-40s", "3", 3},
	{subjectClients, "p99_ms", "p99_ms@20s-40s", "40", 40},
	{subjectClients, "p50_ms", "p50_ms@20s-40s", "12", 12},
	{subjectShare, "share", "share:h0@10s", "33.3", 100.0 / 3},
	{subjectShare, "first_eject_at", "first_eject_at:h2@0s-end", "30 s", 0},
}

// knownRun is handResult with the figures it leaves at zero set.
func knownRun() *scenario.Result {
	res := handResult()
	f := res.Frames
	f[1].Hosts[2].LocalRequests, f[1].Hosts[2].LocalRate = 10, 40
	f[1].Hosts[0].Consecutive5xx = 2
	f[2].Clients.BudgetRefusals, f[2].Clients.NoHealthy = 4, 3
	f[3].Clients.LatencyP50Ms = 12
	return res
}

// Every metric reads its known value: as prose shows it (the placeholder)
// and as a check compares it, so the two read one table.
func TestMetricTable(t *testing.T) {
	res := knownRun()
	seen := map[string]bool{}
	for _, tc := range metricCases {
		m, ok := metricOf(tc.subject, tc.name)
		if !ok {
			t.Errorf("no metric %s", tc.name)
			continue
		}
		seen[fmt.Sprint(tc.subject, tc.name)] = true
		p, err := ParsePlaceholder(tc.ph)
		if err != nil {
			t.Errorf("{{%s}}: %v", tc.ph, err)
			continue
		}
		if got, err := p.Resolve(res, WholeRun); err != nil || got != tc.text {
			t.Errorf("{{%s}} = %q, %v; want %q", tc.ph, got, err, tc.text)
		}
		if c, ok := checkOf(m, tc.ph, tc.value); ok {
			if r := Evaluate(c, res, WholeRun); !r.Pass {
				t.Errorf("%s = %g: %s", tc.name, tc.value, r.Detail)
			}
			v := tc.value + 0.01
			c.Min, c.Max = &v, &v
			if r := Evaluate(c, res, WholeRun); r.Pass {
				t.Errorf("%s = %g + 0.01 passes: %s", tc.name, tc.value, r.Detail)
			}
		}
	}
	for _, m := range metrics {
		if !seen[fmt.Sprint(m.subject, m.name)] {
			t.Errorf("metric %s has no case in metricCases", m.name)
		}
	}
}

// checkOf is the check that bounds m at exactly v, where a kind reads m.
func checkOf(m *metric, ph string, v float64) (Check, bool) {
	p, _ := ParsePlaceholder(ph)
	c := Check{Name: m.name, Min: &v, Max: &v, At: p.At, From: p.From, To: p.To}
	switch m.subject {
	case subjectPass:
		c.Kind = KindSuccessRate
	case subjectHost:
		c.Kind, c.Host = KindHost, p.Arg
	case subjectClients:
		c.Kind = KindClients
	case subjectShare:
		c.Kind, c.Host, c.Name = KindShare, p.Arg, ""
	case subjectStat:
		c.Kind, c.Name = KindStat, p.Arg
	default:
		if m.name != "ejected_count" {
			return c, false
		}
		c.Kind, c.Name = KindEjectedHosts, ""
	}
	if m.word != nil {
		return c, false
	}
	return c, c.Validate() == nil
}

// The table's own rules: one entry per name and subject; a number or a
// word; a host argument exactly for the host subjects; a name two
// subjects share has one unit.
func TestMetricRules(t *testing.T) {
	units := map[string]string{}
	seen := map[string]bool{}
	for _, m := range metrics {
		key := fmt.Sprint(m.subject, m.name)
		if seen[key] {
			t.Errorf("%s is twice in its subject", m.name)
		}
		seen[key] = true
		if (m.num == nil) == (m.word == nil) {
			t.Errorf("%s: want exactly one of num and word", m.name)
		}
		if hostSubject := m.subject == subjectHost || m.subject == subjectShare; hostSubject != (m.arg == argHost) {
			t.Errorf("%s: a host argument for subject %d is %v", m.name, m.subject, m.arg == argHost)
		}
		if u, ok := units[m.name]; ok && u != m.unit {
			t.Errorf("%s is in %q and in %q", m.name, u, m.unit)
		}
		units[m.name] = m.unit
	}
}

// The cap numbers are the detector's: cap_admits is lint.MaxAdmitted
// (engine.CapAdmits one ejection at a time), and sr_needed is the fewest
// hosts for which lint.MaxSuccessRateOutliers admits that many outliers.
func TestCapAndSuccessRateArithmetic(t *testing.T) {
	res := handResult()
	for _, tc := range []struct {
		hosts, max int
		always     bool
	}{{3, 34, false}, {6, 10, false}, {6, 10, true}, {10, 50, false}, {1, 100, false}, {0, 10, true}} {
		res.Scenario.Cluster.Hosts = tc.hosts
		res.Config.MaxEjectionPercent, res.Config.AlwaysEjectOneHost = uint32(tc.max), tc.always
		p, _ := ParsePlaceholder("cap_admits")
		got, _ := p.Resolve(res, WholeRun)
		if want := fmt.Sprint(lint.MaxAdmitted(res.Config, tc.hosts)); got != want {
			t.Errorf("%+v: cap_admits %s, lint says %s", tc, got, want)
		}
		first := engine.CapAdmits(0, tc.hosts, uint32(tc.max), tc.always).Percent
		p, _ = ParsePlaceholder("cap_first")
		if got, _ := p.Resolve(res, WholeRun); got != fmtDec(first, 1) {
			t.Errorf("%+v: cap_first %s, CapAdmits says %g", tc, got, first)
		}
	}
	for _, factor := range []uint32{1000, 1900, 2000, 2500} {
		cfg := engine.DefaultConfig()
		cfg.SuccessRateStdevFactor = factor
		for bad := 1; bad <= 5; bad++ {
			n := srNeeded(cfg, bad)
			if lint.MaxSuccessRateOutliers(cfg, n) < bad || lint.MaxSuccessRateOutliers(cfg, n-1) >= bad {
				t.Errorf("factor %d: sr_needed:%d = %d, but lint admits %d outliers at %d and %d at %d", factor, bad, n,
					lint.MaxSuccessRateOutliers(cfg, n), n, lint.MaxSuccessRateOutliers(cfg, n-1), n-1)
			}
		}
	}
}
