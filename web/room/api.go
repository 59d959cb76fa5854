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
)

// The rooms' API: a request finds its room (with the instructor's key for
// what changes the room), reads its small JSON body, changes the room's
// state on the bus and answers in JSON; the instructor's tab that asked
// takes the new state at once.

// errNoWorkshops answers every route of the rooms (their API, a new room,
// a tab's command or stream that names a room) on a server started
// without the room bus: one text, one kind, 404 everywhere (a room page
// is the 404 page saying the same).
var errNoWorkshops = httperr.WithKind(httperr.KindNotFound, errors.New("this server runs no workshops (it was started without the room bus)"))

// roomAPI finds the room of a room API request, answering in plain text
// when it cannot; with instructor, the request must carry the room's key.
func (s *Workshops) roomAPI(w http.ResponseWriter, r *http.Request, instructor bool) (string, record.Record, bool) {
	if s.rooms == nil {
		httperr.Write(w, errNoWorkshops, httperr.KindNotFound)
		return "", record.Record{}, false
	}
	if s.rooms.admitCode(r) != nil {
		tooManyGuesses(w)
		return "", record.Record{}, false
	}
	raw := chi.URLParam(r, "code")
	code, ok := record.NormalCode(raw)
	if !ok {
		s.rooms.missedCode(r)
		httperr.Write(w, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "room", Msg: fmt.Sprintf("%q is not a workshop code", httperr.Truncate(raw, 20))}), httperr.KindNotFound)
		return "", record.Record{}, false
	}
	rec, err := s.rooms.find(r, code)
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return "", rec, false
	}
	if instructor && !rec.KeyMatches(roomKey(r, code)) {
		httperr.Write(w, httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "key", Msg: "this browser's instructor key is not room " + code + "'s (stale or missing)"}), httperr.KindForbidden)
		return "", rec, false
	}
	if instructor && !s.rooms.changes.Allow(code, s.lab.Now()) {
		tooManyChanges(w, code)
		return "", rec, false
	}
	return code, rec, true
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
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.lab.MaxBody))
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

// writeJSON answers with v as JSON; a page's Datastar request gets 204
// instead (Datastar would merge a JSON answer into the page's signals:
// the stream shows the change).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	if r.Header.Get("Datastar-Request") == "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
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
				return record.Record{}, 0, busErr(err)
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
			set.record(ctx, code, rev, kind, rec.State)
			return rec, rev, nil
		}
		// Another write in between (a stale revision) is tried again from
		// the bus's state; anything else is answered at once: the bus down
		// or silent (503), the bucket full (503, naming it; issue 34: it
		// was tried again until the deadline, then a 500).
		if ctx.Err() != nil || !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return rec, 0, busErr(err)
		}
	}
}

// resyncTab has the instructor's tab (the page that asked) take the
// room's revision rev, written by the room API rather than by the tab
// itself, now: every instructor tab applies such a revision when the bus
// brings it (applyRoom), and this one, which asked, need not wait for it.
func (s *Workshops) resyncTab(code, tab string, rev uint64) {
	if tab == "" {
		return
	}
	sess := s.lab.Sessions.Get(tab)
	if sess == nil {
		return
	}
	if tr := tieOf(sess); tr == nil || tr.code != code || tr.role != rolePresenter {
		return
	}
	if h := s.rooms.hub(code); h != nil && h.current().rev >= rev {
		s.applyRoom(sess, h.current())
	}
}
