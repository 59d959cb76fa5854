package recording

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/tabid"
)

// The player's routes: the transport's commands and the stream.

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
