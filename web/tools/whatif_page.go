package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/explain"
	"outlierlab/engine/replay"
	"outlierlab/engine/whatif"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// /whatif: "what would outlier detection have done last night?" An access
// log (Envoy's default format, Istio's, JSON lines), uploaded or pasted,
// with an optional cluster config, replayed through the detector by
// engine/whatif; the page shows the events in the replay format, the lines
// that did not parse with their numbers, what a log cannot show, and the
// lab's charts for that traffic.

const (
	// maxWhatifBytes bounds an upload (log and config together): larger
	// is 413. Some 20 000 lines of Envoy's default format.
	MaxWhatifBytes = 4 << 20
	// maxWhatifFrames bounds the intervals a replay draws: an hour at 1 s,
	// ten at Envoy's 10 s. A log spanning more is refused before it runs.
	maxWhatifFrames = 3600
)

// whatifForm is what a post gives.
type whatifForm struct {
	log, events     []byte
	config, cluster string
	seed            uint64
}

// whatifPage handles GET /whatif: the form.
func (s *Tools) whatifPage(w http.ResponseWriter, r *http.Request) {
	s.pages.Render(w, r, http.StatusOK, templates.WhatifPage(s.whatifView(whatifForm{seed: tabstate.DefaultSeed})))
}

func (s *Tools) whatifView(f whatifForm) view.Whatif {
	return view.Whatif{Layout: s.pages.Layout("What if: replay an access log", "lab", true),
		Config: f.config, Cluster: f.cluster, Seed: strconv.FormatUint(f.seed, 10),
		MaxBytes: fmt.Sprintf("%d MiB", MaxWhatifBytes>>20)}
}

// whatifPost handles POST /whatif: the form again with every problem
// named by its field (log, config, cluster, seed) — a 400, or a 422 for a
// replay past the budget — or the replay, admitted by the budget (a 503
// when the lab is busy) and made on a streamed page with its progress.
func (s *Tools) whatifPost(w http.ResponseWriter, r *http.Request) {
	f, status, err := readWhatifForm(w, r)
	var rp *replayPlan
	if err == nil {
		status = http.StatusBadRequest
		if rp, err = planReplay(f); err == nil {
			if err = s.replayWork(rp); err != nil {
				budget.MetricHeavy.WithLabelValues("over_budget").Inc()
				status = http.StatusUnprocessableEntity
			}
		}
	}
	if err != nil {
		v := s.whatifView(f)
		v.Problems = strings.Split(httperr.Text(err), "\n")
		s.pages.Render(w, r, status, templates.WhatifPage(v))
		return
	}
	v := s.whatifView(f)
	s.heavy(w, r, 1, v.Layout, fmt.Sprintf("Replaying %d requests on %d hosts", rp.plan.Requests, rp.plan.Hosts), func(p *page.Progress) (templ.Component, error) {
		res, err := rp.run(p)
		if err != nil {
			return nil, err
		}
		v.Result = res
		return templates.WhatifContent(v), nil
	})
}

// readWhatifForm reads a multipart or url-encoded post, at most
// maxWhatifBytes of it (413 past that).
func readWhatifForm(w http.ResponseWriter, r *http.Request) (whatifForm, int, error) {
	f := whatifForm{seed: tabstate.DefaultSeed}
	tooLarge := &httperr.FieldError{Field: "log", Msg: fmt.Sprintf("the upload is larger than %d MiB (allowed up to %d bytes: a shorter stretch of the log)", MaxWhatifBytes>>20, MaxWhatifBytes)}
	if r.ContentLength > MaxWhatifBytes {
		return f, http.StatusRequestEntityTooLarge, tooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxWhatifBytes)
	err := r.ParseMultipartForm(1 << 20)
	if errors.Is(err, http.ErrNotMultipart) {
		err = r.ParseForm()
	}
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok || strings.Contains(err.Error(), "request body too large") {
			return f, http.StatusRequestEntityTooLarge, tooLarge
		}
		return f, http.StatusBadRequest, &httperr.FieldError{Msg: "cannot read the form: " + err.Error()}
	}
	if r.MultipartForm != nil {
		defer func() { _ = r.MultipartForm.RemoveAll() }()
	}
	f.config, f.cluster = r.FormValue("config"), strings.TrimSpace(r.FormValue("cluster"))
	var errs []error
	if v := strings.TrimSpace(r.FormValue("seed")); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, &httperr.FieldError{Field: "seed", Msg: fmt.Sprintf("%q is not a seed (allowed a whole number from 1)", httperr.Truncate(v, 40))})
		} else {
			f.seed = n
		}
	}
	if f.events, err = formFile(r, "events"); err != nil {
		errs = append(errs, err)
	}
	if len(bytes.TrimSpace(f.events)) == 0 {
		f.events = []byte(r.FormValue("events_text"))
	}
	f.log, err = formFile(r, "log")
	if err == nil && len(bytes.TrimSpace(f.log)) == 0 {
		f.log = []byte(r.FormValue("log_text"))
	}
	if err == nil && len(bytes.TrimSpace(f.log)) == 0 {
		err = &httperr.FieldError{Field: "log", Msg: "is empty (upload an access log, or paste its lines)"}
	}
	return f, http.StatusBadRequest, errors.Join(append(errs, err)...)
}

