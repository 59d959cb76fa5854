package whatif

import (
	"fmt"
	"io"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/eventlog"
	"outlierlab/engine/explain"
)

// The comparison written for a reader (whatif -compare's text).

// WriteCompareText writes the comparison for a reader: what was read of
// the event log (and what was set aside, by line), the timer's phase,
// every match with its reasons, the findings.
func WriteCompareText(out io.Writer, c *Comparison, events *eventlog.Log, cfg engine.Config) error {
	var b strings.Builder
	w := &b
	s := c.Summary
	fmt.Fprintf(w, "Envoy's event log: %d events of cluster %q (%d lines)\n", len(events.Events), events.Cluster, events.Lines)
	if k := events.Counts; k.BadLines+k.UnknownActions+k.UnknownFields+k.OtherCluster > 0 {
		fmt.Fprintf(w, "warning: %d lines set aside (bad %d, unknown action or type %d, other cluster %d), %d read without fields the proto lacks:\n",
			k.Skipped(), k.BadLines, k.UnknownActions, k.OtherCluster, k.UnknownFields)
		for _, p := range events.Problems {
			fmt.Fprintf(w, "  line %d: %s\n", p.Line, p.Reason)
		}
		if n := k.BadLines + k.UnknownActions + k.UnknownFields + k.OtherCluster; n > len(events.Problems) {
			fmt.Fprintf(w, "  … and %d more\n", n-len(events.Problems))
		}
	}
	if c.TickEvents > 0 {
		fmt.Fprintf(w, "Envoy's interval timer fires %s s past the log's first second, every %s s (from %d of its events); the lab ticks there too.\n",
			explain.Seconds(c.TickPhaseMs), explain.Seconds(cfg.IntervalMs), c.TickEvents)
	}
	fmt.Fprintf(w, "\nmatched (Envoy %d events, the lab %d): agree %d, disagree %d, only Envoy %d, only the lab %d\n",
		s.EnvoyEvents, s.LabEvents, s.Agree, s.Disagree, s.OnlyEnvoy, s.OnlyLab)
	for _, p := range c.Events {
		envoy, lab := "-", "-"
		at := c.Result.Start
		if e := p.Envoy; e != nil {
			envoy = fmt.Sprintf("%s (line %d)", strings.TrimSpace(e.Kind+" "+e.Detector), e.Line)
			at = e.Time
		}
		if l := p.Lab; l != nil {
			lab = strings.TrimSpace(l.Kind + " " + l.Detector)
			if p.Envoy == nil {
				at = l.Time
			}
		}
		if p.DeltaMs != nil && *p.DeltaMs != 0 {
			lab += fmt.Sprintf(" (%+.3f s)", float64(*p.DeltaMs)/1000)
		}
		fmt.Fprintf(w, "  %s  %-10s %-20s envoy: %-44s lab: %s\n", clock(at), p.Match, p.Host, envoy, lab)
		for _, why := range p.Why {
			fmt.Fprintf(w, "      %s\n", why)
		}
	}
	if len(c.Findings) > 0 {
		w.WriteString("\nfindings:\n")
		for _, f := range c.Findings {
			fmt.Fprintf(w, "  - %s\n", f.Text)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}
