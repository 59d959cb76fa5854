package room

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/addrlimit"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/lessonbook"
	"outlierlab/web/room/record"
	"outlierlab/web/room/recording"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
)

// Limits bounds what one replica does for rooms. Zero values pick the
// defaults.
type Limits struct {
	// MaxRooms is how many rooms this replica serves at once (default 500):
	// rooms it creates, or whose pages and streams it serves.
	MaxRooms int
	// MaxAttendees is how many attendee and projector streams one room may
	// have on this replica (default 500).
	MaxAttendees int
	// AttendeesPerAddress is how many of those streams may come from one
	// client address (default 100: a class of fifty behind one NAT, with a
	// second tab each, fits; one script does not fill the room).
	AttendeesPerAddress int
	// JoinsPerMinute and JoinBurst rate-limit room pages per client
	// address (defaults 60 and 60, the burst pageLoads times JoinBurst, for
	// reloads: a class behind one NAT joins at once, a script guessing
	// codes does not get far), and every other request of a room's address
	// (/r/CODE/...) whose code names no room: guessing codes on the room
	// API is as slow as on its pages. New attendee identities have a
	// budget of their own (IDsPerAddress).
	JoinsPerMinute, JoinBurst int
	// RoomsPerHour is how many rooms one client address may make in an
	// hour (default 10, at once if it likes): an instructor trying plans
	// out, a few instructors behind one NAT. The deployment as a whole
	// makes new rooms only while the rooms' bucket is less than half full
	// (quota.go).
	RoomsPerHour int
	// IDsPerAddress is how many attendee identities a room gives one
	// client address (default 60: a class of fifty behind one NAT, and
	// some who join twice), unless its instructor set another
	// (identity.go).
	IDsPerAddress int
	// UnusedTTL is how long a room lives that nobody has used (default
	// 1 h): no attendee has opened its page and its instructor has
	// changed nothing. Its first use keeps it as long as any room (the
	// bucket's TTL, 12 h after its last change).
	UnusedTTL time.Duration
	// Submissions is how many attendees' submissions one room keeps for
	// one challenge (default 1000, twice MaxAttendees' default: a room
	// on two replicas); an attendee's new one replaces its last.
	Submissions int
}

// DefaultIDsPerAddress is Limits.IDsPerAddress's default.
const DefaultIDsPerAddress = 60

// pageLoads is how many room pages one address may load at once, in
// JoinBursts: a class's joins and two reloads each. Issue 33: fifty
// attendees behind one NAT joined, then reloaded within 90 s (a second
// wave), and 4 got 429 from a bucket of JoinBurst (60) refilled at
// JoinsPerMinute (one a second). With three bursts (180 by default) a
// class of fifty loads its pages three times at once and still has 30
// left; the rate stays JoinsPerMinute, so a script past the burst gets a
// page a second. A page is a render of a cached run and a read of the
// room this replica already watches, and a new identity is still limited
// on its own (a reload keeps its cookie): 180 pages are no flood.
const pageLoads = 3

func (l *Limits) defaults() {
	if l.MaxRooms <= 0 {
		l.MaxRooms = 500
	}
	if l.MaxAttendees <= 0 {
		l.MaxAttendees = 500
	}
	if l.AttendeesPerAddress <= 0 {
		l.AttendeesPerAddress = 100
	}
	if l.JoinsPerMinute <= 0 {
		l.JoinsPerMinute = 60
	}
	if l.JoinBurst <= 0 {
		l.JoinBurst = 60
	}
	if l.RoomsPerHour <= 0 {
		l.RoomsPerHour = 10
	}
	if l.UnusedTTL <= 0 {
		l.UnusedTTL = time.Hour
	}
	if l.IDsPerAddress <= 0 {
		l.IDsPerAddress = DefaultIDsPerAddress
	}
	if l.Submissions <= 0 {
		l.Submissions = 1000
	}
	// JetStream's TTLs are whole seconds, one at least.
	l.UnusedTTL = max(l.UnusedTTL.Round(time.Second), time.Second)
}

var (
	errRoomNotFound = errors.New("no such room")
	errRoomsFull    = errors.New("this server serves as many rooms as it may")
	errRoomFull     = errors.New("this room has as many attendees on this server as it may")
	errAddrFull     = errors.New("too many attendee streams of this room from your address")
)

