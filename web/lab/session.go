package lab

import (
	"container/list"
	"net/http"
	"sync"
	"time"
	"weak"

	"outlierlab/web/addrlimit"
	"outlierlab/web/lessonbook"
	"outlierlab/web/tabstate"
)

// A Session is one browser tab's lab: its inputs, where its cursor is, and
// whether it plays. Nothing else: the frames come from the shared run cache
// and can always be rebuilt from the inputs, and the tab's own signals
// carry the inputs and the cursor, so a lost session (expired, evicted, a
// restarted server) is rebuilt from the next request the tab makes.
//
// Playback is arithmetic, not a goroutine: while playing, the cursor is
// anchor + (now − anchorAt) × speed. A stream that reconnects, or a second
// stream on the same tab, computes the same cursor; pausing freezes it.
type Session struct {
	tab string

	mu sync.Mutex
	in tabstate.Inputs
	// run is the tab's run, held weakly: the run cache (byte-bounded) keeps
	// runs alive, a session does not, so a thousand tabs with distinct heavy
	// settings cost the cache's bound, not a run each. A run the cache let
	// go is rebuilt from in (milliseconds) by runLocked; frames and preset
	// are what the cursor arithmetic needs without it.
	run    weak.Pointer[tabstate.Run]
	frames int
	preset string
	runs   *tabstate.RunCache
	pb     tabstate.Playback
	// seq is the highest command sequence number seen: slider posts race
	// each other over separate connections, and an older value must not
	// win over a newer one.
	seq int64
	// notice is the last rejected input, shown in the page.
	notice string
	// gen counts changes that need a full redraw; inputsGen counts the ones
	// where the server changed the inputs (preset, reset), which the page's
	// signals must then follow.
	gen, inputsGen uint64
	// slid is whether the latest change (gen) is a slider's: a numbered
	// settings post that made a new run (a drag is a run of them; the
	// stream then owes the tables: stream.go's dragGap).
	slid bool
	// changed is closed and replaced at every change: streams wait on it.
	changed  chan struct{}
	lastSeen time.Time
	born     time.Time
	streams  int
	// replaced is closed when another stream of the tab starts here: the
	// tab's last stream is its one (takeStream).
	replaced chan struct{}

	// A lesson tab also knows its lesson, the step whose scenario it has
	// loaded ("" for the lesson's own), and whether the learner has
	// answered the prediction. Until then the cursor goes no further than
	// the playback's hold, the frames up to pause_at.
	lesson    *lessonbook.Doc
	step      string
	predicted bool
	// watchFrom is the earliest cursor since the run last changed: what
	// the learner has watched of this run starts there, so a step ticks
	// only when the cursor moves into its check's frames after the
	// settings changed (lessonbook.Statuses). −1 right after a change,
	// until the cursor is placed on the new run.
	watchFrom int
	// playFrom and playAt are where and when the learner last pressed
	// Play: a play pressed while a changed setting's run was being built
	// is a play of the new run (Session.rerun), as the learner meant it.
	playFrom int
	playAt   time.Time

	// tie is the tab's place in the workshop it presents or follows (a
	// room's, Tie).
	tie Tie
}

// newSession is tab's session on run (of in), whose runs are rebuilt in
// runs when the cache dropped them.
func newSession(tab string, in tabstate.Inputs, run *tabstate.Run, runs *tabstate.RunCache, now time.Time) *Session {
	s := &Session{tab: tab, pb: tabstate.Playback{Speed: tabstate.Speeds[0]}, changed: make(chan struct{}), lastSeen: now, born: now, runs: runs}
	s.setRun(in, run)
	s.watchFrom = 0
	return s
}

// setRun puts in and its run in the session. Callers hold mu.
func (s *Session) setRun(in tabstate.Inputs, run *tabstate.Run) {
	s.in = in
	s.run = weak.Make(run)
	s.frames, s.preset = len(run.Frames), run.Preset
	s.watchFrom = -1 // setCursor places it
}

// runLocked is the session's run, rebuilt through the cache if the cache
// let it go. The inputs built once, so they build again (the engine is
// deterministic); should that ever fail, the tab gets an empty run rather
// than a crash. Callers hold mu.
func (s *Session) runLocked() *tabstate.Run {
	if r := s.run.Value(); r != nil {
		return r
	}
	r, err := s.runs.Get(s.in)
	if err != nil {
		r = &tabstate.Run{Inputs: s.in, Preset: s.preset, HostIndex: map[string]int{}}
	}
	s.run = weak.Make(r)
	s.frames = len(r.Frames)
	return r
}

