package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/explain"
	"outlierlab/engine/replay"
	"outlierlab/engine/whatif"
	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

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
