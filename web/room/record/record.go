// Package record is a workshop room as the bus holds it: what every replica
// reads and the recording replays, with no behaviour of a room's own
// (web/room serves the rooms). A room is a workshop: an instructor drives
// one lab (or lesson) and the attendees' tabs follow it. What the room
// shares is its state: what a permalink holds (the preset or the lesson and
// its step, the settings, the injected faults, the cursor) plus playback
// (playing, speed, and the anchor the cursor is computed from), under a
// sequence number, the bus's revision of the room's key. Latest wins: a
// follower applies a state only if its revision is newer than the one it
// has, so a burst of slider moves can arrive in any grouping and the room
// still ends where the instructor stopped (the "fast navigation destroys
// sync" complaint of reveal.js multiplex, workshops.md). Playback needs no
// messages: the cursor is anchor + (now − anchorAt) × speed on every
// replica, as in a session.
//
// Only the holder of the room's key publishes; an attendee's commands
// change their own tab alone, and the first one breaks the tab away from
// the room until it rejoins.
package record

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
	"slices"
	"strings"
	"time"

	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// CodeAlphabet has no 0/O, 1/I/L or U: a code is read aloud or off a
// projector. Six characters: 30^6 ≈ 7·10^8 codes.
const (
	CodeAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
	CodeLen      = 6
)

// MaxBytes bounds a room record read from the bus; the lab writes
// 1–2 KiB.
const MaxBytes = 16 << 10

// MaxAnchor bounds a state's anchor (frames): a run has a few hundred.
const MaxAnchor = 1 << 20

// NewCode is a random code: crypto/rand, by rejection so that every
// character is equally likely.
func NewCode() string {
	const n = len(CodeAlphabet)
	out := make([]byte, 0, CodeLen)
	var buf [16]byte
	for len(out) < CodeLen {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if int(b) < 256/n*n && len(out) < CodeLen {
				out = append(out, CodeAlphabet[int(b)%n])
			}
		}
	}
	return string(out)
}

// NormalCode reads a code as someone typed it: any case, spaces or a
// dash between the halves. ok is false if it cannot be a code.
func NormalCode(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
	if len(s) != CodeLen {
		return s, false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(CodeAlphabet, s[i]) < 0 {
			return s, false
		}
	}
	return s, true
}

// NewKey is an instructor key: 256 random bits.
func NewKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Record is the value of a room's key on the bus: the state, and the
// hash of the instructor key so that any replica can check the key.
type Record struct {
	V       int    `json:"v"`
	KeyHash string `json:"keyHash"`
	State   State  `json:"state"`
	// Rev is the bus's revision of the record, where it was read (not
	// stored: the bus numbers its records).
	Rev uint64 `json:"-"`
}

// KeyMatches reports whether key is the room's instructor key.
func (rec *Record) KeyMatches(key string) bool {
	if key == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashKey(key)), []byte(rec.KeyHash)) == 1
}

// State is what the room shares. Cfg holds the settings set on the
// page over the start (the preset's, or the lesson step's), by control
// name, as a session's Inputs.Values does.
type State struct {
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
	// The room's tools (web/room/questions.go, board.go): the open or
	// revealed question; Lock keeps followers on the room; Summon, raised
	// by "Bring everyone here", rejoins every follower that broke away.
	Question *Question `json:"question,omitempty"`
	Lock     bool      `json:"lock,omitempty"`
	Summon   int       `json:"summon,omitempty"`
	Spot     *Spot     `json:"spot,omitempty"`
	// Plan is the workshop plan the room was started from ("" for none)
	// and Scene the index of the scene it is on (web/room/scenes).
	Plan  string `json:"plan,omitempty"`
	Scene int    `json:"scene,omitempty"`
	// Progress is what the room did at each scene it was shown
	// (web/room/scenes): the board's per-scene lines.
	Progress []SceneMark `json:"progress,omitempty"`
	// Explore is the scene's explore timer, while it runs and after it ran
	// out, until the room moves scene or the instructor stops it
	// (explore.go).
	Explore *Explore `json:"explore,omitempty"`
	// IDsPerAddress is how many attendee identities the room gives one
	// client address, as its instructor set it (0: the server's
	// default; identity.go).
	IDsPerAddress int `json:"idsPerAddress,omitempty"`
	// Pick is the challenge scene's spotlit submission and revealed
	// reference (web/room: submissions.go); a new scene starts without.
	Pick *ChallengePick `json:"pick,omitempty"`
}

