package web

import (
	"fmt"
	"strconv"

	"outlierlab/engine"
	"outlierlab/engine/explain"
	"outlierlab/engine/scenario"
	"outlierlab/web/view"
)

// The decision log says, for every interval, what the detector decided and
// why, with the numbers it compared and the setting that decided: the one
// thing no chart can say. The sentences are the engine's (engine/explain),
// the same ones `run -format text` prints; this file only gives each its
// tone and badge, and the template sets fields as code and quantities in
// bold.

// decisionsOf is every decision of one interval, oldest first.
func decisionsOf(f *scenario.Frame, cfg engine.Config) []view.LogEntry {
	iv := f.Interval()
	ss := explain.Decisions(&iv, cfg)
	out := make([]view.LogEntry, len(ss))
	for i, s := range ss {
		out[i] = view.LogEntry{Time: fmtMs(s.AtMs), Tone: tones[s.Outcome], Badge: s.Outcome.Badge(), Parts: s.Spans}
	}
	return out
}

// tones are the log's colours (app.css .entry.<tone>), one per outcome.
var tones = map[explain.Outcome]string{
	explain.Ejected: "eject", explain.Overflow: "overflow",
	explain.DetectOnly: "detect", explain.Degraded: "detect",
	explain.Returned: "return",
	explain.Skipped:  "skip", explain.NotCounted: "skip",
	explain.NoOutlier: "info",
}

// sentence collects the spans of a log entry the engine does not write:
// the lab's own notes (an injected fault).
type sentence struct{ parts []view.Span }

func (s *sentence) text(format string, args ...any) *sentence {
	s.parts = append(s.parts, view.Span{Kind: explain.Text, Text: fmt.Sprintf(format, args...)})
	return s
}

func entry(atMs int64, tone, badge string, s *sentence) view.LogEntry {
	return view.LogEntry{Time: fmtMs(atMs), Tone: tone, Badge: badge, Parts: s.parts}
}

// fmtMs writes milliseconds as seconds: "40 s", "20.1 s", "0.25 s",
// rounded the way the decision log's sentences round (explain.Seconds).
func fmtMs(ms int64) string { return explain.Seconds(ms) + " s" }

// plural and pct1 are the page's own number words (viewmodel.go).
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pct1 writes a percentage (or any rate) with one decimal.
func pct1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
