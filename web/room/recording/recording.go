// Package recording replays a workshop. Every change of a room's state
// (its start, the instructor's moves, questions, reveals with their
// histograms, Bring everyone here, Lock, scenes, the spotlight, the
// explore timer) is appended to the room's timeline on the bus (Timeline),
// kept as long as the room. The state is all a page needs: the engine is
// deterministic, so the same state redraws the same charts. This package
// serves what reads the timeline back: the recording's page, its player
// (player*.go: the lab's stream, driven by the recording) and the export.
// It stands below the rooms (web/room), which append to the timeline and
// find a request's room for it (Rooms).
//
//	GET  /r/{code}/recording             the player and the timeline, each
//	                                     entry a lab link at its state
//	GET  /r/{code}/recording.json        the timeline as JSON (anyone with
//	                                     the room's code)
//	POST /r/{code}/recording/stream      the player's stream
//	POST /r/{code}/recording/{verb}      its transport (player_routes.go)
package recording

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// Rooms is what the recordings ask of the workshops: the room a request
// names, read off its path and checked (the code is one, the room exists,
// the address has not guessed too many codes), each answering the request
// itself when it cannot and then returning ok false: as a room page does
// (Page: an HTML page, a lower-case code redirected), or as the rooms' API
// does (API: plain text; the export, the player's stream and transport).
type Rooms interface {
	Page(w http.ResponseWriter, r *http.Request) (code string, ok bool)
	API(w http.ResponseWriter, r *http.Request) (code string, ok bool)
	// Board is the challenge panel as room code showed it at the last of
	// entries (a prefix of its recording): the submissions recorded up to
	// it; nil off a challenge scene.
	Board(code string, entries []record.TimelineEntry) *view.RoomChallenge
}

// Recordings serve the rooms' recordings on the lab: the page, the
// players (one per tab), the export.
type Recordings struct {
	lab      *lab.Lab
	rooms    Rooms
	timeline *Timeline
	players  *playerSet
}

// New is the recordings of timeline (nil: this server runs no workshops,
// and rooms refuses every request), on l.
func New(l *lab.Lab, rooms Rooms, timeline *Timeline) *Recordings {
	return &Recordings{lab: l, rooms: rooms, timeline: timeline, players: newPlayerSet()}
}

// Recording is what /r/CODE/recording.json exports.
type Recording struct {
	Room    string                 `json:"room"`
	Entries []record.TimelineEntry `json:"entries"`
}

