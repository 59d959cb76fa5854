package room

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/roombus"
	"strings"
	"time"

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

// newWorkshops are the rooms on l over bus (nil: none), with the plans of
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

// A room is a workshop: an instructor drives one lab (or lesson) and the
// attendees' tabs follow it. What the room shares is its state: what a
// permalink holds (the preset or the lesson and its step, the settings,
// the injected faults, the cursor) plus playback (playing, speed, and the
// anchor the cursor is computed from), under a sequence number, the bus's
// revision of the room's key. Latest wins: a follower applies a state only
// if its revision is newer than the one it has, so a burst of slider moves
// can arrive in any grouping and the room still ends where the instructor
// stopped (the "fast navigation destroys sync" complaint of reveal.js
// multiplex, workshops.md). Playback needs no messages: the cursor is
// anchor + (now − anchorAt) × speed on every replica, as in a session.
//
// Only the holder of the room's key publishes; an attendee's commands
// change their own tab alone, and the first one breaks the tab away from
// the room until it rejoins.

// roomCodeAlphabet has no 0/O, 1/I/L or U: a code is read aloud or off a
// projector. Six characters: 30^6 ≈ 7·10^8 codes.
const (
	roomCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
	roomCodeLen      = 6
)

// maxRecordBytes bounds a room record read from the bus; the lab writes
// 1–2 KiB.
const maxRecordBytes = 16 << 10

// maxAnchor bounds a state's anchor (frames): a run has a few hundred.
const maxAnchor = 1 << 20

// newRoomCode is a random code: crypto/rand, by rejection so that every
// character is equally likely.
func newRoomCode() string {
	const n = len(roomCodeAlphabet)
	out := make([]byte, 0, roomCodeLen)
	var buf [16]byte
	for len(out) < roomCodeLen {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if int(b) < 256/n*n && len(out) < roomCodeLen {
				out = append(out, roomCodeAlphabet[int(b)%n])
			}
		}
	}
	return string(out)
}

// normalRoomCode reads a code as someone typed it: any case, spaces or a
// dash between the halves. ok is false if it cannot be a code.
func normalRoomCode(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
	if len(s) != roomCodeLen {
		return s, false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(roomCodeAlphabet, s[i]) < 0 {
			return s, false
		}
	}
	return s, true
}

// newRoomKey is an instructor key: 256 random bits.
func newRoomKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func hashRoomKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// roomRecord is the value of a room's key on the bus: the state, and the
// hash of the instructor key so that any replica can check the key.
type roomRecord struct {
	V       int       `json:"v"`
	KeyHash string    `json:"keyHash"`
	State   roomState `json:"state"`
}

// roomState is what the room shares. Cfg holds the settings set on the
// page over the start (the preset's, or the lesson step's), by control
// name, as a session's Inputs.Values does.
type roomState struct {
	Lesson string             `json:"lesson,omitempty"`
	Step   string             `json:"step,omitempty"`
	Preset string             `json:"preset"`
	Cfg    map[string]float64 `json:"cfg,omitempty"`
	Inject string             `json:"inject,omitempty"`
	// Anchor is the cursor (frames shown) when playback last started or
	// stopped, at AnchorAtMs (Unix milliseconds).
	Anchor     int    `json:"anchor"`
	AnchorAtMs int64  `json:"anchorAt"`
	Playing    bool   `json:"playing"`
	Speed      string `json:"speed"`
	// Predicted: the instructor answered the lesson's prediction, so the
	// room's playback no longer waits at its pause.
	Predicted bool `json:"predicted,omitempty"`
	// The room's tools (questions.go, board.go): the open or
	// revealed question; Lock keeps followers on the room; Summon, raised
	// by "Bring everyone here", rejoins every follower that broke away.
	Question *roomQuestion `json:"question,omitempty"`
	Lock     bool          `json:"lock,omitempty"`
	Summon   int           `json:"summon,omitempty"`
	Spot     *roomSpot     `json:"spot,omitempty"`
	// Plan is the workshop plan the room was started from ("" for none)
	// and Scene the index of the scene it is on (plan.go).
	Plan  string `json:"plan,omitempty"`
	Scene int    `json:"scene,omitempty"`
	// Progress is what the room did at each scene it was shown
	// (plan_ask.go): the board's per-scene lines.
	Progress []sceneMark `json:"progress,omitempty"`
	// Explore is the scene's explore timer, while it runs and after it ran
	// out, until the room moves scene or the instructor stops it
	// (explore.go).
	Explore *roomExplore `json:"explore,omitempty"`
}

