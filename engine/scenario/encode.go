package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/explain"
)

// EventLine is an engine event in the replay format's words
// (shared/spec/replay.md): at_ms, host, event (eject|detect|overflow|
// uneject), detector (omitted on uneject), plus the numbers behind the
// decision.
type EventLine struct {
	AtMs     int64  `json:"at_ms"`
	Host     string `json:"host"`
	Event    string `json:"event"`
	Detector string `json:"detector,omitempty"`
	// Cap is the max_ejection_percent arithmetic (eject, detect, overflow).
	Cap *CapLine `json:"cap,omitempty"`
	// Enforcing is the enforcing_* percentage consulted (eject, detect).
	Enforcing *uint32 `json:"enforcing,omitempty"`
	// Success-rate and failure-percentage detections: the host's rate, and
	// for success rate the cluster mean and threshold.
	HostSuccessRate *float64 `json:"host_success_rate,omitempty"`
	Mean            *float64 `json:"mean,omitempty"`
	Threshold       *float64 `json:"threshold,omitempty"`
	// Eject: the multiplier after it and how long the host stays out.
	Multiplier uint32 `json:"multiplier,omitempty"`
	EjectionMs int64  `json:"ejection_ms,omitempty"`
	// Uneject: why ("time_elapsed" or "active_health_check") and how long
	// the host was out.
	Cause     string `json:"cause,omitempty"`
	EjectedMs int64  `json:"ejected_ms,omitempty"`
}

// CapLine is engine.CapCheck in JSON.
type CapLine struct {
	Active           uint64  `json:"active"`
	Hosts            int     `json:"hosts"`
	Percent          float64 `json:"percent"`
	MaxPercent       uint32  `json:"max_percent"`
	Allowed          bool    `json:"allowed"`
	ByAlwaysEjectOne bool    `json:"by_always_eject_one_host,omitempty"`
}

// NewEventLine converts an engine event.
func NewEventLine(e engine.Event) EventLine {
	l := EventLine{AtMs: e.AtMs, Host: e.Host, Event: e.Kind.String()}
	switch e.Kind {
	case engine.EventUneject, engine.EventUndegrade:
		l.Cause = "time_elapsed"
		if e.Cause == engine.UnejectActiveHealthCheck {
			l.Cause = "active_health_check"
		}
		l.EjectedMs = e.EjectedMs
		return l
	}
	l.Detector = e.Detector.String()
	if e.Kind == engine.EventDegrade {
		return l
	}
	c := e.Cap
	l.Cap = &CapLine{Active: c.Active, Hosts: c.Hosts, Percent: round(c.Percent, 4), MaxPercent: c.MaxPercent, Allowed: c.Allowed, ByAlwaysEjectOne: c.ByAlwaysEjectOne}
	if e.Kind != engine.EventOverflow {
		en := e.Enforcing
		l.Enforcing = &en
	}
	if e.HostSuccessRate >= 0 {
		sr := round(e.HostSuccessRate, 4)
		l.HostSuccessRate = &sr
	}
	if e.Detector == engine.SuccessRate || e.Detector == engine.SuccessRateLocalOrigin {
		m, t := round(e.Mean, 4), round(e.Threshold, 4)
		l.Mean, l.Threshold = &m, &t
	}
	if e.Kind == engine.EventEject {
		l.Multiplier, l.EjectionMs = e.Backoff, e.DurationMs
	}
	return l
}

func round(f float64, digits int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', digits, 64), 64)
	return v
}