// formFile is the uploaded file's bytes, nil if none was sent.
func formFile(r *http.Request, name string) ([]byte, error) {
	file, _, err := r.FormFile(name)
	if errors.Is(err, http.ErrMissingFile) || errors.Is(err, http.ErrNotMultipart) {
		return nil, nil
	}
	if err != nil {
		return nil, &httperr.FieldError{Field: name, Msg: "cannot read the upload: " + err.Error()}
	}
	defer func(f multipart.File) { _ = f.Close() }(file)
	b, err := io.ReadAll(file)
	if err != nil {
		return nil, &httperr.FieldError{Field: name, Msg: "cannot read the upload: " + err.Error()}
	}
	return b, nil
}

// replayPlan is a replay read and checked, not yet run.
type replayPlan struct {
	f    whatifForm
	c    envoyconf.Cluster
	log  *whatif.Log
	opts whatif.Options
	plan whatif.Planned
	// events is Envoy's event log, nil without one.
	events *eventlog.Log
}

// planReplay parses the config and the log and checks what the replay
// would do, running nothing: every problem is named by its field.
func planReplay(f whatifForm) (*replayPlan, error) {
	c, err := envoyconf.ParseCluster([]byte(f.config))
	if err != nil {
		return nil, fieldPrefixed("config", err)
	}
	log, err := whatif.ParseLog(bytes.NewReader(f.log))
	if err != nil {
		return nil, &httperr.FieldError{Field: "log", Msg: err.Error()}
	}
	if err := checkSpan(log, c.Outlier.IntervalMs); err != nil {
		return nil, err
	}
	rp := &replayPlan{f: f, c: c, log: log, opts: whatif.Options{Config: c.Outlier, PanicThreshold: c.PanicThreshold, Cluster: f.cluster, Seed: f.seed}}
	if !log.NamesClusters() {
		// Envoy's default format names no cluster: the field then chooses
		// only the event log's.
		rp.opts.Cluster = ""
	}
	if rp.plan, err = whatif.Plan(log, rp.opts); err != nil {
		return nil, replayError(err)
	}
	if rp.events, err = parseWhatifEvents(f.events, f.cluster); err != nil {
		return nil, err
	}
	return rp, nil
}

// replayError names the field a replay's error is about.
func replayError(err error) error {
	field := "log"
	if strings.Contains(err.Error(), "cluster") {
		field = "cluster"
	}
	return &httperr.FieldError{Field: field, Msg: err.Error()}
}

