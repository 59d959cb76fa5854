package recording

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"outlierlab/web/addrlimit"
	"outlierlab/web/httperr"
	"outlierlab/web/roombus"
)

// The server's recording players: how many it keeps and streams, from
// one address too, a player opened, closed, evicted, and the answer when
// they are full.

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

// streams counts the players' open streams. Callers hold ps.mu.
func (ps *playerSet) streams() int {
	n := 0
	for _, p := range ps.m {
		n += max(p.streams, 0)
	}
	return n
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

var errPlayersFull = errors.New("this server plays as many workshop recordings at once as it may: try again in a minute")

// playerError gives a player's error its kind: a server full of players,
// or a bus not ready yet, is a 503; a bus's failure is the server's.
func playerError(err error) error {
	if errors.Is(err, errPlayersFull) || errors.Is(err, roombus.ErrNotReady) {
		return httperr.WithKind(httperr.KindFull, err)
	}
	return err
}