// MaxIDsPerAddress bounds a room's identities per client address: as
// many as one question takes answers.
const MaxIDsPerAddress = 10000

// Mark is scene i's mark, added if the room had none; the slice is the
// state's own from here on (a state read from the hub shares its arrays).
func (st *State) Mark(i int) *SceneMark {
	st.Progress = slices.Clone(st.Progress)
	for j := range st.Progress {
		if st.Progress[j].Scene == i {
			return &st.Progress[j]
		}
	}
	st.Progress = append(st.Progress, SceneMark{Scene: i})
	return &st.Progress[len(st.Progress)-1]
}

// MarkOf is scene i's mark as the state has it (nil: never shown).
func (st *State) MarkOf(i int) *SceneMark {
	for j := range st.Progress {
		if st.Progress[j].Scene == i {
			return &st.Progress[j]
		}
	}
	return nil
}

func (st *State) MarkVisited(i int) { st.Mark(i) }

// MarkAsked notes a scene's question opened; asked again, its last
// reveal's counts go, as the answers do.
func (st *State) MarkAsked(q *Question) {
	if q.Scene == nil {
		return
	}
	m := st.Mark(*q.Scene)
	*m = SceneMark{Scene: m.Scene, Asked: true}
}

// KeepTools carries the room's tools over from old to a state read from
// the instructor's tab, which knows nothing of them.
func (st *State) KeepTools(old *State) {
	st.Question, st.Lock, st.Summon, st.Spot = old.Question, old.Lock, old.Summon, old.Spot
	st.Plan, st.Scene, st.Progress, st.Explore = old.Plan, old.Scene, old.Progress, old.Explore
	st.IDsPerAddress, st.Pick = old.IDsPerAddress, old.Pick
}

// Snapshot is the room's state for a tab to take, over the inputs
// Inputs checked (in, its run, of lesson d): an open question holds
// playback before the moment it asks about.
func (st *State) Snapshot(in tabstate.Inputs, run *tabstate.Run, d *lessonbook.Doc) lab.Snapshot {
	sp, _ := tabstate.LookupSpeed(st.Speed)
	pb := tabstate.Playback{Anchor: st.Anchor, Playing: st.Playing, Speed: sp}
	if st.AnchorAtMs != 0 {
		pb.AnchorAt = time.UnixMilli(st.AnchorAtMs)
	}
	// A plan's room holds only for its own question, never for the
	// lesson's prediction: the scene's cursor and play state are the
	// room's, and Reveal plays on (issue 33). Each attendee still answers
	// the lesson's prediction on their page. A room on a lesson alone
	// waits at the prediction until the instructor answers it.
	ts := lab.Snapshot{In: in, Run: run, Lesson: d, Step: st.Step, Playback: pb, Predicted: st.Predicted || st.Plan != ""}
	if q := st.Question; q != nil && !q.Revealed && (q.Scene == nil || *q.Scene == st.Scene) {
		ts.QuestionHold = q.Hold // a moment of this run: another scene's question holds nothing here
	}
	return ts
}

// Decode reads a room record from the bus. Anything the lab would
// not have written is refused, naming the problem; the caller logs it and
// keeps the room's last good state.
func Decode(b []byte) (Record, error) {
	var rec Record
	if len(b) > MaxBytes {
		return rec, fmt.Errorf("the record is %d bytes long (allowed up to %d)", len(b), MaxBytes)
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
	if n := rec.State.IDsPerAddress; n < 0 || n > MaxIDsPerAddress {
		return rec, fmt.Errorf("idsPerAddress: %d is out of range (allowed 0–%d)", n, MaxIDsPerAddress)
	}
	return rec, nil
}