// replayWork weighs a replay against the budget: every request, and
// every host at every tick to the last ejection's possible return (the
// replay keeps each in a frame and draws it in the lanes).
func (s *Tools) replayWork(rp *replayPlan) error {
	cfg := rp.c.Outlier
	tail := max(cfg.MaxEjectionTimeMs, cfg.BaseEjectionTimeMs) + cfg.MaxEjectionTimeJitterMs + 2*cfg.IntervalMs
	ticks := (rp.plan.Span.Milliseconds()+tail)/max(cfg.IntervalMs, 1) + 1
	cells := int64(rp.plan.Hosts) * ticks
	hint := "fewer hosts (one cluster: the cluster field), a shorter stretch of the log, or a longer interval"
	if cells > s.budget.MaxCells {
		return &budget.OverBudget{Field: "log", Msg: fmt.Sprintf("%d hosts × %d ticks of %s s is %d host-ticks to replay and draw (allowed up to %d: %s)",
			rp.plan.Hosts, ticks, explain.Seconds(cfg.IntervalMs), cells, s.budget.MaxCells, hint)}
	}
	return s.budget.CheckWork("log", int64(rp.plan.Requests)+budget.HostIntervalWork*cells,
		fmt.Sprintf("%d requests on %d hosts × %d ticks", rp.plan.Requests, rp.plan.Hosts, ticks), hint)
}

// run replays the log and draws it, telling p.
func (rp *replayPlan) run(p *page.Progress) (*view.WhatifResult, error) {
	opts := rp.opts
	opts.Progress = func(done, total int) { p.Step(done, total, "requests replayed") }
	if rp.events != nil {
		cmp, err := whatif.Compare(rp.log, rp.events, opts)
		if err != nil {
			return nil, replayError(err)
		}
		p.Phase("drawing the charts")
		v := whatifResultView(cmp.Result, rp.c, rp.f.config == "")
		v.Compare = whatifCompareView(cmp, rp.events, rp.c.Outlier)
		return v, nil
	}
	stop := tabstate.ObserveRun()
	res, err := whatif.Run(rp.log, opts)
	stop()
	if err != nil {
		return nil, replayError(err)
	}
	p.Phase("drawing the charts")
	return whatifResultView(res, rp.c, rp.f.config == ""), nil
}

// fieldPrefixed names err's lines by the form field they came from:
// "config: outlier_detection.interval: …".
func fieldPrefixed(field string, err error) error {
	lines := strings.Split(httperr.Text(err), "\n")
	errs := make([]error, len(lines))
	for i, l := range lines {
		errs[i] = &httperr.FieldError{Field: field, Msg: l}
	}
	return errors.Join(errs...)
}

// checkSpan refuses a log whose replay would draw more than
// maxWhatifFrames intervals (two lines a year apart would be three
// million), before anything runs.
func checkSpan(log *whatif.Log, intervalMs int64) error {
	if len(log.Entries) == 0 || intervalMs <= 0 {
		return nil // whatif.Run says what is wrong
	}
	first, last := log.Entries[0].Start, log.Entries[0].Answer
	for _, e := range log.Entries {
		if e.Start.Before(first) {
			first = e.Start
		}
		if e.Answer.After(last) {
			last = e.Answer
		}
	}
	span := last.Sub(first.Truncate(time.Second))
	if n := span.Milliseconds()/intervalMs + 1; n > maxWhatifFrames {
		return &httperr.FieldError{Field: "log", Msg: fmt.Sprintf("it spans %s, %d intervals of %s s (allowed up to %d intervals: a shorter stretch of the log, or a longer interval)",
			span.Round(time.Second), n, explain.Seconds(intervalMs), maxWhatifFrames)}
	}
	return nil
}

// whatifResultView is the replay as the page shows it.
func whatifResultView(res *whatif.Result, c envoyconf.Cluster, defaults bool) *view.WhatifResult {
	s := res.Summary
	v := &view.WhatifResult{
		Read: fmt.Sprintf("%d requests on %d hosts, from %s; the detector ticks every %s s, t = 0 at the first line's second.",
			s.Requests, len(res.Hosts), res.Start.UTC().Format(time.RFC3339), explain.Seconds(c.Outlier.IntervalMs)),
		Config:      whatifConfigWords(c, defaults),
		ConfigNotes: c.Notes,
		Caveats:     s.Caveats,
		Why:         whatifWhy(res, c.Outlier),
		Charts:      whatifCharts(res, c.Outlier),
	}
	for _, e := range s.Unparsable {
		v.Unparsed = append(v.Unparsed, e.String())
	}
	v.MoreUnparsed = s.Unparsed - len(s.Unparsable)
	for _, e := range res.Events {
		v.Events = append(v.Events, view.WhatifEvent{
			Clock: res.Start.Add(time.Duration(e.AtMs) * time.Millisecond).UTC().Format("15:04:05.000"),
			AtS:   explain.Seconds(e.AtMs), Event: e.Event, Host: e.Host, Detector: e.Detector,
		})
	}
	events := res.Events
	if events == nil {
		events = []replay.Event{}
	}
	b, _ := json.MarshalIndent(struct {
		Events []replay.Event `json:"events"`
	}{events}, "", "  ")
	v.EventsJSON = string(b)
	return v
}