// recordingJSON handles GET /r/{code}/recording.json.
func (s *Recordings) recordingJSON(w http.ResponseWriter, r *http.Request) {
	// One rule for the recording, page and export alike: anyone with the
	// room's code may read it, as they may follow the room. It holds only
	// what the room was shown (states, questions, reveals; an answer only
	// from its reveal on), never the key or who answered what.
	code, ok := s.rooms.API(w, r)
	if !ok {
		return
	}
	entries, err := s.timeline.Read(r.Context(), code)
	if err != nil {
		// The bus, not the request: the page answers the same.
		httperr.Write(w, httperr.Errorf(httperr.KindUnavailable, "cannot read the recording: %w", err), httperr.KindUnavailable)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="workshop-`+code+`.json"`)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(Recording{Room: code, Entries: entries})
}

// Routes registers the recording's routes: the page with its player,
// the player's stream and transport, and the JSON export.
func (s *Recordings) Routes(r chi.Router) {
	r.Get("/r/{code}/recording", s.recordingPage)
	r.Get("/r/{code}/recording.json", s.recordingJSON)
	r.Post("/r/{code}/recording/stream", s.recordingStream)
	r.Post("/r/{code}/recording/{verb}", s.recordingCommand)
}

// recordingPage handles GET /r/{code}/recording: the player (the room's
// lab in the projector view, driven by the recording: player*.go),
// and under it the timeline, each entry a link to the lab at its state
// (the lab redraws it exactly). ?speed= picks the player's speed.
func (s *Recordings) recordingPage(w http.ResponseWriter, r *http.Request) {
	code, ok := s.rooms.Page(w, r)
	if !ok {
		return
	}
	sp, err := lookupReplaySpeed(orDefault(r.URL.Query().Get("speed"), defaultReplaySpeed))
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	entries, err := s.timeline.Read(r.Context(), code)
	if err != nil {
		httperr.Write(w, httperr.Errorf(httperr.KindUnavailable, "cannot read the recording: %w", err), httperr.KindUnavailable)
		return
	}
	v := view.RecordingPlayer{Layout: s.lab.Pages.Layout("Recording of workshop "+code, "", true), Code: code, Speed: sp.Name}
	p, err := s.newPlayer(code, entries, replaySignals{RecSpeed: sp.Name})
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	for _, sp := range replaySpeeds {
		v.Speeds = append(v.Speeds, view.Speed{Value: sp.Name, Label: sp.Label, Title: replaySpeedTitle(sp)})
	}
	v.End = fmtElapsed(p.end)
	for i := range entries {
		e := &entries[i]
		row := p.nowView(i)
		row.Link, row.State = s.entryLink(e), describeEntry(e)
		if p.end > 0 {
			row.Left = recPct(p.off[i], p.end)
		} else {
			row.Left = "0"
		}
		v.Entries = append(v.Entries, row)
	}
	if len(entries) > 0 {
		lab, err := s.recordingLab(code, &entries[0], sp.Name, tabid.New(s.lab.Browser(w, r)), false)
		if err != nil {
			httperr.Write(w, fmt.Errorf("cannot show the recording of room %s: %w", code, err), httperr.KindInternal)
			return
		}
		v.Lab, v.Lesson = lab.lab, lab.lesson
		if lab.lab != nil {
			csp.AllowTabScripts(w, lab.lab.Tab)
		} else {
			csp.AllowTabScripts(w, lab.lesson.Lab.Tab)
		}
	}
	s.lab.Pages.Render(w, r, http.StatusOK, templates.RecordingPage(v))
}

func replaySpeedTitle(sp replaySpeed) string {
	if sp.X == 0 {
		return "every entry, one after the other, as fast as possible"
	}
	return fmt.Sprintf("%s seconds of the workshop each second", sp.Name)
}

// recLab is the lab the player drives: the room's lab or lesson in the
// projector view, its stream the player's.
type recLab struct {
	lab    *view.Lab
	lesson *view.Lesson
}

// recordingLab is the player's lab at entry e (the recording's page: its
// first), for the tab with id tab: a new page's (issued for the request's
// browser), or the player's stream patching the lab in place to an entry
// on another lesson (sendPage, inPlace), which keeps the page's own
// signals for the player and its command sequence number (the stream
// sends them as they change).
func (s *Recordings) recordingLab(code string, e *record.TimelineEntry, speed, tab string, inPlace bool) (recLab, error) {
	in, d, err := e.State.Inputs(s.lab.Lessons)
	if err != nil {
		return recLab{}, err
	}
	signals := func(sig string) string {
		if inPlace {
			return withoutSignals(sig, "seq")
		}
		return withReplaySignals(sig, speed)
	}
	stream := "/r/" + code + "/recording/stream"
	if d != nil {
		v, err := s.lab.LessonViewFor(d, tab, code)
		if err != nil {
			return recLab{}, err
		}
		v.Lab.Signals, v.Lab.InPlace = signals(v.Lab.Signals), inPlace
		v.Lab.View, v.Lab.StreamURL = view.Projector, stream
		return recLab{lesson: &v}, nil
	}
	run, err := s.lab.Runs.Get(in)
	if err != nil {
		return recLab{}, err
	}
	lv, err := s.lab.LabViewFor(tabstate.LabLink{Preset: e.State.Preset, Values: e.State.Cfg, Inject: in.Inject, TMs: tabstate.CursorMs(run, e.State.CursorAt(in, run, time.UnixMilli(e.TMs)))}, tab)
	if err != nil {
		return recLab{}, err
	}
	lv.Signals, lv.InPlace = signals(lv.Signals), inPlace
	lv.View, lv.StreamURL, lv.Link = view.Projector, stream, false
	return recLab{lab: &lv}, nil
}

// withoutSignals is a lab's signals without the named ones.
func withoutSignals(signals string, names ...string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(signals), &m); err != nil {
		return signals
	}
	for _, n := range names {
		delete(m, n)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// withReplaySignals adds the player's signals to a lab's initial ones.
func withReplaySignals(signals, speed string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(signals), &m); err != nil {
		m = map[string]json.RawMessage{}
	}
	m["recSpeed"], _ = json.Marshal(speed)
	m["recPlaying"] = json.RawMessage("false")
	m["recAt"] = json.RawMessage("0")
	m["recPct"] = json.RawMessage(`"0"`)
	m["recClock"] = json.RawMessage(`"00:00"`)
	m["recEntry"] = json.RawMessage("0")
	b, _ := json.Marshal(m)
	return string(b)
}

// entryLink is the lab's permalink at an entry's state, its cursor where
// the room's was then ("" for a lesson room: the lesson page has no
// permalink of a step's cursor).
func (s *Recordings) entryLink(e *record.TimelineEntry) string {
	in, d, err := e.State.Inputs(s.lab.Lessons)
	if err != nil || d != nil {
		return ""
	}
	run, err := s.lab.Runs.Get(in)
	if err != nil {
		return ""
	}
	c := e.State.CursorAt(in, run, time.UnixMilli(e.TMs))
	return tabstate.LabURL(run, c)
}
