package lab

import (
	"strconv"

	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/engine/course"
	"outlierlab/web/labview"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// streaksFor is a lesson's consecutive-5xx figure at cursor (labview.Streaks),
// shown while a step that names it (figure: streaks) is current or all
// charts are; nil for a lesson no step of which names it, so no other
// page carries it.
func streaksFor(d *lessonbook.Doc, r *tabstate.Run, cursor int) *view.Streaks {
	if d == nil {
		return nil
	}
	var steps []string
	for _, st := range d.Steps {
		if st.Figure == course.FigureStreaks {
			steps = append(steps, st.ID)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	v := labview.Streaks(r, cursor)
	v.Focus = orNow(sigAllCharts, steps)
	v.Unfocused = steps[0] != d.Steps[0].ID
	return &v
}

// streaksKey is what the figure is drawn from: the run and the cursor.
func streaksKey(snap snapshot) string {
	return snap.run.Key + "@" + strconv.Itoa(snap.cursor)
}

// streaks patches the figure when the run or the cursor moved since this
// connection last sent it (or the page drew it: drawnAt).
func (st *streamState) streaks(sse *datastar.ServerSentEventGenerator, snap snapshot) error {
	key := streaksKey(snap)
	if key == st.streaksAt {
		return nil
	}
	v := streaksFor(snap.lesson, snap.run, snap.cursor)
	if v == nil {
		return nil
	}
	st.streaksAt = key
	return st.patch(sse, templates.StreakFigure(*v))
}
