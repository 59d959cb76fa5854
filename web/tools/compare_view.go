package tools

import (
	"fmt"
	"net/url"
	"strconv"

	"outlierlab/engine/sweep"
	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// compareView is the page of two runs: the settings that differ, the
// diff's sentences, both runs' numbers and the charts.
func compareView(ra, rb *tabstate.Run, a, b compareSide) view.Compare {
	d := sweep.Compare(*ra.Result, *rb.Result)
	v := view.Compare{
		Preset: ra.Preset, Seed: strconv.FormatUint(a.seed, 10),
		A:         view.CompareSide{Name: "A", Query: a.query()},
		B:         view.CompareSide{Name: "B", Query: b.query()},
		Sentences: d.Sentences,
		Charts:    chart.CompareCharts(ra, rb),
	}
	v.SwapURL = "/compare?a=" + url.QueryEscape(v.B.Query) + "&b=" + url.QueryEscape(v.A.Query)
	if a.seed == tabstate.DefaultSeed {
		v.A.LabURL, v.B.LabURL = tabstate.LabURL(ra, 0), tabstate.LabURL(rb, 0)
	} else {
		v.SeedNote = fmt.Sprintf("The lab runs seed %d, so these runs (seed %d) open here only.", tabstate.DefaultSeed, a.seed)
	}
	for _, c := range d.Changed {
		v.Changed = append(v.Changed, view.CompareChange{Name: c.Name, A: orNone(c.A), B: orNone(c.B)})
	}
	for _, h := range d.Hosts {
		v.Hosts = append(v.Hosts, view.CompareHost{Host: h.Host, A: h.A, B: h.B})
	}
	v.Metrics = compareMetrics(d.A, d.B)
	return v
}

// compareMetrics are the numbers a sweep charts, for A and B.
func compareMetrics(a, b sweep.Metrics) []view.CompareMetric {
	rows := []struct {
		name   string
		av, bv string
	}{
		{"client failures", pct(a.FailurePct), pct(b.FailurePct)},
		{"client failures since the fault", pct(a.FailurePctSinceFault), pct(b.FailurePctSinceFault)},
		{"ejections", tabstate.Itoa(a.Ejections), tabstate.Itoa(b.Ejections)},
		{"returns", tabstate.Itoa(a.Unejections), tabstate.Itoa(b.Unejections)},
		{"ejections refused by the cap (overflow)", tabstate.Itoa(a.Overflows), tabstate.Itoa(b.Overflows)},
		{"detections not enforced", tabstate.Itoa(a.Detections), tabstate.Itoa(b.Detections)},
		{"most hosts ejected at once", tabstate.Itoa(a.MaxEjected), tabstate.Itoa(b.MaxEjected)},
		{"time in panic", httperr.FormatNumber(a.PanicS) + " s", httperr.FormatNumber(b.PanicS) + " s"},
		{"retries refused (upstream_rq_retry_overflow)", strconv.FormatUint(a.RetryOverflow, 10), strconv.FormatUint(b.RetryOverflow, 10)},
		{"503 no healthy upstream", strconv.FormatUint(a.NoHealthyUpstream, 10), strconv.FormatUint(b.NoHealthyUpstream, 10)},
	}
	out := make([]view.CompareMetric, len(rows))
	for i, r := range rows {
		out[i] = view.CompareMetric{Name: r.name, A: r.av, B: r.bv, Differs: r.av != r.bv}
	}
	return out
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
