// Package spotlight checks the instructor's spotlight against the room's
// run, or picks it from a line of the run's decision log: a host of the
// run, a range of its time. The spotlight travels on the room's state
// (record.Spot) and every follower's charts highlight it; the rooms
// (web/room) serve POST /r/{code}/spotlight.
package spotlight

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/explain"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
)

// Check checks a spotlight against the room's run.
func Check(l *lab.Lab, st *record.State, sp *record.Spot) error {
	if sp.Host != "" {
		in, _, err := st.Inputs(l.Lessons)
		if err != nil {
			return err
		}
		run, err := l.Runs.Get(in)
		if err != nil {
			return err
		}
		if !slices.Contains(run.Hosts, sp.Host) {
			return &httperr.FieldError{Field: "host", Msg: fmt.Sprintf("%q is not a host of this run (allowed %s)", httperr.Truncate(sp.Host, 20), strings.Join(run.Hosts, ", "))}
		}
	}
	if sp.From != 0 || sp.To != 0 {
		if sp.From < 0 || sp.To <= sp.From || sp.To > record.MaxMomentS {
			return &httperr.FieldError{Field: "from", Msg: fmt.Sprintf("%s–%s s is not a time range (allowed 0 ≤ from < to ≤ %d)", ftoa(sp.From), ftoa(sp.To), record.MaxMomentS)}
		}
	}
	return nil
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// A spotlight picked from the decision log: the instructor clicks a line,
// and the room is shown the interval it speaks of and the host it names.
// The page sends the line's id (lg-FRAME-POS, tabstate/decisions.go foldedEntry);
// the server reads the rest from the room's run, so a follower's page,
// whatever its log shows, gets the same host and range.

// OfLog is the spotlight of log line id in the room's run: the host is
// the first the line names (none for "no host below the threshold"); the
// range runs from the start of the line's first interval to the end of
// its last. A decision at t speaks of the interval that ended at t (the
// detector's sweep, DetectorImpl::onIntervalTimer in
// outlier_detection_impl.cc, reads the counts gathered since the one
// before), and a folded run of non-events ("NO OUTLIER ×12") of every
// interval it stands for, up to the room's cursor (the page shows the run
// no further).
func OfLog(l *lab.Lab, st *record.State, id string) (record.Spot, error) {
	bad := func(format string, args ...any) (record.Spot, error) {
		return record.Spot{}, &httperr.FieldError{Field: "log", Msg: fmt.Sprintf(format, args...)}
	}
	frame, pos, ok := parseLogID(id)
	if !ok {
		return bad("%q is not a decision-log line (allowed lg-FRAME-POS, as the log's ids)", httperr.Truncate(id, 24))
	}
	in, _, err := st.Inputs(l.Lessons)
	if err != nil {
		return record.Spot{}, err
	}
	run, err := l.Runs.Get(in)
	if err != nil {
		return record.Spot{}, err
	}
	if frame >= len(run.Log) || pos >= len(run.Log[frame]) {
		return bad("%q is not a line of this run's log (it has %d intervals)", httperr.Truncate(id, 24), len(run.Log))
	}
	end := logLineEnd(run, frame, pos, st.CursorAt(in, run, l.Now()))
	iv := run.Config.IntervalMs
	sp := record.Spot{
		From: float64(max(run.Frames[frame].TMs-iv, 0)) / 1000,
		To:   float64(run.Frames[end].TMs) / 1000,
		Log:  id,
	}
	for _, p := range run.Log[frame][pos].Parts {
		if p.Kind == explain.Host {
			sp.Host = p.Text
			break
		}
	}
	return sp, nil
}

// parseLogID reads "lg-FRAME-POS".
func parseLogID(id string) (frame, pos int, ok bool) {
	rest, found := strings.CutPrefix(id, "lg-")
	if !found || len(id) > 24 {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	f, err1 := strconv.Atoi(a)
	p, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || f < 0 || p < 0 {
		return 0, 0, false
	}
	return f, p, true
}

// logLineEnd is the last frame line (frame, pos) stands for: itself, or
// the newest of its run of like non-events (tabstate.Folds), but
// none at or past cursor, which the page does not show yet.
func logLineEnd(run *tabstate.Run, frame, pos, cursor int) int {
	if !run.Log[frame][pos].Quiet {
		return frame
	}
	s := frame
	for s > 0 && tabstate.QuietFrame(run.Log[s-1]) {
		s--
	}
	to := max(min(cursor, len(run.Log)), frame+1)
	fs := tabstate.Folds(run.Log, s, to)
	end := frame
	for i := frame + 1; i < to; i++ {
		found := false
		for _, f := range fs[i-s] {
			if f.Start == frame && f.Pos == pos {
				end, found = i, true
				break
			}
		}
		if !found {
			break
		}
	}
	return end
}
