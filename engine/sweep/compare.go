package sweep

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Diff is two runs of one preset and seed side by side, in numbers and in
// sentences ("B ejects h5 4 times, A never; clients: 5.00% → 0.74%
// failures").
type Diff struct {
	Preset    string      `json:"preset"`
	Seed      uint64      `json:"seed"`
	Changed   []Change    `json:"changed"`
	A         Metrics     `json:"a"`
	B         Metrics     `json:"b"`
	Hosts     []HostCount `json:"hosts"`
	Sentences []string    `json:"sentences"`
}

// Change is one setting whose value differs between A and B.
type Change struct {
	Name string `json:"name"`
	A    string `json:"a"`
	B    string `json:"b"`
}

// HostCount is how often each run ejected one host.
type HostCount struct {
	Host string `json:"host"`
	A    int    `json:"a"`
	B    int    `json:"b"`
}

// Compare diffs two runs (of the same preset and seed: what a and b were
// given differs only in settings).
func Compare(a, b scenario.Result) Diff {
	d := Diff{Preset: a.Scenario.Name, Seed: a.Seed, A: MetricsOf(a), B: MetricsOf(b)}
	va, vb := settings.Values(a.Scenario, a.Config), settings.Values(b.Scenario, b.Config)
	for _, name := range slices.Sorted(maps.Keys(va)) {
		if va[name] != vb[name] {
			d.Changed = append(d.Changed, Change{Name: name, A: va[name], B: vb[name]})
		}
	}
	ea, eb := ejectionsByHost(a), ejectionsByHost(b)
	for _, h := range hostOrder(a, b) {
		d.Hosts = append(d.Hosts, HostCount{Host: h, A: ea[h], B: eb[h]})
	}
	d.Sentences = d.sentences()
	return d
}

func ejectionsByHost(r scenario.Result) map[string]int {
	out := map[string]int{}
	for _, f := range r.Frames {
		for _, e := range f.Events {
			if e.Kind == engine.EventEject {
				out[e.Host]++
			}
		}
	}
	return out
}

// hostOrder is the hosts of both runs in the run's own order (h0, h1, …).
func hostOrder(a, b scenario.Result) []string {
	var out []string
	for _, r := range []scenario.Result{a, b} {
		if len(r.Frames) == 0 {
			continue
		}
		for _, h := range r.Frames[0].Hosts {
			if !slices.Contains(out, h.Name) {
				out = append(out, h.Name)
			}
		}
	}
	return out
}

// sentences says what changed and what it did, most telling first.
func (d Diff) sentences() []string {
	var out []string
	if len(d.Changed) == 0 {
		out = append(out, "A and B run the same settings.")
	}
	for _, c := range d.Changed {
		out = append(out, fmt.Sprintf("B sets %s to %s (A: %s).", c.Name, orUnset(c.B), orUnset(c.A)))
	}
	out = append(out, d.ejectionSentences()...)
	out = append(out, fmt.Sprintf("Clients: %s%% → %s%% failures.", pct2(d.A.FailurePct), pct2(d.B.FailurePct)))
	a, b := d.A, d.B
	for _, m := range []struct {
		what   string
		av, bv float64
		unit   string
	}{
		{"Since the fault, clients", a.FailurePctSinceFault, b.FailurePctSinceFault, "% failures"},
		{"Ejections refused by the cap (max_ejection_percent)", float64(a.Overflows), float64(b.Overflows), ""},
		{"Detections not enforced", float64(a.Detections), float64(b.Detections), ""},
		{"Most hosts ejected at once", float64(a.MaxEjected), float64(b.MaxEjected), ""},
		{"Time in panic", a.PanicS, b.PanicS, " s"},
		{"Retries refused by the breaker or budget (upstream_rq_retry_overflow)", float64(a.RetryOverflow), float64(b.RetryOverflow), ""},
		{"Requests answered 503 no healthy upstream", float64(a.NoHealthyUpstream), float64(b.NoHealthyUpstream), ""},
	} {
		if m.av == m.bv {
			continue
		}
		if m.unit == "% failures" {
			out = append(out, fmt.Sprintf("%s: %s%% → %s%%.", m.what, pct2(m.av), pct2(m.bv)))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s%s → %s%s.", m.what, num(m.av), m.unit, num(m.bv), m.unit))
	}
	return out
}

// ejectionSentences: one per host ejected a different number of times.
func (d Diff) ejectionSentences() []string {
	var out []string
	hosts := slices.Clone(d.Hosts)
	sort.SliceStable(hosts, func(i, j int) bool { return abs(hosts[i].B-hosts[i].A) > abs(hosts[j].B-hosts[j].A) })
	for _, h := range hosts {
		switch {
		case h.A == h.B:
			continue
		case h.A == 0:
			out = append(out, fmt.Sprintf("B ejects %s %s, A never.", h.Host, times(h.B)))
		case h.B == 0:
			out = append(out, fmt.Sprintf("A ejects %s %s, B never.", h.Host, times(h.A)))
		default:
			out = append(out, fmt.Sprintf("A ejects %s %s, B %s.", h.Host, times(h.A), times(h.B)))
		}
	}
	if len(out) > 0 {
		return out
	}
	if d.A.Ejections == 0 {
		return []string{"Neither ejects any host."}
	}
	return []string{fmt.Sprintf("Both eject the same hosts as often (%d ejections).", d.A.Ejections)}
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

func abs(n int) int { return max(n, -n) }

func orUnset(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

func pct2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ParseSettings reads "k=v,k=v" (the form of -compare and a permalink's
// pairs). A part without "=" continues the previous value, so
// "retry_on=5xx,reset,max_ejection_percent=34" keeps retry_on's list.
func ParseSettings(s string) (map[string]string, error) {
	out := map[string]string{}
	last := ""
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		switch {
		case ok && k != "":
			out[k], last = v, k
		case !ok && strings.TrimSpace(part) == "":
			continue
		case !ok && last != "":
			out[last] += "," + part
		default:
			return nil, fmt.Errorf("%q: want name=value", part)
		}
	}
	return out, nil
}

// CompareRuns runs the preset at one seed twice: with layer a, and with b
// laid over a. The two runs go in parallel.
func CompareRuns(p scenario.Preset, seed uint64, a, b map[string]string) (Diff, error) {
	scA, cfgA, err := settings.Apply(p, a)
	if err != nil {
		//lint:ignore ST1005 A names the first side of the comparison
		return Diff{}, fmt.Errorf("A: %w", err)
	}
	scB, cfgB, err := settings.Apply(p, a, b)
	if err != nil {
		//lint:ignore ST1005 B names the second side of the comparison
		return Diff{}, fmt.Errorf("B: %w", err)
	}
	var resB scenario.Result
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		resB, errB = scenario.Run(scB, cfgB, seed)
	}()
	resA, errA := scenario.Run(scA, cfgA, seed)
	<-done
	if err := cmp.Or(errA, errB); err != nil {
		return Diff{}, err
	}
	return Compare(resA, resB), nil
}