// hubIdle is how long a replica keeps watching a room nobody streams any
// more: a reloading page or a reconnecting stream finds it still open.
const hubIdle = 30 * time.Second

// roomSet is one replica's rooms: a hub per room it serves, each one
// subscription to the bus (a watch of the room's key) fanned out to the
// room's streams here.
type roomSet struct {
	s   *Workshops
	bus *roombus.Bus
	lim Limits
	log *slog.Logger
	// creates limits room creation, pages room pages, per address.
	creates, pages *addrlimit.Limiter
	// guesses limits the requests for codes that name no room (limit.go).
	guesses *addrlimit.Limiter
	// changes limits the key holder's changes of a room through the
	// rooms' API, per room (quota.go).
	changes *addrlimit.Limiter
	// quota is what this replica knows of the bucket's room for new rooms
	// and of the rooms already used (quota.go).
	quota quota

	mu   sync.Mutex
	hubs map[string]*roomHub
	// timeline is the rooms' recordings on the bus (recordings.go).
	timeline *recording.Timeline
}

func newRoomSet(s *Workshops, bus *roombus.Bus, lim Limits, log *slog.Logger) *roomSet {
	if bus == nil {
		return nil
	}
	lim.defaults()
	return &roomSet{s: s, bus: bus, lim: lim, log: log, hubs: map[string]*roomHub{},
		creates: addrlimit.NewPer(lim.RoomsPerHour, time.Hour, lim.RoomsPerHour), pages: addrlimit.New(lim.JoinsPerMinute, pageLoads*lim.JoinBurst),
		guesses:  addrlimit.New(lim.JoinsPerMinute, lim.JoinBurst),
		changes:  addrlimit.New(changesPerSecond*60, changesBurst),
		timeline: recording.NewTimeline(bus, s.lab.Now, log)}
}

// roomHub is a room as one replica sees it: its latest good record, and a
// channel closed (and replaced) at each new one, which the room's streams
// wait on.
type roomHub struct {
	set   *roomSet
	code  string
	ready chan struct{} // closed once the watch has given the current record, or found none
	err   error         // set before ready is closed
	stop  context.CancelFunc

	mu  sync.Mutex
	now roomNow
	// answers are the room's answers by question and attendee, as the bus
	// has them (answers.go); answersReady is closed once the watch has
	// given the ones already there; answersNext is closed (and replaced)
	// when new answers change the question panel, at most every
	// answerWakeEvery (answersWake is set while that wake is pending).
	answers      map[string]map[string]record.Answer
	answersReady chan struct{}
	answersNext  chan struct{}
	answersWake  bool
	// subs are the room's submissions by challenge and attendee, as the
	// bus has them (submissions.go); a change wakes the streams as an
	// answer does (answersNext).
	subs map[string]map[string]subEntry
	// subsReady is closed once the watch has given the submissions
	// already on the bus.
	subsReady chan struct{}
	// seen are the questions the room's state has asked, whose answers
	// are forgotten once it asks another.
	seen map[string]bool
	// board is the room's attendees by presence key (presence.go),
	// boardGen counts its changes (and those of ids).
	board    map[string]presence
	boardGen uint64
	// ids is how many attendee identities each client address took in
	// the room, by the address's tag (identity.go).
	ids map[string]int
	// boardNext is closed at the board's next change. Only the
	// instructor's streams wait on it: an attendee joining, leaving or
	// answering changes nothing on a follower's page but the answers'
	// count (watchAnswers wakes every stream for that), and a room of 500
	// must not wake 500 streams per arrival.
	boardNext chan struct{}

	// refs and attendees are guarded by set.mu; byAddr counts the
	// attendee streams by client address.
	refs, attendees int
	byAddr          map[string]int
	// pub orders the instructor's publications: the states are put on the
	// bus in the order they were read from the session.
	pub sync.Mutex
}