// cursorAt is the number of frames revealed at now.
func (s *Session) cursorAt(now time.Time) int { return s.pb.CursorAt(now, s.frames) }

// held reports whether the cursor waits at the hold for the learner's
// prediction: played, stepped or scrubbed there, it goes no further.
func (s *Session) held(now time.Time) bool { return s.pb.Held(now, s.frames) }

// rehold places the hold for the current run: at the lesson's pause_at,
// on the scenario its prediction is about, until the learner answers.
// Callers hold mu.
func (s *Session) rehold() {
	if s.lesson == nil || s.predicted {
		s.pb.Hold = 0 // lessonHold's first answer, without the run
		return
	}
	s.pb.Hold = lessonHold(s.lesson, s.predicted, s.runLocked())
	if s.pb.Hold > 0 {
		s.pb.Anchor = min(s.pb.Anchor, s.pb.Hold)
	}
}

// notePredicted records the learner's answer: the hold goes, and playback
// held there goes on. Callers hold mu.
func (s *Session) notePredicted(now time.Time) {
	if s.predicted {
		return
	}
	c := s.cursorAt(now)
	s.predicted = true
	s.rehold()
	s.setCursor(c, now)
	s.touch()
}

// isPlaying is playing, not yet at the end and not held.
func (s *Session) isPlaying(now time.Time) bool { return s.pb.IsPlaying(now, s.frames) }

// setCursor stops or re-anchors playback at c; until the learner answers
// the prediction, no move (step, scrub, a jump) goes past its hold.
// Callers hold mu.
func (s *Session) setCursor(c int, now time.Time) {
	s.pb = s.pb.At(c, now, s.frames)
	// Playback only moves the cursor forward from its anchor: the
	// earliest cursor is always an anchor set here.
	if s.watchFrom < 0 || s.pb.Anchor < s.watchFrom {
		s.watchFrom = s.pb.Anchor
	}
}

// watchedFrom is watchFrom, or the cursor for a run whose cursor was never
// placed (nothing watched yet). Callers hold mu.
func (s *Session) watchedFrom(now time.Time) int {
	if s.watchFrom < 0 {
		return s.cursorAt(now)
	}
	return s.watchFrom
}

// countStream counts a stream in (d = 1) or out (d = −1).
func (s *Session) countStream(d int) {
	s.mu.Lock()
	s.streams += d
	s.mu.Unlock()
}

// touch marks a change: every stream on the tab wakes up and redraws.
// Callers hold mu.
func (s *Session) touch() {
	s.gen++
	s.slid = false
	close(s.changed)
	s.changed = make(chan struct{})
}

// snapshot is what a stream needs to render, read under the lock once.
type snapshot struct {
	run       *tabstate.Run
	in        tabstate.Inputs
	slid      bool // the change is a slider's (Session.slid)
	cursor    int
	playing   bool
	speed     tabstate.Speed
	notice    string
	gen       uint64
	inputsGen uint64
	changed   <-chan struct{}
	next      time.Time // when the cursor moves next; zero when paused
	// lesson is the tab's lesson (nil in the free lab), step the step whose
	// scenario is loaded, held whether playback waits for the prediction.
	lesson *lessonbook.Doc
	step   string
	held   bool
	// watchFrom is the session's watchFrom: where what the learner
	// watched of this run begins.
	watchFrom int
	// room: the tab is in a workshop, whose page keeps its own address.
	room bool
}

func (s *Session) snapshot(now time.Time) snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSeen = now
	snap := snapshot{
		run: s.runLocked(), in: s.in, cursor: s.cursorAt(now), playing: s.isPlaying(now),
		speed: s.pb.Speed, notice: s.notice, gen: s.gen, inputsGen: s.inputsGen, changed: s.changed, slid: s.slid,
		lesson: s.lesson, step: s.step, held: s.held(now), room: s.tie != nil,
		watchFrom: s.watchedFrom(now),
	}
	if snap.playing && s.pb.Speed.FPS > 0 {
		snap.next = s.pb.NextFrameAt(now)
	}
	return snap
}

// SessionStore holds the sessions, bounded in number and in idle time: a
// room of fifty laptops is fine, a crawler opening a million tabs is not.
// A session with an open stream is never evicted: the stream holds it
// anyway, and a command on an evicted one would redraw nothing (issue 15,
// defect 3). Neither is a new session within its grace: a command that
// rebuilt a tab's session must still find it when the tab's stream comes
// back. New sessions and commands are rate-limited per client address.
type SessionStore struct {
	mu    sync.Mutex
	max   int
	idle  time.Duration
	grace time.Duration
	order *list.List // front: most recently used; values are *Session
	byTab map[string]*list.Element

	newLim, CmdLimit *addrlimit.Limiter
	// keepalive, when set (tests), replaces the streams' 15 s comment period.
	keepalive time.Duration
}

