package labview

import (
	"fmt"

	"outlierlab/engine"
	"outlierlab/engine/explain"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Streaks is the consecutive-5xx figure at a cursor: for each host the
// detector's 5xx counter after the cursor's tick and the most it reached
// in the interval that ended there, against consecutive_5xx. Both are the
// engine's (DetectorHostMonitorImpl::putHttpResponseCode counts, a success
// or the ejection resets: outlier_detection_impl.cc), read off the frame,
// never counted again here. A dead host's five failures eject it between
// two ticks and the ejection resets its counter, so the tick reads 0:
// the interval's peak is what shows the streak.
func Streaks(r *tabstate.Run, cursor int) view.Streaks {
	cursor = min(max(cursor, 0), len(r.Frames))
	threshold := r.Config.Consecutive5xx
	v := view.Streaks{}
	switch {
	case r.Scenario.Cluster.Dialect == engine.DialectGRPC:
		v.Off = "gRPC's dialect counts no failures in a row (gRFC A50 has no consecutive detector)."
		return v
	case threshold == 0:
		v.Off = "consecutive_5xx is 0: the detector is off and counts nothing."
		return v
	}
	v.Cells = int(min(threshold, view.MaxStreakCells))
	cells := func(n uint32) int {
		// Rounded up, so one failure always fills a box.
		return int((uint64(min(n, threshold))*uint64(v.Cells) + uint64(threshold) - 1) / uint64(threshold))
	}
	if cursor == 0 {
		v.Caption = fmt.Sprintf("Each host's 5xx responses in a row at t = 0, against consecutive_5xx = %d. Press play or step: it fills as a host fails in a row and empties on a success.", threshold)
		for _, h := range r.Hosts {
			v.Hosts = append(v.Hosts, view.StreakHost{Name: h, Text: fmt.Sprintf("0 in a row of %d", threshold)})
		}
		return v
	}
	f := &r.Frames[cursor-1]
	from := int64(0)
	if cursor > 1 {
		from = r.Frames[cursor-2].TMs
	}
	window := explain.Seconds(from) + "–" + tabstate.FormatMs(f.TMs)
	v.Caption = fmt.Sprintf("Each host's 5xx responses in a row at the %s tick, against consecutive_5xx = %d. Dark: the counter now; pale: the most it reached in %s.", tabstate.FormatMs(f.TMs), threshold, window)
	for _, h := range f.Hosts {
		row := view.StreakHost{Name: h.Name, Now: cells(h.Consecutive5xx), Peak: cells(h.Peak5xx), Ejected: h.Ejected}
		row.Text = fmt.Sprintf("%d in a row of %d", h.Consecutive5xx, threshold)
		switch {
		case h.Peak5xx >= threshold:
			row.Text += fmt.Sprintf("; reached %d in %s", h.Peak5xx, window)
		case h.Peak5xx > h.Consecutive5xx:
			row.Text += fmt.Sprintf("; %d at most in %s, then reset", h.Peak5xx, window)
		}
		if h.Ejected {
			row.Text += "; ejected"
		}
		v.Hosts = append(v.Hosts, row)
	}
	return v
}
