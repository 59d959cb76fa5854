package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/view"
)

// Predict, then reveal, for a room (workshops.md: every poll tool shows a
// histogram; only a lab that runs the system can mark the true answer).
// The instructor opens a question about a moment of the room's run; the
// room's playback holds before that moment (the question rides on the
// room's state, so every replica's followers hold); attendees answer; the
// instructor and projector see the count, not the split; Reveal closes
// the answers, reads the engine's answer off the frame at that moment,
// puts the histogram on the room's state and plays on.
//
// The answers live in the room's bucket, one key per attendee and question
// (answers.go): two replicas taking answers at once never lose one,
// and a poll takes as many answers as the room has attendees.

// roomAPI finds the room of a room API request, answering in plain text
// when it cannot; with instructor, the request must carry the room's key.
func (s *Workshops) roomAPI(w http.ResponseWriter, r *http.Request, instructor bool) (string, record.Record, bool) {
	if s.rooms == nil {
		httperr.Plain(w, http.StatusNotFound, "this server runs no workshops")
		return "", record.Record{}, false
	}
	if s.rooms.admitCode(r) != nil {
		tooManyGuesses(w)
		return "", record.Record{}, false
	}
	code, ok := record.NormalCode(chi.URLParam(r, "code"))
	if !ok {
		s.rooms.missedCode(r)
		httperr.Plain(w, http.StatusNotFound, "room: not a workshop code")
		return "", record.Record{}, false
	}
	rec, err := s.rooms.find(r, code)
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return "", rec, false
	}
	if instructor && !rec.KeyMatches(roomKey(r, code)) {
		httperr.Plain(w, http.StatusForbidden, "key: this browser's instructor key is not room "+code+"'s (stale or missing)")
		return "", rec, false
	}
	return code, rec, true
}

// questionOf is the room's question as rec (this replica's hub) has it,
// or, when that is not question id, as the bus has it: a question opened a
// moment ago (here or on another replica) may not have reached the hub
// yet, and an answer to it must not be refused.
func (set *roomSet) questionOf(ctx context.Context, code string, rec record.Record, id string) *record.Question {
	if q := rec.State.Question; q != nil && q.ID == id {
		return q
	}
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	e, err := set.bus.KV.Get(ctx, code)
	if err != nil {
		return rec.State.Question
	}
	fresh, err := record.Decode(e.Value())
	if err != nil {
		return rec.State.Question
	}
	return fresh.State.Question
}

// updateState changes the room's state on the bus by compare-and-set,
// retrying when another replica wrote in between, and records it on the
// room's timeline as kind.
func (set *roomSet) updateState(ctx context.Context, code, kind string, f func(*record.State) error) (record.Record, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	// The first try starts from the state this replica's hub already has
	// (almost always the latest: an instructor's move is then one message,
	// not a read and a write); the revision check makes a stale one fail,
	// and the next tries read the bus.
	known, haveKnown := set.latest(code)
	for {
		var raw []byte
		var was uint64
		fromHub := haveKnown
		if haveKnown {
			raw, was, haveKnown = known.raw, known.rev, false
		} else {
			e, err := set.bus.KV.Get(ctx, code)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				return record.Record{}, 0, errRoomNotFound
			}
			if err != nil {
				return record.Record{}, 0, fmt.Errorf("room bus: %w", err)
			}
			raw, was = e.Value(), e.Revision()
		}
		rec, err := record.Decode(raw) // a copy of its own: f may change it
		if err != nil {
			return rec, 0, err
		}
		if err := f(&rec.State); err != nil {
			if fromHub {
				// f refused the hub's state, which may be a write or two
				// behind (this replica's own a moment ago: the hub hears
				// it from the bus): it judges the bus's before refusing.
				continue
			}
			return rec, 0, err
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return rec, 0, err
		}
		rev, err := set.bus.KV.Update(ctx, code, b, was)
		if err == nil {
			set.record(ctx, code, kind, rec.State)
			return rec, rev, nil
		}
		if ctx.Err() != nil {
			return rec, 0, fmt.Errorf("room bus: %w", err)
		}
	}
}

// roomRequest finds the room of a room API request (the key holder's,
// with instructor) and reads its body, a small JSON object, into a T; it
// answers the request itself when it cannot, and then ok is false.
func roomRequest[T any](s *Workshops, w http.ResponseWriter, r *http.Request, instructor bool) (code string, rec record.Record, req T, ok bool) {
	if code, rec, ok = s.roomAPI(w, r, instructor); !ok {
		return code, rec, req, false
	}
	if err := s.readJSON(r, &req); err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return code, rec, req, false
	}
	return code, rec, req, true
}

// readJSON reads a small JSON body into v (an empty body leaves v).
func (s *Workshops) readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.MaxBody))
	if err != nil {
		return httperr.WithKind(httperr.KindTooLarge, fmt.Errorf("request body: %w", err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return httperr.WithKind(httperr.KindMalformed, fmt.Errorf("body: not a JSON object: %w", err))
	}
	return nil
}

// questionView is the question panel as a page of role sees it; who is
// the attendee (their own answer shows).
func (h *roomHub) questionView(role, who string) view.RoomQuestion {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := view.RoomQuestion{Code: h.code, Role: role}
	q := h.now.rec.State.Question
	if q == nil {
		return v
	}
	v.ID, v.Text, v.Choices, v.Revealed, v.Answer, v.Total = q.ID, q.Text, q.Choices, q.Revealed, q.Answer, q.Total
	if mine := h.answers[q.ID]; mine != nil {
		v.Count = len(mine)
		if who != "" {
			v.Mine = mine[who].Answer
		}
	}
	v.Hist = record.AnswerBars(q.Hist)
	return v
}

// resyncTab has the instructor's tab (the page that asked) take the room's
// revision rev, written by the room API rather than by the tab itself.
func (s *Workshops) resyncTab(code, tab string, rev uint64) {
	if tab == "" {
		return
	}
	sess := s.Sessions.Get(tab)
	if sess == nil {
		return
	}
	tr := tieOf(sess)
	mark := false
	if tr != nil && tr.code == code && tr.role == rolePresenter {
		tr.mu.Lock()
		if mark = rev > tr.applied; mark {
			tr.resync = rev
		}
		tr.mu.Unlock()
	}
	if !mark {
		return
	}
	// The bus may have brought the state before this: the tab's stream
	// then passed it over (no resync yet) and waits for the next one. The
	// state is applied here (which wakes the stream); if it has not come
	// yet, the stream applies it when it does.
	s.rooms.mu.Lock()
	h := s.rooms.hubs[code]
	s.rooms.mu.Unlock()
	if h != nil {
		s.applyRoom(sess, h.current())
	}
}
