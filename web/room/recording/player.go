package recording

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/web/addrlimit"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
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

// playerSet is a server's recording players, by tab (the stream makes
// one, the transport's commands find it), and the rooms' recordings they
// share.
type playerSet struct {
	mu sync.Mutex
	m  map[string]*recordingPlayer
	// recordings shares a room's recording between its players (a class
	// reviewing the workshop together holds one copy, not one each): a
	// copy serves while no entry came after it (the last entry's sequence
	// on the bus), at most maxSharedRecordings rooms.
	recMu      sync.Mutex
	recordings map[string]sharedRecording
	// maxStreams bounds the players' open streams (maxPlayerStreams);
	// byAddr counts them by client address (maxPlayerStreamsPerAddr).
	maxStreams int
	byAddr     map[string]int
}

// takeAddr counts a player stream from addr, or refuses it (429) past
// maxPlayerStreamsPerAddr: one visitor must not hold every player of the
// server (issue 34: one tab id took all 256 in 4.9 s). release uncounts it.
func (ps *playerSet) takeAddr(addr string) (release func(), err error) {
	k := addrlimit.Key(addr)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byAddr[k] >= maxPlayerStreamsPerAddr {
		return nil, httperr.WithKind(httperr.KindTooMany, fmt.Errorf("%d recording players are open from your address (allowed %d): close one and try again", ps.byAddr[k], maxPlayerStreamsPerAddr))
	}
	ps.byAddr[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			ps.mu.Lock()
			defer ps.mu.Unlock()
			if ps.byAddr[k]--; ps.byAddr[k] <= 0 {
				delete(ps.byAddr, k)
			}
		})
	}, nil
}

func newPlayerSet() *playerSet {
	return &playerSet{m: map[string]*recordingPlayer{}, recordings: map[string]sharedRecording{}, maxStreams: maxPlayerStreams, byAddr: map[string]int{}}
}

// maxPlayers bounds the players kept; idle ones (no stream) go first.
// maxPlayerStreams bounds the players' open streams on this server (a
// player with a stream is never dropped): each holds a room's recording,
// and a recording of a long workshop is megabytes. Players of one room
// share its recording (playerSet.recordings).
const maxPlayers = 4096

const maxPlayerStreams = 256

// maxPlayerStreamsPerAddr bounds one address's player streams: a class
// reviewing the workshop behind one NAT, 60 or so, not the server's 256.
const maxPlayerStreamsPerAddr = 64

type sharedRecording struct {
	entries []record.TimelineEntry
	last    uint64 // the sequence of the room's last entry on the bus
}

const maxSharedRecordings = 16

// sharedRecordingOf is room code's recording and the bus's sequence of
// its last entry: the shared copy when the room has had no entry since,
// else read from the bus (players never change their entries).
func (s *Recordings) sharedRecordingOf(ctx context.Context, code string) ([]record.TimelineEntry, uint64, error) {
	last, err := s.timeline.Last(ctx, code)
	if err != nil {
		return nil, 0, err
	}
	ps := s.players
	ps.recMu.Lock()
	if c, ok := ps.recordings[code]; ok && c.last == last {
		ps.recMu.Unlock()
		return c.entries, last, nil
	}
	ps.recMu.Unlock()
	entries, err := s.timeline.Read(ctx, code)
	if err != nil {
		return nil, 0, err
	}
	ps.recMu.Lock()
	defer ps.recMu.Unlock()
	if len(ps.recordings) >= maxSharedRecordings {
		clear(ps.recordings)
	}
	ps.recordings[code] = sharedRecording{entries, last}
	return entries, last, nil
}

// liveEvery is how often a player's stream looks for entries its room
// has added since the player read the recording: a workshop still
// running is followed live, without a reload (issue 22). A look is one
// small request to the bus (the last entry's sequence).
const liveEvery = 2 * time.Second

