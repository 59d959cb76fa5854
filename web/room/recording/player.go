package recording

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"outlierlab/web/httperr"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
)

// The recording player. /r/CODE/recording replays a workshop: the page
// is the room's lab in the projector view, and its stream is a room
// follower's whose states come from the recording's entries instead of
// the live hub. Each entry's state is applied to the tab's session
// (Session.Follow), as web/room's applyRoom does for a follower, at the
// entry's time on the player's clock; the cursor is the one the room had
// at that moment (record.State.CursorAt), so the charts redraw exactly
// what a follower drew live (the engine is deterministic). Between entries
// the room's own playback runs on, sped up by the player's speed.
//
//	POST /r/{code}/recording/stream           the player's stream
//	POST /r/{code}/recording/{play|pause}     the transport
//	POST /r/{code}/recording/speed?speed=8    1, 2, 4, 8, 30 or max
//	POST /r/{code}/recording/seek?entry=N     jump to entry N (from 0)

// replaySpeed is how many seconds of the workshop pass per second of
// replay; X 0 is "as fast as possible": every entry is shown once, one
// after the other, with no wait between them.
type replaySpeed struct {
	Name  string
	X     float64
	Label string
}

var replaySpeeds = []replaySpeed{
	{"1", 1, "1×"}, {"2", 2, "2×"}, {"4", 4, "4×"}, {"8", 8, "8×"}, {"30", 30, "30×"}, {"max", 0, "fastest"},
}

// defaultReplaySpeed: a workshop of an hour replays in a quarter of one.
const defaultReplaySpeed = "4"

func lookupReplaySpeed(name string) (replaySpeed, error) {
	names := make([]string, len(replaySpeeds))
	for i, sp := range replaySpeeds {
		if sp.Name == name {
			return sp, nil
		}
		names[i] = sp.Name
	}
	return replaySpeed{}, httperr.WithKind(httperr.KindBadValue, &httperr.FieldError{Field: "speed", Msg: fmt.Sprintf("%q is not a replay speed (allowed %s)", httperr.Truncate(name, 20), strings.Join(names, ", "))})
}

// maxReplayTail bounds how long the player plays on after the last entry
// (the room's playback after a reveal runs to the end of its run).
const maxReplayTail = 10 * time.Minute

// replayClockTick is how often a playing player's clock and progress bar
// move on the page when no frame or entry moves them.
const replayClockTick = 500 * time.Millisecond

// recordingPlayer is one tab's player: the recording, its clock (a
// position in the workshop, in ms from its first entry), and what it last
// applied to the tab's session.
type recordingPlayer struct {
	s    *Recordings
	code string

	mu      sync.Mutex
	entries []record.TimelineEntry
	off     []int64    // each entry's offset from the first (ms)
	prep    []prepared // each entry's inputs and run, made when first applied
	end     int64      // the recording's length (ms): the last entry and its tail
	last    uint64     // the bus's sequence of the last entry held (followLive)
	// The clock is arithmetic, as a session's cursor: at (ms) when
	// playback last started or stopped, at the wall time from.
	at      int64
	from    time.Time
	playing bool
	speed   replaySpeed
	// applied is the entry applied to the session (-1: none yet); dirty
	// asks for it again (a seek, a pause, a speed); sessGen is the
	// session's gen after it, so that a lab command on the tab (a key
	// pressed on the page) is undone; shown: the applied entry has been
	// sent (the "as fast as possible" speed moves on only then).
	applied int
	// pin is the entry shown at its own moment when several share it
	// (entries in the same millisecond): a seek, or the fastest speed,
	// names the entry, not only its time. -1: the last at the time.
	pin     int
	dirty   bool
	sessGen uint64
	shown   bool
	// pageGen counts the entries applied on another page than the last
	// (another lesson, or the free lab): each stream then patches its lab
	// in place to it (playerSent.page).
	pageGen uint64
	// changed is closed and replaced at every command: the streams wake.
	changed chan struct{}
	streams int
	used    time.Time
}

// prepared is an entry's state checked against the lab: its inputs and
// lesson. Its run is not kept here but fetched from the run cache when
// needed (runOf): a player of a long workshop would otherwise hold a run
// per entry outside the cache's byte bound (issue 15).
type prepared struct {
	parsed bool // in, d and err are set
	ok     bool
	err    error
	in     tabstate.Inputs
	d      *lessonbook.Doc
}