// open finds or starts the room's hub and holds it until release. An
// attendee (a follower or projector stream, from is its client address)
// counts toward the room's limits on this replica, in all and per address;
// from is "" for what is not an attendee's stream.
func (set *roomSet) open(ctx context.Context, code string, from string) (*roomHub, error) {
	if !set.bus.Ready() {
		return nil, roombus.ErrNotReady
	}
	set.mu.Lock()
	h := set.hubs[code]
	if h == nil {
		if len(set.hubs) >= set.lim.MaxRooms {
			set.mu.Unlock()
			return nil, errRoomsFull
		}
		// A hub this replica has serves its room from memory while the
		// bus is down; a new one cannot watch the room then.
		if err := set.bus.Health(); err != nil {
			set.mu.Unlock()
			return nil, busErr(err)
		}
		wctx, stop := context.WithCancel(context.Background())
		h = &roomHub{set: set, code: code, ready: make(chan struct{}), stop: stop, byAddr: map[string]int{}}
		h.now.next = make(chan struct{})
		h.boardNext = make(chan struct{})
		h.answersReady = make(chan struct{})
		h.answersNext = make(chan struct{})
		h.subsReady = make(chan struct{})
		set.hubs[code] = h
		go h.watch(wctx)
		go h.watchAnswers(wctx)
		go h.watchSubmissions(wctx)
		go h.watchPresence(wctx)
		go h.watchIDs(wctx)
		go h.followBus(wctx)
	}
	h.refs++
	set.mu.Unlock()
	timeout := time.NewTimer(roombus.Timeout)
	defer timeout.Stop()
	select {
	case <-h.ready:
	case <-ctx.Done():
		h.release("")
		return nil, ctx.Err()
	case <-timeout.C:
		h.release("")
		return nil, fmt.Errorf("room bus: no answer about room %s within %v", code, roombus.Timeout)
	}
	if h.err != nil {
		h.release("")
		return nil, h.err
	}
	if from != "" {
		set.mu.Lock()
		var err error
		switch {
		case h.attendees >= set.lim.MaxAttendees:
			err = errRoomFull
		case h.byAddr[from] >= set.lim.AttendeesPerAddress:
			err = fmt.Errorf("%w (allowed %d per address and room on this server)", errAddrFull, set.lim.AttendeesPerAddress)
		default:
			h.attendees++
			h.byAddr[from]++
		}
		set.mu.Unlock()
		if err != nil {
			h.release("")
			return nil, err
		}
	}
	return h, nil
}

// release gives back what open took (from as open had it). The last
// holder leaves the hub open for hubIdle, then it stops watching; a hub
// that found no room goes at once.
func (h *roomHub) release(from string) {
	set := h.set
	set.mu.Lock()
	defer set.mu.Unlock()
	h.refs--
	if from != "" {
		h.attendees--
		if h.byAddr[from]--; h.byAddr[from] <= 0 {
			delete(h.byAddr, from)
		}
	}
	if h.refs > 0 {
		return
	}
	drop := func() {
		if h.refs == 0 && set.hubs[h.code] == h {
			delete(set.hubs, h.code)
			h.stop()
		}
	}
	select {
	case <-h.ready:
		if h.err != nil {
			drop()
			return
		}
	default:
	}
	time.AfterFunc(hubIdle, func() {
		set.mu.Lock()
		defer set.mu.Unlock()
		drop()
	})
}

// watch follows the room's key on the bus: its current value, then every
// new one, until the hub is dropped. Whatever ends it before the current
// value came (the watch refused, its updates closed, the hub dropped)
// still ends open's wait, with the reason: otherwise every join would
// wait out roombus.Timeout on a hub that will never be ready.
func (h *roomHub) watch(ctx context.Context) {
	initial := true
	defer func() {
		if initial {
			h.fail(fmt.Errorf("room bus: the watch of room %s ended before its state came", h.code))
		}
	}()
	err := h.watchKV(ctx, h.code, func() {
		if initial { // the current value has been given (or there is none)
			h.markReady()
			initial = false
		}
	}, h.take)
	if err != nil && initial {
		initial = false
		h.fail(fmt.Errorf("room bus: cannot watch room %s: %w", h.code, err))
	}
}

// markReady ends open's wait: the room exists if a good record came.
func (h *roomHub) markReady() {
	h.mu.Lock()
	if h.now.rev == 0 {
		h.err = errRoomNotFound
	}
	h.mu.Unlock()
	close(h.ready)
}