// followLive adds to p the entries its room recorded since p read it.
func (s *Recordings) followLive(ctx context.Context, p *recordingPlayer) {
	p.mu.Lock()
	known := p.last
	p.mu.Unlock()
	// A look in passing: a bus slow to answer must not hold the viewer's
	// stream (the next look comes liveEvery later).
	look, cancel := context.WithTimeout(ctx, liveEvery/2)
	last, err := s.timeline.Last(look, p.code)
	cancel()
	if err != nil || last <= known {
		return
	}
	entries, last, err := s.sharedRecordingOf(ctx, p.code)
	if err != nil || len(entries) == 0 {
		return
	}
	// The new last entry's run is built here, outside the player's lock
	// (its tail needs it; see warm).
	if in, _, err := entries[len(entries)-1].State.Inputs(s.lab.Lessons); err == nil {
		_, _ = s.lab.Runs.Get(in)
	}
	p.extend(entries, last)
}

// extend gives the player the room's longer recording (entries, whose
// last is sequence last on the bus). A viewer who had played to the end
// goes on with the room: from the newest entry's moment, playing.
func (p *recordingPlayer) extend(entries []record.TimelineEntry, last uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if last <= p.last || len(entries) <= len(p.entries) {
		return
	}
	now := p.s.lab.Now()
	atEnd := len(p.entries) > 0 && p.posLocked(now) >= p.end
	p.entries, p.last = entries, last
	for i := len(p.off); i < len(entries); i++ {
		p.off = append(p.off, entries[i].TMs-entries[0].TMs)
		p.prep = append(p.prep, prepared{})
	}
	n := len(entries)
	p.end = p.off[n-1] + p.tail(n-1)
	if atEnd {
		p.at, p.from, p.pin, p.playing, p.shown = p.off[n-1], now, n-1, true, false
	}
	p.touchLocked()
}

