package tools

import (
	"bytes"
	"fmt"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/explain"
	"outlierlab/engine/whatif"
	"outlierlab/web/httperr"
	"outlierlab/web/view"
)

// /whatif with Envoy's outlier event log (issue 24): the events Envoy wrote
// to event_log_path, uploaded beside the access log of the same traffic,
// matched with the replay's (engine/whatif.Compare).

// parseWhatifEvents reads the optional events upload; nil without one.
// A log with no usable event is the events field's 400, naming its lines.
func parseWhatifEvents(data []byte, cluster string) (*eventlog.Log, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	log, err := eventlog.Parse(bytes.NewReader(data), cluster)
	if err != nil {
		msg := err.Error()
		if log != nil {
			for _, p := range log.Problems {
				msg += "; " + p.String()
			}
		}
		return nil, &httperr.FieldError{Field: "events", Msg: msg}
	}
	return log, nil
}

// matchLabels are the matches in words.
var matchLabels = map[whatif.Match]string{
	whatif.Agree: "agree", whatif.Disagree: "disagree", whatif.OnlyEnvoy: "only Envoy", whatif.OnlyLab: "only the lab",
}

// whatifCompareView is the comparison as the page shows it.
func whatifCompareView(c *whatif.Comparison, events *eventlog.Log, cfg engine.Config) *view.WhatifCompare {
	s := c.Summary
	v := &view.WhatifCompare{
		Read: fmt.Sprintf("Envoy's event log: %d events of cluster %q, %d lines.", len(events.Events), events.Cluster, events.Lines),
		Counts: fmt.Sprintf("Envoy %d events, the lab %d: agree %d, disagree %d, only Envoy %d, only the lab %d.",
			s.EnvoyEvents, s.LabEvents, s.Agree, s.Disagree, s.OnlyEnvoy, s.OnlyLab),
	}
	if c.TickEvents > 0 {
		v.Ticks = fmt.Sprintf("Envoy's interval timer fires %s s past the log's first second, every %s s (from %d of its events); the lab ticks there too.",
			explain.Seconds(c.TickPhaseMs), explain.Seconds(cfg.IntervalMs), c.TickEvents)
	}
	for _, p := range events.Problems {
		v.Problems = append(v.Problems, p.String())
	}
	k := events.Counts
	v.MoreProblems = k.Skipped() + k.UnknownFields - len(events.Problems)
	for _, p := range c.Events {
		row := view.WhatifMatch{Match: string(p.Match), Label: matchLabels[p.Match], Host: p.Host, Field: p.Field, Why: p.Why, Envoy: "–", Lab: "–"}
		if e := p.Envoy; e != nil {
			row.Clock = e.Time.UTC().Format("15:04:05.000")
			row.Envoy = fmt.Sprintf("%s (line %d)", strings.TrimSpace(e.Kind+" "+e.Detector), e.Line)
		}
		if l := p.Lab; l != nil {
			if row.Clock == "" {
				row.Clock = l.Time.UTC().Format("15:04:05.000")
			}
			row.Lab = strings.TrimSpace(l.Kind + " " + l.Detector)
			if p.DeltaMs != nil && *p.DeltaMs != 0 {
				row.Lab += fmt.Sprintf(" (%+.3f s)", float64(*p.DeltaMs)/1000)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	for _, f := range c.Findings {
		v.Findings = append(v.Findings, f.Text)
	}
	return v
}