// fail ends open's wait with err.
func (h *roomHub) fail(err error) {
	h.err = err
	close(h.ready)
}

// take reads one value of the room's key. A value that is not a record the
// lab would write, or whose run cannot be built, is logged and ignored:
// the room keeps its last good state. The run is built here, once per
// replica, before the room's streams wake up and look for it.
func (h *roomHub) take(e jetstream.KeyValueEntry) { h.takeNew(e) }

// takeNew is take, reporting whether the room's streams were woken (a
// state newer than the hub's).
func (h *roomHub) takeNew(e jetstream.KeyValueEntry) bool {
	if e.Operation() != jetstream.KeyValuePut {
		h.set.log.Info("room ended", "room", h.code, "revision", e.Revision())
		return false
	}
	n := roomNow{rev: e.Revision(), raw: e.Value()}
	var err error
	n.rec, err = record.Decode(e.Value())
	if err == nil {
		if n.in, n.lesson, err = n.rec.State.Inputs(h.set.s.lab.Lessons); err == nil {
			n.run, err = h.set.s.lab.Runs.Get(n.in)
		}
	}
	if err != nil {
		h.set.log.Warn("room bus: ignored a room state", "room", h.code, "revision", e.Revision(),
			"bytes", len(e.Value()), "err", httperr.Text(err))
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n.rev <= h.now.rev {
		return false
	}
	if bytes.Equal(n.raw, h.now.raw) {
		// The same state again (a room kept in its first use: quota.go):
		// the hub takes its revision, and no stream has anything to show.
		h.now.rev, h.now.raw = n.rev, n.raw
		return false
	}
	old := h.now.next
	n.next = make(chan struct{})
	h.now = n
	h.keepAnswersLocked()
	close(old)
	return true
}

// followBus reads the room again each time the bus is back after being
// down (roombus.Bus.Back), and wakes the room's streams here: each
// follower then has the room's current state at once, without waiting
// for the next move or for the watch (which starts again by itself, from
// its last revision) to bring what changed meanwhile. Issue 33: after
// NATS came back, the first move reached 9 of 20 followers, or none.
func (h *roomHub) followBus(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.set.bus.Back():
		}
		h.resync(ctx)
	}
}

// resync reads the room's key until the bus answers (a stream just back
// may still be electing its leader), takes it if it is newer than the
// hub's state, and wakes the room's streams either way. A bus down again
// ends it: its next return reads again.
func (h *roomHub) resync(ctx context.Context) {
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
		e, err := h.set.bus.KV.Get(rctx, h.code)
		cancel()
		switch {
		case err == nil:
			if h.takeNew(e) {
				return
			}
		case errors.Is(err, jetstream.ErrKeyNotFound):
			// Gone meanwhile: the watch brings its end.
		case ctx.Err() != nil, errors.Is(err, roombus.ErrDown):
			return
		default:
			h.set.log.Warn("room bus: cannot read the room again once back, retrying", "room", h.code, "err", err)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, 2*time.Second)
			continue
		}
		h.wake()
		return
	}
}

// wake wakes the room's streams on this replica with the state they have.
func (h *roomHub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.now.next
	h.now.next = make(chan struct{})
	close(old)
}

// busErr names the room bus in a bus call's error, once (ErrDown does);
// a full bucket is a 503 that says so, never a 500.
func busErr(err error) error {
	switch {
	case errors.Is(err, roombus.ErrDown):
		return err
	case roombus.Full(err):
		return busError("the room", err)
	}
	return fmt.Errorf("room bus: %w", err)
}

// roomNow is a room's latest good state as a replica has it: the record
// and its revision, the run's inputs, the run itself and the lesson (nil in
// the free lab), and the channel closed at the next state. Every follower
// here takes the run from it rather than building or even looking it up.
type roomNow struct {
	rec    record.Record
	raw    []byte // the record as the bus holds it (updateState starts from it)
	rev    uint64
	in     tabstate.Inputs
	run    *tabstate.Run
	lesson *lessonbook.Doc
	next   chan struct{}
}

// hub is this replica's hub of room code (nil: it serves no such room).
func (set *roomSet) hub(code string) *roomHub {
	set.mu.Lock()
	defer set.mu.Unlock()
	return set.hubs[code]
}

