// Package room serves the workshops: an instructor drives one lab (or
// lesson) and the attendees' tabs follow it, across replicas, over the
// room bus (web/roombus). A room's state as the bus holds it is
// web/room/record; this package is what replicas do with it: a hub per
// room watching its key, the room pages, the instructor's tools
// (questions, the board, the spotlight, plans and their scenes, the
// explore timer), the recording and its player, and the handout's routes.
// It stands on the lab (web/lab), whose tabs it reaches only through the
// lab's Rooms and Follow hooks (tab.go).
package room

import (
	"fmt"
	"io/fs"
	"log/slog"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// Workshops are the rooms: a hub per room on the bus, their pages and
// tools, recordings and handouts. They stand on the lab (its pages, runs,
// tabs, lessons and clock) and reach its tabs through the lab's Rooms
// hooks (roomHooks), which the lab calls; the lab calls no room code but
// those.
type Workshops struct {
	*lab.Lab
	rooms *roomSet // nil without a bus
	plans *planBook
}

// New is the rooms on l over bus (nil: none), with the plans of
// plansFS (nil: none), and hooks them into the lab.
func New(l *lab.Lab, plansFS fs.FS, bus *roombus.Bus, lim Limits, log *slog.Logger) (*Workshops, error) {
	ws := &Workshops{Lab: l}
	var err error
	if ws.plans, err = loadPlans(plansFS, l.Lessons); err != nil {
		return nil, err
	}
	ws.rooms = newRoomSet(ws, bus, lim, log)
	l.SetRooms(roomHooks{ws})
	return ws, nil
}

// roomInputs checks a state against the lab (its lesson and step, preset,
// settings, faults, speed and anchor) and gives the run's inputs and the
// lesson (nil in the free lab).
func (s *Workshops) roomInputs(st *record.State) (tabstate.Inputs, *lessonbook.Doc, error) {
	var in tabstate.Inputs
	var d *lessonbook.Doc
	switch {
	case st.Lesson != "":
		if d = s.Lessons.ByID[st.Lesson]; d == nil {
			return in, nil, &httperr.FieldError{Field: "lesson", Msg: fmt.Sprintf("%q is not a lesson", httperr.Truncate(st.Lesson, 40))}
		}
		if !d.HasStep(st.Step) {
			return in, nil, &httperr.FieldError{Field: "step", Msg: fmt.Sprintf("%q is not a step of lesson %s", httperr.Truncate(st.Step, 40), d.ID)}
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
	if st.Anchor < 0 || st.Anchor > record.MaxAnchor || st.AnchorAtMs < 0 {
		return in, nil, &httperr.FieldError{Field: "anchor", Msg: fmt.Sprintf("%d at %d is out of range (allowed 0–%d frames, a time from 1970)", st.Anchor, st.AnchorAtMs, record.MaxAnchor)}
	}
	return in, d, nil
}

// roomStateOf is a tab's state as its room shares it.
func roomStateOf(ts lab.TabState) record.State {
	pb := ts.Playback
	st := record.State{
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