// streams counts the players' open streams. Callers hold ps.mu.
func (ps *playerSet) streams() int {
	n := 0
	for _, p := range ps.m {
		n += max(p.streams, 0)
	}
	return n
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
	left := st.TabState(pe.in, run, nil).Left(time.UnixMilli(p.entries[i].TMs))
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

// catchUp brings the tab's session to the player's position: the entry
// in force there, applied as a follower applied it live. It returns when
// the stream must look again (zero: only at a command), and the channel
// the next command closes.
func (p *recordingPlayer) catchUp(sess *lab.Session) (time.Time, <-chan struct{}) {
	p.warm()
	p.mu.Lock()
	defer p.mu.Unlock()
	next := p.catchUpLocked(sess)
	return next, p.changed
}

// warm builds the runs catchUpLocked is about to apply (the entry in
// force now, the one after the last applied) before it takes the
// player's lock: a run of heavy settings takes a while to build, and a
// command or another stream of the player must not wait on it. The lock
// then finds them in the run cache (were one evicted in that moment, it
// is rebuilt there: slower, still right).
func (p *recordingPlayer) warm() {
	p.mu.Lock()
	var ins []tabstate.Inputs
	if len(p.entries) > 0 {
		for _, i := range []int{p.entryAt(p.posLocked(p.s.lab.Now())), p.applied + 1} {
			if i >= 0 && i < len(p.entries) {
				if pe := p.parse(i); pe.err == nil && !p.s.lab.Runs.Has(pe.in) {
					ins = append(ins, pe.in)
				}
			}
		}
	}
	p.mu.Unlock()
	for _, in := range ins {
		_, _ = p.s.lab.Runs.Get(in)
	}
}

func (p *recordingPlayer) catchUpLocked(sess *lab.Session) time.Time {
	now := p.s.lab.Now()
	p.used = now
	if len(p.entries) == 0 {
		return time.Time{}
	}
	if p.playing && p.speed.X == 0 && p.shown && !p.dirty {
		// As fast as possible: the next entry once this one was sent, and
		// after the last the end, where the room's playback stopped.
		if i := p.applied; i+1 < len(p.off) {
			p.at, p.pin = p.off[i+1], i+1
		} else {
			p.at, p.playing, p.dirty = p.end, false, true
		}
		p.shown = false
	}
	v := p.posLocked(now)
	i := p.entryAt(v)
	switch {
	case !p.dirty && p.playing && p.speed.X > 0 && p.applied >= 0 && i > p.applied+1:
		// The stream woke after several entries (a few ms apart in the
		// workshop): each is still shown, one per pass, at its moment.
		i = p.applied + 1
	case p.playing && v >= p.end:
		p.at, p.from, p.playing, p.dirty = p.end, now, false, true
		v = p.end
		i = p.entryAt(v)
	}
	gen := sess.Gen()
	if i != p.applied || p.dirty || gen != p.sessGen {
		at, from := v, now
		if i != p.applied && !p.dirty && p.playing && p.speed.X > 0 {
			// Crossing into the entry: its state as it was at its own
			// moment, its playback running on from there (the stream
			// woke a little late).
			at, from = p.off[i], p.realAt(p.off[i])
		}
		p.apply(sess, i, at, from)
		p.applied, p.dirty, p.shown = i, false, true
		p.sessGen = sess.Gen() // also when the entry could not be applied
	}
	switch {
	case !p.playing:
		return time.Time{}
	case p.speed.X == 0:
		return now
	}
	next := p.end
	if i+1 < len(p.off) {
		next = p.off[i+1]
	}
	return minTime(p.realAt(next), now.Add(replayClockTick))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// apply puts entry i's state on the session at v ms into the workshop,
// as web/room's applyRoom does for a follower: the entry's state, with
// the cursor the room had at that moment, playing on from wall time from at
// the room's speed times the player's. Callers hold p.mu.
func (p *recordingPlayer) apply(sess *lab.Session, i int, v int64, from time.Time) {
	e := &p.entries[i]
	pe := p.prepare(i)
	run, ok := p.runOf(pe)
	if !pe.ok || !ok {
		p.s.lab.Log.Warn("recording: entry not applied", "room", p.code, "entry", i, "err", pe.err)
		return
	}
	ts := e.State.TabState(pe.in, run, pe.d)
	ts.Playback.Anchor = e.State.CursorAt(pe.in, run, time.UnixMilli(p.entries[0].TMs+v))
	ts.Playback.AnchorAt = from
	ts.Playback.Playing = p.playing && p.speed.X > 0 && e.State.Playing
	if ts.Playback.Playing && ts.Playback.Speed.FPS > 0 {
		ts.Playback.Speed.FPS *= p.speed.X
	}
	gen, ok := sess.Follow(ts)
	if !ok {
		// Another lesson than the page's (a plan's scene on another
		// one): the tab moves to it, and the streams patch the lab.
		gen = sess.FollowPage(ts)
		p.pageGen++
	}
	p.sessGen = gen
}

// touchLocked wakes the player's streams. Callers hold mu.
func (p *recordingPlayer) touchLocked() {
	p.dirty = true
	close(p.changed)
	p.changed = make(chan struct{})
}

// command runs a transport command on the player.
func (p *recordingPlayer) command(verb string, r *http.Request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.s.lab.Now()
	v := p.posLocked(now)
	switch verb {
	case "play":
		if v >= p.end {
			v, p.pin = 0, 0 // played to the end: again from the start
		}
		p.playing, p.shown = true, false
	case "pause":
		p.playing = false
	case "speed":
		sp, err := lookupReplaySpeed(r.URL.Query().Get("speed"))
		if err != nil {
			return err
		}
		p.speed = sp
	case "seek":
		raw := r.URL.Query().Get("entry")
		var i int
		if _, err := fmt.Sscan(raw, &i); err != nil || i < 0 || i >= len(p.entries) || fmt.Sprint(i) != raw {
			return httperr.WithKind(httperr.KindBadValue, &httperr.FieldError{Field: "entry", Msg: fmt.Sprintf("%q is not an entry (allowed 0–%d)", httperr.Truncate(raw, 20), len(p.entries)-1)})
		}
		v, p.shown, p.pin = p.off[i], false, i
	default:
		return httperr.WithKind(httperr.KindNotFound, fmt.Errorf("%q is not a player command (allowed play, pause, speed, seek)", httperr.Truncate(verb, 20)))
	}
	p.at, p.from = v, now
	p.touchLocked()
	return nil
}

// openPlayer finds the tab's player, or makes one of the recording.
func (s *Recordings) openPlayer(r *http.Request, code string, sig replaySignals, stream bool) (*recordingPlayer, error) {
	ps, k := s.players, sig.Tab
	ps.mu.Lock()
	if stream && ps.streams() >= ps.maxStreams {
		ps.mu.Unlock()
		return nil, errPlayersFull
	}
	p := ps.m[k]
	if p != nil && p.code == code {
		if stream {
			p.streams++
		}
		ps.mu.Unlock()
		return p, nil
	}
	ps.mu.Unlock()
	entries, last, err := s.sharedRecordingOf(r.Context(), code)
	if err != nil {
		return nil, err
	}
	p, err = s.newPlayer(code, entries, sig)
	if err != nil {
		return nil, err
	}
	p.last = last
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if q := ps.m[k]; q != nil && q.code == code {
		p = q // another request made it first
	} else {
		ps.m[k] = p
		ps.evict(s.lab.Now())
	}
	if stream {
		p.streams++
	}
	return p, nil
}

// closePlayer uncounts a stream.
func (ps *playerSet) closePlayer(p *recordingPlayer) {
	ps.mu.Lock()
	p.streams--
	ps.mu.Unlock()
}

// evict drops players without a stream idle for ten minutes, and over
// maxPlayers any without a stream. Callers hold ps.mu.
func (ps *playerSet) evict(now time.Time) {
	for k, p := range ps.m {
		p.mu.Lock()
		idle := now.Sub(p.used)
		p.mu.Unlock()
		if p.streams <= 0 && (idle > 10*time.Minute || len(ps.m) > maxPlayers) {
			delete(ps.m, k)
		}
	}
}

// recordingCommand handles POST /r/{code}/recording/{verb}.
func (s *Recordings) recordingCommand(w http.ResponseWriter, r *http.Request) {
	code, ok := s.rooms.API(w, r)
	if !ok {
		return
	}
	if !s.lab.Sessions.CmdLimit.Allow(s.lab.PeerAddr(r), s.lab.Now()) {
		lab.TooMany(w, "commands")
		return
	}
	var sig replaySignals
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.lab.MaxBody))
	if err == nil {
		err = json.Unmarshal(body, &sig)
	}
	if err != nil {
		httperr.Write(w, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("body: not a JSON object of signals: %w", err)), httperr.KindMalformed)
		return
	}
	// The tab's player is its browser's alone: a tab id is no credential.
	if err := tabid.Check(r, sig.Tab); err != nil {
		httperr.Write(w, err, httperr.KindMalformed)
		return
	}
	// The player lives where its stream is (a replica's memory): a command
	// that landed elsewhere is answered there (web/tabrelay).
	if s.lab.ForwardCommand(w, r, sig.Tab, body) {
		return
	}
	verb := chi.URLParam(r, "verb")
	if verb == "speed" {
		// Checked before a player is made for it.
		if _, err := lookupReplaySpeed(r.URL.Query().Get("speed")); err != nil {
			httperr.Write(w, err, httperr.KindBadValue)
			return
		}
	}
	p, err := s.openPlayer(r, code, sig, false)
	if err != nil {
		httperr.Write(w, playerError(err), httperr.KindInternal)
		return
	}
	if err := p.command(verb, r); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// recordingStream handles POST /r/{code}/recording/stream: the lab's
