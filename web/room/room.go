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
	"io/fs"
	"log/slog"

	"outlierlab/web/lab"
	"outlierlab/web/room/question"
	"outlierlab/web/room/recording"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
)

// Workshops are the rooms: a hub per room on the bus, their pages and
// tools, recordings and handouts. They stand on the lab (its pages, runs,
// tabs, lessons and clock) and reach its tabs through the lab's Rooms
// hooks (roomHooks), which the lab calls; the lab calls no room code but
// those.
type Workshops struct {
	lab        *lab.Lab
	rooms      *roomSet // nil without a bus
	plans      *scenes.Book
	recordings *recording.Recordings
	questions  question.Maker
	// grader grades a challenge scene's submissions (submissions.go).
	grader Grader
}

// New is the rooms on l over bus (nil: none), with the plans of
// plansFS (nil: none), and hooks them into the lab.
func New(l *lab.Lab, plansFS fs.FS, bus *roombus.Bus, lim Limits, log *slog.Logger) (*Workshops, error) {
	ws := &Workshops{lab: l}
	var err error
	if ws.plans, err = scenes.Load(plansFS, l); err != nil {
		return nil, err
	}
	ws.questions = question.NewMaker(l, ws.plans)
	ws.rooms = newRoomSet(ws, bus, lim, log)
	var tl *recording.Timeline
	if ws.rooms != nil {
		tl = ws.rooms.timeline
	}
	ws.recordings = recording.New(l, recordingRooms{ws}, tl)
	l.SetRooms(roomHooks{ws})
	return ws, nil
}
