package room

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"outlierlab/web/addrlimit"
	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
	"outlierlab/web/roombus"
	"outlierlab/web/view"
)

// An attendee's identity in a room is issued by the server, never chosen by
// the client (issue 19, defect 3: a client that named itself could answer a
// poll 500 times). It is a random id and a tag, an HMAC of the room's code
// and the id, in the cookie olab_att_CODE: any replica can check it without
// asking the others, because the HMAC's secret is derived from the room's
// key hash, which every replica reads from the room's record on the bus and
// no attendee ever sees. A room page (attendee or projector) gives one to
// a browser that has none; the room's streams, answers and board need it.
//
// A browser that clears its cookie (or a script that never keeps one) is a
// new attendee, which the server cannot tell from a classmate behind the
// same NAT. So each client address has a budget of identities in a room
// (issue 34, item 8: one address clearing its cookie answered 60 times at
// once, then 12 times a minute, for as long as it liked): the room's
// IDsPerAddress, as its instructor set it, else the server's
// Limits.IDsPerAddress (60: a class of fifty behind one NAT, and some who
// join twice). It is counted on the bus, one key per room and address
// (CODE.ids.TAG, the address's SourceTag: the bus holds no address), by
// compare-and-set, so two replicas never give an address more than its
// budget between them. Past it, a new browser from that address gets a
// page that says so (429); the instructor's board says how many
// identities the addresses took and which reached the budget, and raises
// it (board.go).

// errNoAttendee answers a request of the room that needs an identity and
// carries none this server issued.
func errNoAttendee(code string) error {
	return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "attendee", Msg: fmt.Sprintf(
		"this browser has no attendee identity for workshop %s (the %s%s cookie, which the server gives): open /r/%s first", code, record.AttendeeCookiePrefix, code, code)})
}

// idBudgetError: the client address has had as many identities of the
// room as the room gives one address.
type idBudgetError struct {
	code   string
	budget int
}

func (e *idBudgetError) Error() string {
	return fmt.Sprintf("attendee: workshop %s gives one client address %d attendee identities (its idsPerAddress), and yours has had them all", e.code, e.budget)
}

// idsKey is the bus's count of the identities the address tagged tag
// took in room code.
func idsKey(code, tag string) string { return code + ".ids." + tag }

// idsPerAddress is the room's budget of identities per client address.
func (set *roomSet) idsPerAddress(st *record.State) int {
	if st.IDsPerAddress > 0 {
		return st.IDsPerAddress
	}
	return set.lim.IDsPerAddress
}

// issueAttendee makes sure the browser has an identity for the room: the
// one its cookie holds if the server issued it, else a new one, if its
// client address has not had the room's budget of them. An address past
// it is an idBudgetError (429, naming the budget); a bus that does not
// answer its own error (503: a new attendee waits for the bus, which
// counts it).
func (s *Workshops) issueAttendee(w http.ResponseWriter, r *http.Request, code string, rec *record.Record) error {
	if rec.Attendee(r, code) != "" {
		return nil
	}
	budget := s.rooms.idsPerAddress(&rec.State)
	tag := rec.SourceTag(code, addrlimit.Key(s.rooms.clientAddr(r)))
	if n, err := s.rooms.takeID(r.Context(), code, tag, budget); err != nil {
		return err
	} else if n > budget {
		return httperr.WithKind(httperr.KindTooMany, &idBudgetError{code: code, budget: budget})
	}
	_, token := rec.NewAttendee(code)
	http.SetCookie(w, &http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: token, Path: "/",
		MaxAge: int((12 * time.Hour).Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.rooms.secure(r)})
	s.rooms.keepRoom(r.Context(), code) // someone joined: the room lives as long as any (quota.go)
	return nil
}

// takeID counts one more identity of room code for the address tagged
// tag, by compare-and-set on the bus, unless the address has budget
// already: it answers the address's count with this one (past budget:
// refused, nothing counted).
func (set *roomSet) takeID(ctx context.Context, code, tag string, budget int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, roombus.Timeout)
	defer cancel()
	key := idsKey(code, tag)
	for {
		n, rev := 0, uint64(0)
		e, err := set.bus.KV.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return 0, busError("the attendee's identity", err)
		default:
			n, _ = strconv.Atoi(string(e.Value()))
			rev = e.Revision()
		}
		if n >= budget {
			return n + 1, nil
		}
		next := []byte(strconv.Itoa(n + 1))
		if rev == 0 {
			_, err = set.bus.KV.Create(ctx, key, next)
		} else {
			_, err = set.bus.KV.Update(ctx, key, next, rev)
		}
		switch {
		case err == nil:
			return n + 1, nil
		case ctx.Err() == nil && (errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)):
			// Another replica counted one in between: count again.
		default:
			return 0, busError("the attendee's identity", err)
		}
	}
}

// refuseAttendee answers a room page that could not give its browser an
// identity: the address's budget spent (429, a page naming it and who
// raises it), or the bus.
func (s *Workshops) refuseAttendee(w http.ResponseWriter, r *http.Request, code string, err error) {
	var b *idBudgetError
	if !errors.As(err, &b) {
		s.lab.Log.Error("room: attendee identity", "room", code, "err", err)
		httperr.Write(w, roomError(err), httperr.KindUnavailable)
		return
	}
	w.Header().Set("Retry-After", "60")
	s.roomDenied(w, r, httperr.KindTooMany, "No more attendees from your network", fmt.Sprintf(
		"Workshop %s gives one network (client address) %d attendee identities, and yours has had them all: "+
			"a browser that clears its cookies, or a private window, is a new attendee. Ask your instructor to raise the limit on their board.", b.code, b.budget), "")
}

// watchIDs keeps the room's identity counts by address from the bus and
// wakes the instructor's board at each change.
func (h *roomHub) watchIDs(ctx context.Context) {
	err := h.watchKV(ctx, h.code+".ids.*", nil, func(e jetstream.KeyValueEntry) {
		tag := strings.TrimPrefix(e.Key(), h.code+".ids.")
		n, err := strconv.Atoi(string(e.Value()))
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.ids == nil {
			h.ids = map[string]int{}
		}
		if e.Operation() == jetstream.KeyValuePut && err == nil {
			h.ids[tag] = n
		} else {
			delete(h.ids, tag)
		}
		h.boardChangedLocked()
	})
	if err != nil {
		h.set.log.Warn("room bus: cannot watch the attendees' identities", "room", h.code, "err", err)
	}
}

// idsViewLocked is the board's line on identities: the budget, how many
// addresses took some, the most one took, how many took them all, and
// whether one is near it (the board then offers to double it). Callers
// hold h.mu.
func (h *roomHub) idsViewLocked() view.RoomIDs {
	v := view.RoomIDs{Code: h.code, PerAddress: h.set.idsPerAddress(&h.now.rec.State), Default: h.now.rec.State.IDsPerAddress == 0}
	for _, n := range h.ids {
		v.Addresses++
		v.Most = max(v.Most, n)
		if n >= v.PerAddress {
			v.Full++
		}
	}
	v.Near = 5*v.Most >= 4*v.PerAddress
	v.Raise = min(2*v.PerAddress, record.MaxIDsPerAddress)
	return v
}
