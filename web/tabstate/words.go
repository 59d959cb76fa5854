package tabstate

import (
	"fmt"
	"math"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/web/view"
)

// A run and its playback in the words the lab's page shows them with.

// SpeedButtons are the transport's speed buttons, slowest first.
func SpeedButtons() []view.Speed {
	out := make([]view.Speed, len(Speeds))
	for i, sp := range Speeds {
		out[i] = view.Speed{Value: sp.Name, Label: SpeedLabel(sp, true), Title: SpeedLabel(sp, false)}
	}
	return out
}

// SpeedLabel is a speed on a button ("4×") or in words ("4 intervals/s").
func SpeedLabel(sp Speed, short bool) string {
	switch {
	case sp.FPS == 0:
		return "instant"
	case short:
		return sp.Name + "×"
	case sp.FPS == 1:
		return "1 interval/s"
	}
	return sp.Name + " intervals/s"
}

// SummaryLine is the run so far in one line: what clients saw and what the
// detector did. Every failure share says its window in words, since the
// lessons quote more than one: the whole run so far (since 0 s), the time
// since the fault began (the lessons' "from 30 s"), and the last interval
// alone (what the clients chart shows at the cursor).
func SummaryLine(r *Run, cursor int) string {
	if cursor == 0 {
		return "Press play (space) or step (→) to run the detector."
	}
	frames := r.Frames[:min(cursor, len(r.Frames))]
	all := scenario.Totals(frames)
	// The fault window is the whole intervals from the first one that
	// starts at or after the fault, as the run's summary counts it.
	var since scenario.ClientTotals
	faultFrom := int64(-1)
	if r.Result != nil && r.Result.Summary.FaultStartMs > 0 {
		if w := scenario.Window(frames, r.Result.Summary.FaultStartMs, math.MaxInt64); len(w) > 0 {
			since, faultFrom = scenario.Totals(w), w[0].TMs-r.Config.IntervalMs
		}
	}
	ej, ov := scenario.CountEvents(frames, engine.EventEject), scenario.CountEvents(frames, engine.EventOverflow)
	last := frames[len(frames)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "Clients' failures: %s%% of %s requests since 0 s", Pct2(all.Failures, all.Requests), GroupThousands(all.Requests))
	if faultFrom > 0 {
		fmt.Fprintf(&b, " · %s%% since %s (the fault)", Pct2(since.Failures, since.Requests), FormatMs(faultFrom))
	}
	fmt.Fprintf(&b, " · %s%% in the last interval (%s–%s)", Pct2(last.Clients.Failures, last.Clients.Requests),
		scenario.Seconds(last.TMs-r.Config.IntervalMs), FormatMs(last.TMs))
	fmt.Fprintf(&b, " · since 0 s: %s %s, %s refused by the cap (overflow)", GroupThousands(uint64(ej)), Plural(ej, "ejection", "ejections"),
		GroupThousands(uint64(ov)))
	return b.String()
}