// stream (Lab.ServeStream), its session driven by the tab's player.
func (s *Recordings) recordingStream(w http.ResponseWriter, r *http.Request) {
	code, ok := s.rooms.API(w, r)
	if !ok {
		return
	}
	s.lab.ServeStream(w, r, func(r *http.Request, _ *lab.Session) (lab.Follow, error) {
		var rs replaySignals
		_ = lab.StreamSignals(r, &rs) // the lab's stream read and checked the tab's own
		if rs.RecSpeed != "" {
			if _, err := lookupReplaySpeed(rs.RecSpeed); err != nil {
				return nil, err
			}
		}
		release, err := s.players.takeAddr(s.lab.PeerAddr(r))
		if err != nil {
			return nil, err
		}
		p, err := s.openPlayer(r, code, rs, true)
		if err != nil {
			release()
			e := playerError(err) // a bus's failure is the server's: 500
			return nil, httperr.WithKind(httperr.KindOf(e, httperr.KindInternal), e)
		}
		f := s.followPlayer(r.Context(), p)
		f.release = release
		return f, nil
	})
}

// playerFollow is a player stream's Follow: the player's clock drives the
// tab's session, and the room's new entries are looked for every
// liveEvery while the stream lasts.
type playerFollow struct {
	s    *Recordings
	p    *recordingPlayer
	sent playerSent
	stop context.CancelFunc
	// release gives back the stream's place in its address's count.
	release func()
}

