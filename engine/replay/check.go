package replay

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Diff compares a replay's output with the trace's expectation, per the
// spec: events equal in order; for each expected snapshot (by label) the
// ejected and degraded lists exactly (no degraded list: none) and every
// stat it names. It returns one line per
// difference, the first differing event only (later ones follow from it).
func Diff(want, got *Output) []string {
	var diffs []string
	n := max(len(want.Events), len(got.Events))
	for i := range n {
		var w, g *Event
		if i < len(want.Events) {
			w = &want.Events[i]
		}
		if i < len(got.Events) {
			g = &got.Events[i]
		}
		if w != nil && g != nil && *w == *g {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("event #%d: expected %s, got %s (expected %d events, got %d)",
			i+1, describe(w), describe(g), len(want.Events), len(got.Events)))
		break
	}
	byLabel := map[string]*Snapshot{}
	for i := range got.Snapshots {
		byLabel[got.Snapshots[i].Label] = &got.Snapshots[i]
	}
	for _, ws := range want.Snapshots {
		gs, ok := byLabel[ws.Label]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("snapshot %q: expected, but the trace never took it", ws.Label))
			continue
		}
		if ws.AtMs != gs.AtMs {
			diffs = append(diffs, fmt.Sprintf("snapshot %q: at_ms expected %d, got %d", ws.Label, ws.AtMs, gs.AtMs))
		}
		we := ws.Ejected
		if we == nil {
			we = []string{}
		}
		if !slices.Equal(we, gs.Ejected) {
			diffs = append(diffs, fmt.Sprintf("snapshot %q: ejected expected [%s], got [%s]", ws.Label, strings.Join(we, ", "), strings.Join(gs.Ejected, ", ")))
		}
		// No "degraded" means none, as the output leaves an empty list out.
		if len(ws.Degraded) != 0 || len(gs.Degraded) != 0 {
			if !slices.Equal(ws.Degraded, gs.Degraded) {
				diffs = append(diffs, fmt.Sprintf("snapshot %q: degraded expected [%s], got [%s]", ws.Label, strings.Join(ws.Degraded, ", "), strings.Join(gs.Degraded, ", ")))
			}
		}
		names := make([]string, 0, len(ws.Stats))
		for k := range ws.Stats {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			gv, ok := gs.Stats[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("snapshot %q: stat %s is not an outlier_detection stat", ws.Label, k))
				continue
			}
			if gv != ws.Stats[k] {
				diffs = append(diffs, fmt.Sprintf("snapshot %q: %s expected %d, got %d", ws.Label, k, ws.Stats[k], gv))
			}
		}
	}
	return diffs
}

func describe(e *Event) string {
	if e == nil {
		return "no event"
	}
	s := fmt.Sprintf("{at_ms %d, %s %s", e.AtMs, e.Host, e.Event)
	if e.Detector != "" {
		s += " by " + e.Detector
	}
	return s + "}"
}
