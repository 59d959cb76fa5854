package tools

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/explain"
	"outlierlab/engine/whatif"
	"outlierlab/web/budget"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

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
		return s.budget.Over("log", fmt.Sprintf("%d hosts × %d ticks of %s s is %d host-ticks to replay and draw (allowed up to %d: %s)",
			rp.plan.Hosts, ticks, explain.Seconds(cfg.IntervalMs), cells, s.budget.MaxCells, hint))
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