func (s *Recordings) followPlayer(ctx context.Context, p *recordingPlayer) *playerFollow {
	ctx, stop := context.WithCancel(ctx)
	f := &playerFollow{s: s, p: p, sent: playerSent{entry: -1}, stop: stop}
	go func() {
		live := time.NewTicker(liveEvery)
		defer live.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-live.C:
				s.followLive(ctx, p) // a new entry wakes the stream (p.changed)
			}
		}
	}()
	return f
}

// CatchUp applies the player's entry in force to the tab; the stream
// wakes when the player changes and at its next entry's moment.
func (f *playerFollow) CatchUp(sess *lab.Session) (<-chan struct{}, time.Time) {
	next, changed := f.p.catchUp(sess)
	return changed, next
}

func (f *playerFollow) Board() <-chan struct{}   { return nil }
func (f *playerFollow) Answers() <-chan struct{} { return nil }

// Send patches what the player shows beside the lab: the entry in
// words, its question, the spotlight and the player's signals.
func (f *playerFollow) Send(sse *datastar.ServerSentEventGenerator, sess *lab.Session) error {
	if err := f.p.sendPage(sse, sess, &f.sent); err != nil {
		return err
	}
	return f.p.send(sse, &f.sent)
}

// sendPage patches the page's lab in place when the entry applied is on
// another page than it shows (pageGen): the lab the recording's page
// draws at that entry, for this tab, its signals patched in order (as
// web/room's repage does for a room's page).
func (p *recordingPlayer) sendPage(sse *datastar.ServerSentEventGenerator, sess *lab.Session, ps *playerSent) error {
	p.mu.Lock()
	gen, i, speed := p.pageGen, p.applied, p.speed.Name
	p.mu.Unlock()
	if gen == ps.page || i < 0 {
		return nil
	}
	ps.page = gen
	l, err := p.s.recordingLab(p.code, &p.entries[i], speed, sess.Tab(), true)
	if err != nil {
		return err
	}
	signals := ""
	if l.lesson != nil {
		signals = l.lesson.Lab.Signals
		err = sse.PatchElementTempl(templates.LessonLab(*l.lesson))
	} else {
		signals = l.lab.Signals
		err = sse.PatchElementTempl(templates.LabPanel(*l.lab))
	}
	if err != nil {
		return err
	}
	return sse.PatchSignals([]byte(signals))
}

func (f *playerFollow) Close() {
	f.stop()
	f.s.players.closePlayer(f.p)
	if f.release != nil {
		f.release()
	}
}

// playerSent is what one stream last sent of the player.
type playerSent struct {
	page    uint64 // the player's pageGen the page shows
	entry   int
	sig     replayPatch
	spot    record.SpotSignal
	spotSet bool
	q       string
	// board is the challenge panel sent (its entries, pick, reference).
	board string
}

// replayPatch is the player's signals as the stream patches them.
type replayPatch struct {
	RecAt      int64  `json:"recAt"`
	RecPct     string `json:"recPct"`
	RecClock   string `json:"recClock"`
	RecEntry   int    `json:"recEntry"`
	RecPlaying bool   `json:"recPlaying"`
	RecSpeed   string `json:"recSpeed"`
}

