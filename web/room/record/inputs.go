package record

import (
	"fmt"
	"time"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// Inputs checks the state against the lab (its lesson and step, preset,
// settings, faults, speed and anchor) and gives the run's inputs and the
// lesson (nil in the free lab).
func (st *State) Inputs(lessons *lessonbook.Book) (tabstate.Inputs, *lessonbook.Doc, error) {
	var in tabstate.Inputs
	var d *lessonbook.Doc
	switch {
	case st.Lesson != "":
		var err error
		if d, err = lessons.Lesson(st.Lesson, st.Step); err != nil {
			return in, nil, err
		}
		in = d.Inputs(st.Step)
	case st.Step != "":
		return in, nil, &httperr.FieldError{Field: "step", Msg: "a step needs its lesson"}
	default:
		if _, ok := scenario.Lookup(st.Preset); !ok {
			return in, nil, tabstate.UnknownPreset("preset", st.Preset)
		}
		in = tabstate.Inputs{Preset: st.Preset}
	}
	for name, v := range st.Cfg {
		c := tabstate.ControlByName[name]
		if c == nil {
			return in, nil, &httperr.FieldError{Field: httperr.Truncate(name, 40), Msg: "is not a setting of the lab"}
		}
		if err := c.Check(v); err != nil {
			return in, nil, err
		}
	}
	in = in.With(st.Cfg)
	if st.Inject != "" {
		inj, err := tabstate.NormalInject(st.Inject)
		if err != nil {
			return in, nil, err
		}
		in.Inject = inj
	}
	if _, ok := tabstate.LookupSpeed(st.Speed); !ok {
		return in, nil, &httperr.FieldError{Field: "speed", Msg: fmt.Sprintf("%q is not a speed (allowed 1, 4, 16, instant)", httperr.Truncate(st.Speed, 20))}
	}
	if st.Anchor < 0 || st.Anchor > MaxAnchor || st.AnchorAtMs < 0 {
		return in, nil, &httperr.FieldError{Field: "anchor", Msg: fmt.Sprintf("%d at %d is out of range (allowed 0–%d frames, a time from 1970)", st.Anchor, st.AnchorAtMs, MaxAnchor)}
	}
	return in, d, nil
}

// StateOf is a tab's state as its room shares it.
func StateOf(ts lab.Snapshot) State {
	pb := ts.Playback
	st := State{
		Preset: ts.In.Preset, Cfg: ts.In.Values, Inject: ts.In.Inject,
		Anchor: pb.Anchor, Playing: pb.Playing, Speed: pb.Speed.Name, Predicted: ts.Predicted,
	}
	if !pb.AnchorAt.IsZero() {
		st.AnchorAtMs = pb.AnchorAt.UnixMilli()
	}
	if ts.Lesson != nil {
		st.Lesson, st.Step = ts.Lesson.ID, ts.Step
	}
	return st
}

// CursorAt is the room's cursor at now on run, made of in: playback is
// arithmetic, the same on every replica.
func (st *State) CursorAt(in tabstate.Inputs, run *tabstate.Run, now time.Time) int {
	return st.Snapshot(in, run, nil).CursorAt(now)
}