// Per client address: a room behind one NAT opens fifty tabs at once and
// drags sliders (a post every 50 ms or so at most per tab).
const (
	sessionGrace             = 30 * time.Second
	newPerMinute             = 600
	newBurst                 = 200
	DefaultCommandsPerMinute = 6000
	cmdsBurst                = 1000
	hardCapOverMax           = 2 // non-streaming sessions never exceed max × this
)

func newSessionStore(max int, idle time.Duration) *SessionStore {
	return &SessionStore{
		max: max, idle: idle, grace: sessionGrace, order: list.New(), byTab: map[string]*list.Element{},
		newLim: addrlimit.New(newPerMinute, newBurst), CmdLimit: addrlimit.New(DefaultCommandsPerMinute, cmdsBurst),
	}
}

// Get finds a tab's session and marks it used.
func (st *SessionStore) Get(tab string) *Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	el, ok := st.byTab[tab]
	if !ok {
		return nil
	}
	st.order.MoveToFront(el)
	return el.Value.(*Session)
}

// put adds a session (or finds the one another request added first) and
// evicts what is over the limits. It returns nil when s could not be kept
// (every other session streams or is new, far over the limit): the caller
// must then not acknowledge a command it would lose.
func (st *SessionStore) put(s *Session, now time.Time) *Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el, ok := st.byTab[s.tab]; ok {
		st.order.MoveToFront(el)
		return el.Value.(*Session)
	}
	st.byTab[s.tab] = st.order.PushFront(s)
	st.evict(now)
	if _, ok := st.byTab[s.tab]; !ok {
		return nil
	}
	return s
}

// evict drops idle sessions, then, while over the limit, the least recently
// used ones without an open stream and past their grace; far over the
// limit, the new ones too. Streaming sessions stay. Callers hold mu.
func (st *SessionStore) evict(now time.Time) {
	type state struct {
		busy       bool
		seen, born time.Time
	}
	of := func(s *Session) state {
		s.mu.Lock()
		defer s.mu.Unlock()
		return state{s.streams > 0, s.lastSeen, s.born}
	}
	sweep := func(drop func(state) bool) {
		for el := st.order.Back(); el != nil; {
			prev := el.Prev()
			if x := of(el.Value.(*Session)); !x.busy && drop(x) {
				st.order.Remove(el)
				delete(st.byTab, el.Value.(*Session).tab)
			}
			el = prev
		}
	}
	sweep(func(x state) bool {
		return now.Sub(x.seen) > st.idle || st.order.Len() > st.max && now.Sub(x.born) >= st.grace
	})
	if st.order.Len() > st.max*hardCapOverMax {
		sweep(func(state) bool { return st.order.Len() > st.max })
	}
}

// len is the number of sessions held.
func (st *SessionStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.order.Len()
}

// PeerAddr is the address a request's rate limits count against: the
// peer, or the visitor behind a trusted proxy (Options.Proxies).
func (s *Lab) PeerAddr(r *http.Request) string { return s.Proxies.Client(r) }

// SetClientLimits replaces the per-address limits on new tabs and on
// commands, per minute (the burst is a third of a minute's worth). The
// load test, whose every client is on the loopback address, lifts them.
func (s *Lab) SetClientLimits(newPerMinute, cmdsPerMinute int) {
	s.Sessions.newLim = addrlimit.New(newPerMinute, max(newPerMinute/3, 1))
	s.Sessions.CmdLimit = addrlimit.New(cmdsPerMinute, max(cmdsPerMinute/3, 1))
}

// Count is the sessions held.
func (st *SessionStore) Count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byTab)
}

// Streams is the number of the tab's streams open on this replica.
func (s *Session) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams
}

// takeStream makes the caller's stream the tab's one: the channel it
// returns is closed when another takes its place.
func (s *Session) takeStream() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replaced != nil {
		close(s.replaced)
	}
	s.replaced = make(chan struct{})
	return s.replaced
}

// SetStreamsPerAddress replaces the bound on one address's streams (tests
// whose many clients share the loopback address lift it).
func (s *Lab) SetStreamsPerAddress(n int) {
	s.addrMu.Lock()
	defer s.addrMu.Unlock()
	s.streamsPerAddr = n
}