// statsJSON writes every outlier_detection stat by its short name, in
// Envoy's order, zeros included.
func statsJSON(st engine.Stats) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i := range engine.NumStats {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", engine.Stat(i).Name(), st[i])
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// frameLine is a frame as one JSON line: the frame's own fields, its
// events in the replay format and every detector stat.
type frameLine struct {
	Frame
	Events []EventLine     `json:"events"`
	Stats  json.RawMessage `json:"stats"`
}

type summaryLine struct {
	Summary
	Stats json.RawMessage `json:"stats"`
}

// WriteJSONLines writes one JSON object per frame per line, then
// {"summary": {...}}.
func WriteJSONLines(w io.Writer, res Result) error { return writeAll(NewJSONLinesWriter(w), &res) }

// NewJSONLinesWriter is WriteJSONLines a frame at a time (Stream).
func NewJSONLinesWriter(w io.Writer) FrameWriter {
	j := &jsonLinesWriter{bw: bufio.NewWriter(w)}
	j.enc = json.NewEncoder(&j.buf)
	return j
}

// jsonLinesWriter writes a frame's line in pieces: the frame's own fields,
// then its events one at a time, then its stats. An overflow storm puts
// 60 000 events in one 10 s interval, a 10 MB line: built whole (as
// json.Encoder would, with every EventLine first) it alone took ~100 MB
// with the garbage of its growing buffer.
type jsonLinesWriter struct {
	bw  *bufio.Writer
	buf bytes.Buffer // one value's JSON, reused
	enc *json.Encoder
}

func (j *jsonLinesWriter) Begin(*Result) error { return nil }

// eventsField is where a frame line's events go: frameLine's Events come
// after every field of Frame and before Stats (encoding/json orders an
// embedded struct's fields at the embedding's place), so the last match is
// the line's own (stats hold only names and numbers).
const eventsField = `"events":[]`

func (j *jsonLinesWriter) Frame(f *Frame) error {
	line, err := j.encode(frameLine{Frame: *f, Events: []EventLine{}, Stats: statsJSON(f.Stats)})
	if err != nil {
		return err
	}
	at := bytes.LastIndex(line, []byte(eventsField)) + len(eventsField) - 1
	rest := string(line[at:]) + "\n" // "]" and the stats; line is reused below
	j.bw.Write(line[:at])
	for i, e := range f.Events {
		if i > 0 {
			j.bw.WriteByte(',')
		}
		ev, err := j.encode(NewEventLine(e))
		if err != nil {
			return err
		}
		j.bw.Write(ev)
	}
	_, err = j.bw.WriteString(rest)
	return err
}

// encode is v's JSON as json.Encoder writes it (HTML-safe, no trailing
// newline), valid until the next call.
func (j *jsonLinesWriter) encode(v any) ([]byte, error) {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")), nil
}

func (j *jsonLinesWriter) End(res *Result) error {
	line, err := j.encode(map[string]summaryLine{"summary": {res.Summary, statsJSON(res.Summary.Stats)}})
	if err != nil {
		return err
	}
	j.bw.Write(line)
	j.bw.WriteByte('\n')
	return j.bw.Flush()
}

// WriteCSV writes one row per host per frame, with the frame's cluster and
// client columns repeated on each of its rows.
func WriteCSV(w io.Writer, res Result) error { return writeAll(NewCSVWriter(w), &res) }

// NewCSVWriter is WriteCSV a frame at a time (Stream).
func NewCSVWriter(w io.Writer) FrameWriter { return &csvWriter{bw: bufio.NewWriter(w)} }

type csvWriter struct{ bw *bufio.Writer }

func (c *csvWriter) Begin(*Result) error {
	_, err := fmt.Fprintln(c.bw, "t_ms,host,attempts,requests,successes,success_rate,ejected,multiplier,num_ejections,returns_in_ms,traffic_share,consecutive_5xx,failed_active_hc,sr_gate,sr_mean,sr_threshold,panic,healthy_hosts,client_requests,client_failures,client_failure_pct,retries,retry_overflow")
	return err
}

func (c *csvWriter) Frame(f *Frame) error {
	for _, h := range f.Hosts {
		if _, err := fmt.Fprintf(c.bw, "%d,%s,%d,%d,%d,%s,%t,%d,%d,%d,%s,%d,%t,%s,%s,%s,%t,%d,%d,%d,%s,%d,%d\n",
			f.TMs, h.Name, h.Attempts, h.Requests, h.Successes, ffmt(h.SuccessRate, 4), h.Ejected, h.Multiplier, h.NumEjections,
			h.ReturnsInMs, ffmt(h.TrafficShare, 4), h.Consecutive5xx, h.FailedActiveHC,
			f.SuccessRate.Gate, ffmt(f.SuccessRate.Mean, 4), ffmt(f.SuccessRate.Threshold, 4), f.Panic, f.Healthy,
			f.Clients.Requests, f.Clients.Failures, ffmt(f.Clients.FailurePct(), 3), f.Clients.RetriesSent, f.Clients.BudgetRefusals); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvWriter) End(*Result) error { return c.bw.Flush() }

func ffmt(f float64, digits int) string { return strconv.FormatFloat(f, 'f', digits, 64) }

// WriteText writes a timeline a person can follow in a terminal: one line
// per interval (the faulty hosts' success rates, the success-rate
// threshold or why it did not run, who is ejected, what clients saw), and
// each event as a short sentence under its interval.
func WriteText(w io.Writer, res Result) error { return writeAll(NewTextWriter(w), &res) }

// NewTextWriter is WriteText a frame at a time (Stream).
func NewTextWriter(w io.Writer) FrameWriter { return &textWriter{bw: bufio.NewWriter(w)} }

type textWriter struct {
	bw    *bufio.Writer
	watch []int
	cfg   engine.Config
}

func (t *textWriter) Begin(res *Result) error {
	writeHeader(t.bw, *res)
	t.watch, t.cfg = faultyHosts(*res), res.Config
	return nil
}

// Frame writes one interval's line and its events' sentences; a write
// error is the buffer's, and End reports it.
func (t *textWriter) Frame(f *Frame) error {
	bw := t.bw
	fmt.Fprintf(bw, "%7s ", secs(f.TMs))
	for _, i := range t.watch {
		h := f.Hosts[i]
		sr := "   -  "
		if h.SuccessRate >= 0 {
			sr = fmt.Sprintf("%5.1f%%", h.SuccessRate)
		}
		mark := " "
		if h.Ejected {
			mark = "*"
		}
		fmt.Fprintf(bw, " %s %s%s", h.Name, sr, mark)
	}
	switch f.SuccessRate.Gate {
	case "ran":
		fmt.Fprintf(bw, " | SR thr %5.1f%% (mean %5.1f)", f.SuccessRate.Threshold, f.SuccessRate.Mean)
	case "too_few_hosts":
		fmt.Fprintf(bw, " | SR off: %d hosts < %d", len(f.Hosts), f.SuccessRate.MinimumHosts)
	default:
		fmt.Fprintf(bw, " | SR skipped: %d/%d hosts with volume", f.SuccessRate.HostsWithVolume, f.SuccessRate.MinimumHosts)
	}
	var ejected []string
	for _, h := range f.Hosts {
		if h.Ejected {
			ejected = append(ejected, h.Name)
		}
	}
	fmt.Fprintf(bw, " | ejected %d/%d", len(ejected), len(f.Hosts))
	if len(ejected) > 0 && len(ejected) <= 6 {
		fmt.Fprintf(bw, " %s", strings.Join(ejected, ","))
	}
	fmt.Fprintf(bw, " | clients %5.2f%% failed of %d", f.Clients.FailurePct(), f.Clients.Requests)
	if f.Clients.RetriesSent > 0 || f.Clients.BudgetRefusals > 0 {
		fmt.Fprintf(bw, ", %d retries, %d retry overflows", f.Clients.RetriesSent, f.Clients.BudgetRefusals)
	}
	fmt.Fprintf(bw, ", p99 %.0f ms", f.Clients.LatencyP99Ms)
	if f.Panic {
		fmt.Fprint(bw, " | PANIC")
	}
	if m := f.Mesh; m != nil {
		writeMeshLine(bw, f, m)
	}
	fmt.Fprintln(bw)
	iv := f.Interval()
	for _, s := range explain.Events(&iv, t.cfg) {
		fmt.Fprintf(bw, "          %s\n", s)
	}
	return nil
}

func (t *textWriter) End(res *Result) error {
	bw := t.bw
	s := res.Summary
	fmt.Fprintf(bw, "\n%d requests, %.2f%% failed", s.Requests, s.FailurePct)
	if s.FaultStartMs >= 0 {
		fmt.Fprintf(bw, " (%.2f%% from %s)", s.FailurePctSinceFault, secs(s.FaultStartMs))
	}
	if s.Retries > 0 || s.RetryOverflow > 0 {
		// Retries as a share of the clients' requests (the lessons' "retry
		// pct"), and the retries refused: upstream_rq_retry_overflow.
		fmt.Fprintf(bw, "; %d retries (%.2f%% of requests), %d retry overflows", s.Retries, pct(s.Retries, s.Requests), s.RetryOverflow)
	}
	fmt.Fprintf(bw, "; %d ejections, %d overflows, %d unenforced detections; most ejected at once %d; panic in %d intervals\n",
		s.Ejections, s.Overflows, s.Detections, s.MaxEjected, s.PanicFrames)
	if s.Mesh != nil {
		writeMeshSummary(bw, s.Mesh)
	}
	return bw.Flush()
}

// writeHeader is the text output's first two lines: the scenario, and the
// run's shape.
func writeHeader(w io.Writer, res Result) {
	sc := &res.Scenario
	fmt.Fprintf(w, "%s: %s\n", sc.Name, sc.Description)
	fmt.Fprintf(w, "%d hosts, %s req/s, %s, seed %d; interval %s, max_ejection_percent %d\n\n",
		sc.Cluster.Hosts, num(sc.Cluster.RPS), sc.Cluster.LB, res.Seed, secs(res.Config.IntervalMs), res.Config.MaxEjectionPercent)
}

// faultyHosts are the hosts the primary faults touch (else any fault), at
// most four, or h0.
func faultyHosts(res Result) []int {
	n := res.Scenario.Cluster.Hosts
	for _, primaryOnly := range []bool{true, false} {
		var out []int
		for i := 0; i < n && len(out) < 4; i++ {
			for _, f := range res.Scenario.Cluster.Faults {
				if (f.Primary || !primaryOnly) && f.AppliesTo(i, n) {
					out = append(out, i)
					break
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return []int{0}
}

// secs is a time as the text output prints it: "40s", "20.1s" (Seconds'
// rounding).
func secs(ms int64) string { return Seconds(ms) + "s" }

// Interval is the frame as the explainer reads it.
func (f *Frame) Interval() explain.Interval {
	iv := explain.Interval{TMs: f.TMs, Events: f.Events, External: f.External, Local: f.Local,
		Hosts: make([]explain.HostVolume, len(f.Hosts)), Dialect: f.Dialect}
	for i, h := range f.Hosts {
		iv.Hosts[i] = explain.HostVolume{Name: h.Name, Requests: h.Requests, Ejected: h.Ejected}
	}
	return iv
}

// WriteLog writes the run's decision log as plain text, the sentences the
// web lab's log shows (explain.Decisions), one a line under the text
// output's two header lines: "40 s [OVERFLOW] h5 success rate …".
func WriteLog(w io.Writer, res Result) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw, res)
	for i := range res.Frames {
		iv := res.Frames[i].Interval()
		for _, s := range explain.Decisions(&iv, res.Config) {
			fmt.Fprintf(bw, "%s s [%s] %s\n", Seconds(s.AtMs), s.Outcome.Badge(), s.Text())
		}
	}
	return bw.Flush()
}