// keepTools carries the room's tools over from old to a state read from
// the instructor's tab, which knows nothing of them.
func (st *roomState) keepTools(old *roomState) {
	st.Question, st.Lock, st.Summon, st.Spot = old.Question, old.Lock, old.Summon, old.Spot
	st.Plan, st.Scene, st.Progress, st.Explore = old.Plan, old.Scene, old.Progress, old.Explore
}

// keyMatches reports whether key is the room's instructor key.
func (rec *roomRecord) keyMatches(key string) bool {
	if key == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashRoomKey(key)), []byte(rec.KeyHash)) == 1
}

// decodeRecord reads a room record from the bus. Anything the lab would
// not have written is refused, naming the problem; the caller logs it and
// keeps the room's last good state.
func decodeRecord(b []byte) (roomRecord, error) {
	var rec roomRecord
	if len(b) > maxRecordBytes {
		return rec, fmt.Errorf("the record is %d bytes long (allowed up to %d)", len(b), maxRecordBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("not a room record: %w", err)
	}
	if dec.More() {
		return rec, errors.New("not a room record: data after the JSON object")
	}
	if rec.V != 1 {
		return rec, fmt.Errorf("v: %d is not a record version (allowed 1)", rec.V)
	}
	if _, err := hex.DecodeString(rec.KeyHash); err != nil || len(rec.KeyHash) != 2*sha256.Size {
		return rec, errors.New("keyHash: not a SHA-256 in hex")
	}
	if err := rec.State.Explore.check(); err != nil {
		return rec, err
	}
	return rec, nil
}

// roomInputs checks a state against the lab (its lesson and step, preset,
// settings, faults, speed and anchor) and gives the run's inputs and the
// lesson (nil in the free lab).
func (s *Workshops) roomInputs(st *roomState) (tabstate.Inputs, *lessonbook.Doc, error) {
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
	if st.Anchor < 0 || st.Anchor > maxAnchor || st.AnchorAtMs < 0 {
		return in, nil, &httperr.FieldError{Field: "anchor", Msg: fmt.Sprintf("%d at %d is out of range (allowed 0–%d frames, a time from 1970)", st.Anchor, st.AnchorAtMs, maxAnchor)}
	}
	return in, d, nil
}

// roomStateOf is a tab's state as its room shares it.
func roomStateOf(ts lab.TabState) roomState {
	pb := ts.Playback
	st := roomState{
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

// tabState is the room's state for a tab to take, over the inputs
// roomInputs checked (in, its run, of lesson d): an open question holds
// playback before the moment it asks about.
func (st *roomState) tabState(in tabstate.Inputs, run *tabstate.Run, d *lessonbook.Doc) lab.TabState {
	sp, _ := tabstate.LookupSpeed(st.Speed)
	pb := tabstate.Playback{Anchor: st.Anchor, Playing: st.Playing, Speed: sp}
	if st.AnchorAtMs != 0 {
		pb.AnchorAt = time.UnixMilli(st.AnchorAtMs)
	}
	ts := lab.TabState{In: in, Run: run, Lesson: d, Step: st.Step, Playback: pb, Predicted: st.Predicted}
	if q := st.Question; q != nil && !q.Revealed {
		ts.QuestionHold = q.Hold
	}
	return ts
}
