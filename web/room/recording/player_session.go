package recording

import (
	"time"

	"outlierlab/web/lab"
	"outlierlab/web/tabstate"
)

// The player drives its tab's lab session: the entry at the player's
// clock applied as a follower applies the room's state.

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
	ts := e.State.Snapshot(pe.in, run, pe.d)
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