// latest is the room's latest state as this replica's hub has it, if it
// serves the room and has one.
func (set *roomSet) latest(code string) (roomNow, bool) {
	h := set.hub(code)
	if h == nil {
		return roomNow{}, false
	}
	select {
	case <-h.ready:
	default:
		return roomNow{}, false
	}
	n := h.current()
	return n, h.err == nil && n.rev != 0 && n.raw != nil
}

// current is the room's latest good state.
func (h *roomHub) current() roomNow {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// lookup reads a room's record: from its hub if this replica serves it,
// else from the bus.
func (set *roomSet) lookup(ctx context.Context, code string) (record.Record, uint64, error) {
	if n, ok := set.latest(code); ok {
		return n.rec, n.rev, nil
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	e, err := set.bus.KV.Get(ctx, code)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return record.Record{}, 0, errRoomNotFound
	}
	if err != nil {
		return record.Record{}, 0, busErr(err)
	}
	rec, err := record.Decode(e.Value())
	if err == nil {
		_, _, err = rec.State.Inputs(set.s.lab.Lessons)
	}
	if err != nil {
		set.log.Warn("room bus: ignored a room state", "room", code, "revision", e.Revision(), "err", httperr.Text(err))
		return record.Record{}, 0, errRoomNotFound
	}
	return rec, e.Revision(), nil
}

// create puts a new room on the bus with a fresh code and key.
func (set *roomSet) create(ctx context.Context, st record.State) (code, key string, err error) {
	set.mu.Lock()
	n := len(set.hubs)
	set.mu.Unlock()
	if n >= set.lim.MaxRooms {
		return "", "", errRoomsFull
	}
	key = record.NewKey()
	b, err := json.Marshal(record.Record{V: 1, KeyHash: record.HashKey(key), State: st})
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	if err := set.admitRoom(ctx); err != nil {
		return "", "", err
	}
	// A room nobody uses expires after UnusedTTL: its first use puts its
	// key again without a TTL of its own (quota.go). A bus that cannot
	// (NATS before 2.11) keeps it 12 h.
	var opts []jetstream.KVCreateOpt
	if set.bus.KeyTTL() {
		opts = append(opts, jetstream.KeyTTL(set.lim.UnusedTTL))
	}
	var rev uint64
	for range 5 { // a taken code is one chance in millions: try another
		code = record.NewCode()
		if rev, err = set.bus.KV.Create(ctx, code, b, opts...); !errors.Is(err, jetstream.ErrKeyExists) {
			break
		}
	}
	if err != nil {
		return "", "", busErr(err)
	}
	set.record(ctx, code, rev, "start", st)
	return code, key, nil
}

// publish puts the instructor tab's state on the bus as the room's: one
// message per command. The tab's own change stands if the bus fails; the
// room catches up with the next command.
func (h *roomHub) publish(ctx context.Context, sess *lab.Session) error {
	h.pub.Lock()
	defer h.pub.Unlock()
	st := record.StateOf(sess.State())
	_, rev, err := h.set.updateState(ctx, h.code, "state", func(old *record.State) error {
		st.KeepTools(old)
		*old = st
		return nil
	})
	if err != nil {
		return fmt.Errorf("room bus: cannot publish room %s: %w", h.code, err)
	}
	if tr := tieOf(sess); tr != nil {
		tr.mu.Lock()
		tr.applied = max(tr.applied, rev)
		tr.mu.Unlock()
	}
	return nil
}

// counts is the rooms served and their attendee streams (0, 0 without a
// bus).
func (set *roomSet) counts() (rooms, followers int) {
	if set == nil {
		return 0, 0
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	for _, h := range set.hubs {
		followers += h.attendees
	}
	return len(set.hubs), followers
}

// Counts is the rooms this replica serves and their attendee streams (0, 0
// without a bus), for /metrics.
func (ws *Workshops) Counts() (rooms, followers int) { return ws.rooms.counts() }

// Bus is the rooms' bus, nil without one (the lab alone).
func (ws *Workshops) Bus() *roombus.Bus {
	if ws.rooms == nil {
		return nil
	}
	return ws.rooms.bus
}
