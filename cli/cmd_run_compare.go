package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"outlierlab/engine/scenario"
	"outlierlab/engine/sweep"
)

// compare is `run -compare 'k=v,...'`: A runs the -set settings, B the
// same with the compare settings laid over them; same preset, same seed.
func (o runOutput) compare(p scenario.Preset, a map[string]string, spec string, seed uint64) int {
	b, err := sweep.ParseSettings(spec)
	if err != nil {
		return o.fail("-compare: %v", err)
	}
	write, ok := map[string]func(io.Writer, sweep.Diff) error{"text": writeDiffText, "json": writeJSON[sweep.Diff], "csv": writeDiffCSV}[o.format]
	if !ok {
		return o.fail("-format %q is not one of text, json, csv (with -compare)", o.format)
	}
	d, err := sweep.CompareRuns(p, seed, a, b)
	if err != nil {
		return o.fail("%v", err)
	}
	if err := write(o.stdout, d); err != nil {
		fmt.Fprintf(o.stderr, "outlierlab run: %v\n", err)
		return 1
	}
	return 0
}

func writeDiffText(w io.Writer, d sweep.Diff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, seed %d: A vs B\n", d.Preset, d.Seed)
	for _, s := range d.Sentences {
		b.WriteString("  " + s + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJSON[T any](w io.Writer, v T) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// metricRows are the metrics by name, in the order the CSVs print them.
func metricRows(m sweep.Metrics) [][2]string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := strconv.Itoa
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return [][2]string{
		{"failure_pct", f(m.FailurePct)}, {"failure_pct_since_fault", f(m.FailurePctSinceFault)},
		{"ejections", i(m.Ejections)}, {"unejections", i(m.Unejections)}, {"overflows", i(m.Overflows)},
		{"detections_not_enforced", i(m.Detections)}, {"max_ejected", i(m.MaxEjected)}, {"panic_s", f(m.PanicS)},
		{"retry_overflow", u(m.RetryOverflow)}, {"no_healthy_upstream", u(m.NoHealthyUpstream)},
	}
}

func writeDiffCSV(w io.Writer, d sweep.Diff) error {
	cw := csv.NewWriter(w)
	rows := [][]string{{"metric", "a", "b"}}
	a, b := metricRows(d.A), metricRows(d.B)
	for i := range a {
		rows = append(rows, []string{a[i][0], a[i][1], b[i][1]})
	}
	for _, h := range d.Hosts {
		rows = append(rows, []string{"ejections:" + h.Host, strconv.Itoa(h.A), strconv.Itoa(h.B)})
	}
	return cw.WriteAll(rows)
}

// sweep is `run -sweep name=from:to:step`: one run per value and seed, on
// every core.
func (o runOutput) sweep(p scenario.Preset, base map[string]string, spec string, seeds []uint64) int {
	param, values, err := sweep.ParseRange(spec)
	if err != nil {
		return o.fail("-%v", err)
	}
	write, ok := map[string]func(io.Writer, *sweep.Sweep) error{"csv": writeSweepCSV, "json": writeSweepJSON, "text": writeSweepText}[o.format]
	if !ok {
		return o.fail("-format %q is not one of csv, json, text (with -sweep)", o.format)
	}
	if _, clash := base[param]; clash {
		return o.fail("-sweep %s and -set %s: the sweep sets it", param, param)
	}
	sw, err := sweep.Run(context.Background(), sweep.Spec{Preset: p, Base: base, Param: param, Values: values, Seeds: seeds})
	if err != nil {
		return o.fail("%v", err)
	}
	if err := write(o.stdout, sw); err != nil {
		fmt.Fprintf(o.stderr, "outlierlab run: %v\n", err)
		return 1
	}
	return 0
}

// writeSweepCSV writes one row per value and seed.
func writeSweepCSV(w io.Writer, sw *sweep.Sweep) error {
	cw := csv.NewWriter(w)
	head := []string{sw.Param, "seed"}
	for _, r := range metricRows(sweep.Metrics{}) {
		head = append(head, r[0])
	}
	rows := [][]string{head}
	for _, pt := range sw.Points {
		row := []string{pt.Value, strconv.FormatUint(pt.Seed, 10)}
		for _, r := range metricRows(pt.Metrics) {
			row = append(row, r[1])
		}
		rows = append(rows, row)
	}
	return cw.WriteAll(rows)
}

func writeSweepJSON(w io.Writer, sw *sweep.Sweep) error {
	return writeJSON(w, struct {
		*sweep.Sweep
		Bands []sweep.Band `json:"bands"`
	}{sw, sw.Bands()})
}

// writeSweepText is a table of the bands: median (min–max over the seeds).
func writeSweepText(w io.Writer, sw *sweep.Sweep) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s over %d values, seeds %v (%d distinct runs); median (min–max)\n", sw.Preset, sw.Param, len(sw.Values), sw.Seeds, sw.Runs)
	width := len(sw.Param)
	fmt.Fprintf(&b, "%-*s  %-22s %-16s %-16s %s\n", width, sw.Param, "client failures %", "ejections", "overflows", "panic s")
	for _, band := range sw.Bands() {
		fmt.Fprintf(&b, "%-*s  %-22s %-16s %-16s %s\n", width, band.Value, stat(band.FailurePct, 2), stat(band.Ejections, 0), stat(band.Overflows, 0), stat(band.PanicS, 0))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func stat(s sweep.Stat, decimals int) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	if f(s.Min) == f(s.Max) {
		return f(s.Median)
	}
	return f(s.Median) + " (" + f(s.Min) + "–" + f(s.Max) + ")"
}