// runOf is a prepared entry's run, from the cache (rebuilt if it went).
func (p *recordingPlayer) runOf(pe *prepared) (*tabstate.Run, bool) {
	run, err := p.s.lab.Runs.Get(pe.in)
	return run, err == nil
}

// replaySignals are the player's signals: the stream keeps them, so that
// a stream that reconnects (or a player made by a command) resumes where
// the page was.
type replaySignals struct {
	Tab        string `json:"tab"`
	RecSpeed   string `json:"recSpeed"`
	RecPlaying bool   `json:"recPlaying"`
	RecAt      int64  `json:"recAt"`
}

// newPlayer makes a player of entries, paused at at (ms).
func (s *Recordings) newPlayer(code string, entries []record.TimelineEntry, sig replaySignals) (*recordingPlayer, error) {
	sp, err := lookupReplaySpeed(orDefault(sig.RecSpeed, defaultReplaySpeed))
	if err != nil {
		return nil, err
	}
	p := &recordingPlayer{s: s, code: code, entries: entries, speed: sp, applied: -1, pin: -1, changed: make(chan struct{}), used: s.lab.Now()}
	p.off = make([]int64, len(entries))
	p.prep = make([]prepared, len(entries))
	for i := range entries {
		p.off[i] = entries[i].TMs - entries[0].TMs
	}
	if n := len(entries); n > 0 {
		p.end = p.off[n-1] + p.tail(n-1)
	}
	p.at = min(max(sig.RecAt, 0), p.end)
	p.playing = sig.RecPlaying && p.at < p.end
	p.from = s.lab.Now()
	return p, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// tail is how long the room played on after entry i, its last: until
// its run ended (or its question's hold), at the room's speed; 0 if it
// was paused or played instantly.
func (p *recordingPlayer) tail(i int) int64 {
	pe := p.prepare(i)
	st := &p.entries[i].State
	sp, _ := tabstate.LookupSpeed(st.Speed)
	if !pe.ok || !st.Playing || sp.FPS == 0 {
		return 0
	}
	run, ok := p.runOf(pe)
	if !ok {
		return 0
	}
	left := st.Snapshot(pe.in, run, nil).Left(time.UnixMilli(p.entries[i].TMs))
	d := time.Duration(float64(max(left, 0)) / sp.FPS * float64(time.Second))
	return min(d, maxReplayTail).Milliseconds()
}

// prepare checks entry i's state against the lab and gets its run.
// Callers hold mu (or own p alone).
func (p *recordingPlayer) prepare(i int) *prepared {
	pe := p.parse(i)
	if pe.ok || pe.err != nil {
		return pe
	}
	_, pe.err = p.s.lab.Runs.Get(pe.in)
	pe.ok = pe.err == nil
	return pe
}

// parse checks entry i's state against the lab (no run). Callers hold mu.
func (p *recordingPlayer) parse(i int) *prepared {
	pe := &p.prep[i]
	if !pe.parsed {
		pe.in, pe.d, pe.err = p.entries[i].State.Inputs(p.s.lab.Lessons)
		pe.parsed = true
	}
	return pe
}

// posLocked is the player's position at now (ms into the workshop).
func (p *recordingPlayer) posLocked(now time.Time) int64 {
	if !p.playing || p.speed.X == 0 {
		return p.at
	}
	v := p.at + int64(float64(now.Sub(p.from))*p.speed.X/float64(time.Millisecond))
	return min(v, p.end)
}

// realAt is the wall time at which a playing player reaches v.
func (p *recordingPlayer) realAt(v int64) time.Time {
	return p.from.Add(time.Duration(float64(v-p.at) / p.speed.X * float64(time.Millisecond)))
}

// indexAt is the entry in force at v: the last at or before it.
func (p *recordingPlayer) indexAt(v int64) int {
	i := 0
	for i+1 < len(p.off) && p.off[i+1] <= v {
		i++
	}
	return i
}

// entryAt is the entry shown at v: the pinned one at its own moment, else
// the last at or before v.
func (p *recordingPlayer) entryAt(v int64) int {
	if p.pin >= 0 && p.off[p.pin] == v {
		return p.pin
	}
	return p.indexAt(v)
}
