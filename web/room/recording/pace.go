package recording

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
)

// A room's "state" entries are its instructor tab's moves: a slider
// dragged sends some ten a second, and a key holder's script as many as
// the lab's commands allow (issue 34: 1 734 entries a second filled the
// recordings' stream in a minute). The room follows every move, and its
// recording keeps them at most statesPerSecond a second after a burst of
// statesBurst: a move past that is held back, replaced by the next one,
// and recorded once the pace allows; an entry of the room's own (a
// question, the spotlight: the rooms' API limits those) that comes after
// it drops it, its state being newer. The last state of a drag is always
// recorded, as what the room showed: the entries are whole states, and
// the ones left out are only the way between. The pace is each replica's
// and in wall-clock time; the stream keeps at most roombus.RoomEntries of
// a room whatever the number of replicas.

const (
	statesPerSecond = 20
	statesBurst     = 100
	// maxPaced bounds the rooms a pacer remembers (those with nothing
	// held and a full bucket are forgotten first).
	maxPaced = 10000
)

type pacer struct {
	mu    sync.Mutex
	rooms map[string]*roomPace
}

// roomPace is one room's: its pace, the state held back and the timer
// that records it, and its publications in order (pub; lastRev is the
// newest revision published, which a held state older than it never
// follows).
type roomPace struct {
	lim   *rate.Limiter
	held  *heldEntry
	timer *time.Timer

	pub     sync.Mutex
	lastRev uint64
}

type heldEntry struct {
	rev uint64
	e   record.TimelineEntry
}

// room is code's pace, made if need be. Callers hold p.mu.
func (p *pacer) room(code string, now time.Time) *roomPace {
	rp := p.rooms[code]
	if rp == nil {
		if len(p.rooms) >= maxPaced {
			for c, r := range p.rooms {
				if r.held == nil && r.timer == nil && r.lim.TokensAt(now) >= statesBurst {
					delete(p.rooms, c)
				}
			}
		}
		rp = &roomPace{lim: rate.NewLimiter(statesPerSecond, statesBurst)}
		p.rooms[code] = rp
	}
	return rp
}

// admit publishes entry e of room code (the state of revision rev) now,
// or holds it back (a "state" past the room's pace) for a timer to
// publish when the pace allows.
func (p *pacer) admit(t *Timeline, code string, rev uint64, e *record.TimelineEntry) (*roomPace, bool) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	rp := p.room(code, now)
	newer := func(h *heldEntry) bool { return h == nil || rev == 0 || h.rev <= rev }
	if e.Kind != "state" {
		if newer(rp.held) {
			rp.held = nil
		}
		return rp, true
	}
	if rp.timer == nil && rp.lim.AllowN(now, 1) {
		return rp, true
	}
	if newer(rp.held) {
		rp.held = &heldEntry{rev: rev, e: *e}
	}
	if rp.timer == nil {
		p.schedule(t, code, rp, now)
	}
	return rp, false
}

// schedule sets the timer that publishes what the room holds when its
// pace allows. Callers hold p.mu.
func (p *pacer) schedule(t *Timeline, code string, rp *roomPace, now time.Time) {
	d := rp.lim.ReserveN(now, 1).DelayFrom(now)
	rp.timer = time.AfterFunc(d, func() { p.flush(t, code, rp) })
}

// flush publishes the state the room holds back, unless a newer one was
// published meanwhile; one held while it published gets a timer of its
// own.
func (p *pacer) flush(t *Timeline, code string, rp *roomPace) {
	p.mu.Lock()
	h := rp.held
	rp.held = nil
	p.mu.Unlock()
	if h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*roombus.Timeout)
		t.publishIn(ctx, rp, code, h.rev, &h.e, true)
		cancel()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rp.timer = nil
	if rp.held != nil {
		p.schedule(t, code, rp, time.Now())
	}
}

// publishIn publishes entry e in the room's order; a held state
// (stale) older than what the room published since is left out.
func (t *Timeline) publishIn(ctx context.Context, rp *roomPace, code string, rev uint64, e *record.TimelineEntry, stale bool) {
	rp.pub.Lock()
	defer rp.pub.Unlock()
	if stale && rev != 0 && rev < rp.lastRev {
		return
	}
	t.publish(ctx, code, rev, e)
	rp.lastRev = max(rp.lastRev, rev)
}
