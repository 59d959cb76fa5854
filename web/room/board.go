package room

import (
	"context"
	"fmt"
	"net/http"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
)

// "Bring everyone here" and "Lock": room-state fields on the bus, so the
// followers on every replica obey them. Summon counts the instructor's
// calls: a follower that has seen fewer rejoins the room at the next
// state; Lock rejoins every follower and refuses their commands (but
// answers and rejoin) until it is lifted.
//
//	POST /r/{code}/summon         bring everyone here (key)
//	POST /r/{code}/lock?on=1|0    lock or unlock (key)
//	POST /r/{code}/identities?per_address=N   attendee identities one client address may have (key; identity.go)
func (s *Workshops) boardRoutes(r interface {
	Post(string, http.HandlerFunc)
}) {
	r.Post("/r/{code}/summon", s.summonRoom)
	r.Post("/r/{code}/lock", s.lockRoom)
	r.Post("/r/{code}/identities", s.setIDsPerAddress)
}

// setIDsPerAddress sets how many attendee identities the room gives one
// client address: the board's button raises it for a class on one
// network, a script may set any number in range. Identities already
// given stay; fewer only stops new ones.
func (s *Workshops) setIDsPerAddress(w http.ResponseWriter, r *http.Request) {
	n, err := httperr.Number("per_address", r.URL.Query().Get("per_address"), httperr.Span{Lo: 1, Hi: record.MaxIDsPerAddress})
	if err == nil && n != float64(int(n)) {
		err = &httperr.FieldError{Field: "per_address", Msg: fmt.Sprintf("%s is not a whole number (allowed 1–%d)", httperr.MessageNumber(n), record.MaxIDsPerAddress)}
	}
	if err != nil {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	code, _, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	rec, _, err := s.rooms.updateState(r.Context(), code, "identities", func(st *record.State) error { st.IDsPerAddress = int(n); return nil })
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]int{"idsPerAddress": s.rooms.idsPerAddress(&rec.State)})
}

func (s *Workshops) summonRoom(w http.ResponseWriter, r *http.Request) {
	s.changeRoom(w, r, "summon", func(st *record.State) { st.Summon++ })
}

func (s *Workshops) lockRoom(w http.ResponseWriter, r *http.Request) {
	on := r.URL.Query().Get("on")
	if on != "1" && on != "0" {
		httperr.Write(w, &httperr.FieldError{Field: "on", Msg: httperr.Truncate(on, 10) + " is not 1 (lock) or 0 (unlock)"}, httperr.KindBadValue)
		return
	}
	s.changeRoom(w, r, "lock", func(st *record.State) { st.Lock = on == "1" })
}

// changeRoom applies f to the room's state on the bus (instructor only).
func (s *Workshops) changeRoom(w http.ResponseWriter, r *http.Request, kind string, f func(*record.State)) {
	code, _, ok := s.roomAPI(w, r, true)
	if !ok {
		return
	}
	rec, _, err := s.rooms.updateState(r.Context(), code, kind, func(st *record.State) error { f(st); return nil })
	if err != nil {
		httperr.Write(w, roomError(err), httperr.KindInternal)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"lock": rec.State.Lock, "summon": rec.State.Summon})
}

// roomLocked reports whether the room keeps its followers (Lock).
func (s *Workshops) roomLocked(ctx context.Context, code string) bool {
	rec, _, err := s.rooms.lookup(ctx, code)
	return err == nil && rec.State.Lock
}

// obeyRoom makes a follower that broke away follow again when the room is
// locked or the instructor brought everyone back since it last looked.
// Callers hold mu.
func (tr *tabRoom) obeyRoom(st *record.State) {
	if tr.role != roleFollower {
		return
	}
	if st.Lock || st.Summon > tr.summoned {
		tr.follow = true
	}
	tr.summoned = st.Summon
}