func whatifConfigWords(c envoyconf.Cluster, defaults bool) string {
	if defaults {
		return "Config: Envoy's defaults (no config given)."
	}
	what := map[envoyconf.Source]string{
		envoyconf.SourceOutlierDetection: "an outlier_detection block",
		envoyconf.SourceEnvoyCluster:     "the Envoy cluster",
		envoyconf.SourceDestinationRule:  "the Istio DestinationRule",
	}[c.Source]
	if c.Name != "" {
		what += " " + strconvQuote(c.Name)
	}
	return fmt.Sprintf("Config: %s; healthy_panic_threshold %s%%.", what, httperr.FormatNumber(c.PanicThreshold))
}

func strconvQuote(s string) string { return strconv.Quote(httperr.Truncate(s, 80)) }

// whatifWhy is every event as a sentence, interval by interval.
func whatifWhy(res *whatif.Result, cfg engine.Config) []string {
	var out []string
	for i := range res.Frames {
		iv := res.Frames[i].Interval()
		for _, s := range explain.Events(&iv, cfg) {
			out = append(out, s.String())
		}
	}
	return out
}

// widenLabels is a chart's option with room on the left for the log's
// host names ("10.0.0.5:8080"), which the lab's margins, made for "h5",
// would cut: each grid at the lab's left margin moves to fit the longest.
func widenLabels(c chart.JSONOption, hosts []string) json.RawMessage {
	longest := 0
	for _, h := range hosts {
		longest = max(longest, len(h))
	}
	left := 16 + 8*longest // px: a label's characters at the lanes' font size
	c.Validate()
	o, _ := plain(c.JSON()).(map[string]any)
	grids, _ := o["grid"].([]any)
	for _, g := range grids {
		if g, ok := g.(map[string]any); ok && g["left"] == "66" && left > 66 {
			g["left"] = tabstate.Itoa(left)
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic("web: chart option: " + err.Error())
	}
	return b
}

// whatifChartIDs are the lab's charts a replay draws: all but the compare
// strip, which reruns a scenario under the other dialect (a log has no
// scenario to rerun).
var whatifChartIDs = []string{chart.ChartSuccessRate, chart.ChartLanes, chart.ChartClients, chart.ChartShare, chart.ChartCounters}

// whatifCharts draws the replay's frames with the lab's own chart
// builders, over a Run that holds only what they read: the frames, the
// config, the hosts and the axis (wall-clock times, as the log has them).
func whatifCharts(res *whatif.Result, cfg engine.Config) view.StaticCharts {
	r := &tabstate.Run{Config: cfg, Frames: res.Frames, Hosts: res.Hosts, HostIndex: map[string]int{}}
	for i, h := range res.Hosts {
		r.HostIndex[h] = i
	}
	r.Times = make([]string, len(res.Frames))
	for i := range res.Frames {
		r.Times[i] = res.Start.Add(time.Duration(res.Frames[i].TMs) * time.Millisecond).UTC().Format("15:04:05")
	}
	opt := map[string]json.RawMessage{}
	heights := map[string]int{}
	var boxes []view.Chart
	for _, c := range chart.List {
		if !slices.Contains(whatifChartIDs, c.ID) {
			continue
		}
		boxes = append(boxes, view.Chart{ID: c.ID, Title: c.Title, Caption: c.Caption, Size: c.Size})
		opt[c.ID] = widenLabels(c.Build(r, r.Frames), r.Hosts)
		if c.Height != nil {
			heights[c.ID] = c.Height(r)
		}
	}
	o, _ := json.Marshal(opt)
	h, _ := json.Marshal(heights)
	return view.StaticCharts{Boxes: boxes, Options: string(o), Heights: string(h)}
}
