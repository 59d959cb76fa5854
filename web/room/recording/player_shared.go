package recording

import (
	"context"
	"time"

	"outlierlab/web/room/record"
)

// A room's recording read once for every player of it, and a live room's
// new entries followed.

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