// send patches what the page shows of the player that changed since the
// last send: its signals (clock, progress, entry, playing, speed), the
// entry in words, the room's question and spotlight then.
func (p *recordingPlayer) send(sse *datastar.ServerSentEventGenerator, ps *playerSent) error {
	p.mu.Lock()
	v := p.posLocked(p.s.lab.Now())
	i := p.applied
	sig := replayPatch{RecAt: v, RecPct: recPct(v, p.end), RecClock: fmtElapsed(v), RecEntry: max(i, 0), RecPlaying: p.playing, RecSpeed: p.speed.Name}
	var e *record.TimelineEntry
	var now view.RecNow
	var upTo []record.TimelineEntry
	if i >= 0 {
		e = &p.entries[i]
		now = p.nowView(i)
		upTo = p.entries[:i+1] // extend appends: a prefix stays as it is
	}
	p.mu.Unlock()
	if e == nil {
		return nil
	}
	if i != ps.entry {
		ps.entry = i
		if err := sse.PatchElementTempl(templates.RecordingNow(now)); err != nil {
			return err
		}
		qv := recQuestionView(p.code, e.State.Question)
		if key := fmt.Sprintf("%+v", qv); key != ps.q {
			ps.q = key
			if err := sse.PatchElementTempl(templates.RecordingQuestion(qv)); err != nil {
				return err
			}
		}
		// The challenge panel shows the submissions recorded up to the
		// entry: a replay's board is the room's at that moment.
		board := view.RoomChallenge{Code: p.code}
		if b := p.s.rooms.Board(p.code, upTo); b != nil {
			board = *b
		}
		if key := fmt.Sprintf("%s|%v|%s|%s", board.ID, board.Entries, board.Spot, board.Reference); key != ps.board {
			ps.board = key
			if err := sse.PatchElementTempl(templates.RoomChallengePanel(board, nil)); err != nil {
				return err
			}
		}
	}
	type spotPatch struct {
		Spot record.SpotSignal `json:"spot"`
	}
	if sp := e.State.Spot.Signal(); !ps.spotSet || sp != ps.spot {
		ps.spot, ps.spotSet = sp, true
		if err := sse.MarshalAndPatchSignals(spotPatch{sp}); err != nil {
			return err
		}
	}
	// The clock shows whole seconds: an unchanged one is not sent again.
	cmp := sig
	cmp.RecAt = ps.sig.RecAt
	if cmp == ps.sig {
		return nil
	}
	ps.sig = sig
	return sse.MarshalAndPatchSignals(sig)
}

func recPct(v, end int64) string {
	if end <= 0 {
		return "100"
	}
	return fmt.Sprintf("%.1f", 100*float64(v)/float64(end))
}

// nowView is entry i in words, for the page. Callers hold mu.
func (p *recordingPlayer) nowView(i int) view.RecNow {
	var prev *record.TimelineEntry
	if i > 0 {
		prev = &p.entries[i-1]
	}
	e := &p.entries[i]
	at := func(*record.TimelineEntry) string {
		pe := p.prepare(i)
		run, ok := p.runOf(pe)
		if !pe.ok || !ok {
			return "an unknown moment"
		}
		return tabstate.FormatMs(tabstate.CursorMs(run, e.State.CursorAt(pe.in, run, time.UnixMilli(e.TMs))))
	}
	return view.RecNow{Index: i, Total: len(p.entries), At: fmtElapsed(p.off[i]), Kind: e.Kind, What: narrate(prev, e, at)}
}

// recQuestionView is the room's question as the player shows it (the
// recording keeps the histogram of a revealed one, not the count of an
// open one).
func recQuestionView(code string, q *record.Question) view.RoomQuestion {
	v := view.RoomQuestion{Code: code, Role: "projector"}
	if q == nil {
		return v
	}
	v.ID, v.Text, v.Choices, v.Revealed, v.Answer, v.Total = q.ID, q.Text, q.Choices, q.Revealed, q.Answer, q.Total
	v.Hist = record.AnswerBars(q.Hist)
	return v
}

var errPlayersFull = errors.New("this server plays as many workshop recordings at once as it may: try again in a minute")

// playerError gives a player's error its kind: a server full of players,
// or a bus not ready yet, is a 503; a bus's failure is the server's.
func playerError(err error) error {
	if errors.Is(err, errPlayersFull) || errors.Is(err, roombus.ErrNotReady) {
		return httperr.WithKind(httperr.KindFull, err)
	}
	return err
}
