package room

import (
	"context"
	"net/http"

	"outlierlab/web/room/record"
	"outlierlab/web/view"
)

// The rooms' side of their recordings (web/room/recording): the room
// appends each change of its state to its timeline (roomSet.record), and
// finds a recording request's room for it (recordingRooms).

// record appends a state of the room, the one its key took at revision
// rev, to its timeline, with the plan scene it is on. A failure is
// logged: the workshop goes on without that entry.
func (set *roomSet) record(ctx context.Context, code string, rev uint64, kind string, st record.State) {
	set.timeline.Append(ctx, code, rev, kind, st, set.s.plans.EntryScene(&st))
}

// Board is the challenge panel of the room's scene at the last of
// entries, from the submissions recorded up to it (recordedBoard).
func (rr recordingRooms) Board(code string, entries []record.TimelineEntry) *view.RoomChallenge {
	if len(entries) == 0 {
		return nil
	}
	st := &entries[len(entries)-1].State
	p := rr.s.plans.Plan(st.Plan)
	if p == nil {
		return nil
	}
	return rr.s.recordedBoard(code, p, st.Scene, entries)
}

// recordingRooms are the rooms as their recordings find them.
type recordingRooms struct{ s *Workshops }

// Page finds the room of the recording's page as a room page does.
func (rr recordingRooms) Page(w http.ResponseWriter, r *http.Request) (string, bool) {
	code, _, ok := rr.s.roomFor(w, r)
	return code, ok
}

// API finds the room of the recording's export, player stream and
// transport as the rooms' API does, without the key: anyone with the
// room's code may read its recording, as they may follow the room.
func (rr recordingRooms) API(w http.ResponseWriter, r *http.Request) (string, bool) {
	code, _, ok := rr.s.roomAPI(w, r, false)
	return code, ok
}
