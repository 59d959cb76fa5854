package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/explain"
)

// WriteJSON writes the result as one JSON object: start_time, hosts,
// events (the replay output format of shared/spec/replay.md), summary
// (with the caveats and the first unparsed lines) and frames (the lab's
// charts).
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteText writes the replay for a reader: what was read, every event
// with its wall-clock time, the decision log's sentences, the caveats.
func WriteText(w io.Writer, res *Result, cfg engine.Config) error {
	var b strings.Builder
	s := res.Summary
	fmt.Fprintf(&b, "what-if: %d requests on %d hosts, from %s; the detector ticks every %s (t = 0 at the first line's second)\n",
		s.Requests, len(res.Hosts), res.Start.Format(time.RFC3339), explain.Seconds(cfg.IntervalMs)+" s")
	if s.Unparsed > 0 {
		fmt.Fprintf(&b, "%d of %d lines did not parse:\n", s.Unparsed, s.Lines)
		for _, e := range s.Unparsable {
			fmt.Fprintf(&b, "  line %d: %s\n", e.Line, e.Reason)
		}
		if s.Unparsed > len(s.Unparsable) {
			fmt.Fprintf(&b, "  … and %d more\n", s.Unparsed-len(s.Unparsable))
		}
	}
	fmt.Fprintf(&b, "\nevents (ejections %d, returns %d, refused by the cap %d, detected but not enforced %d):\n",
		s.Ejections, s.Unejections, s.Overflows, s.Detections)
	if len(res.Events) == 0 {
		b.WriteString("  none: with this config the detector does nothing on this traffic\n")
	}
	for _, e := range res.Events {
		at := res.Start.Add(time.Duration(e.AtMs) * time.Millisecond)
		fmt.Fprintf(&b, "  %s  %9s s  %-9s %-24s %s\n", at.Format("15:04:05.000"), explain.Seconds(e.AtMs), e.Event, e.Host, e.Detector)
	}
	b.WriteString("\nwhy:\n")
	for i := range res.Frames {
		iv := res.Frames[i].Interval()
		for _, sentence := range explain.Events(&iv, cfg) {
			fmt.Fprintf(&b, "  %s\n", sentence)
		}
	}
	b.WriteString("\nwhat the log cannot show:\n")
	for _, c := range s.Caveats {
		fmt.Fprintf(&b, "  - %s\n", c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
