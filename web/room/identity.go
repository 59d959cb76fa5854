package room

import (
	"fmt"
	"net/http"
	"time"

	"outlierlab/web/httperr"
	"outlierlab/web/room/record"
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
// Issuing is limited per client address and room (a token bucket of
// AttendeesPerAddress, refilled at a fifth of that per minute): a class of
// fifty behind one NAT gets its fifty at once, a script minting identities
// to stuff a poll gets as many as one class, then one every few seconds.

// errNoAttendee answers a request of the room that needs an identity and
// carries none this server issued.
func errNoAttendee(code string) error {
	return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "attendee", Msg: fmt.Sprintf(
		"this browser has no attendee identity for workshop %s (the %s%s cookie, which the server gives): open /r/%s first", code, record.AttendeeCookiePrefix, code, code)})
}

// issueAttendee makes sure the browser has an identity for the room: the
// one its cookie holds if the server issued it, else a new one, if the
// client address has not had too many for this room lately. It reports
// false when it had to refuse.
func (s *Workshops) issueAttendee(w http.ResponseWriter, r *http.Request, code string, rec *record.Record) bool {
	if rec.Attendee(r, code) != "" {
		return true
	}
	if !s.rooms.ids.Allow(s.rooms.clientAddr(r)+" "+code, s.Now()) {
		return false
	}
	_, token := rec.NewAttendee(code)
	http.SetCookie(w, &http.Cookie{Name: record.AttendeeCookiePrefix + code, Value: token, Path: "/",
		MaxAge: int((12 * time.Hour).Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.rooms.secure(r)})
	s.rooms.keepRoom(r.Context(), code) // someone joined: the room lives as long as any (quota.go)
	return true
}

func tooManyAttendees(w http.ResponseWriter, code string, lim Limits) {
	w.Header().Set("Retry-After", "60")
	httperr.Plain(w, http.StatusTooManyRequests, fmt.Sprintf(
		"attendee: too many new attendees of workshop %s from your address (allowed %d at once, then %d a minute): try again in a minute", code, lim.JoinBurst, max(lim.JoinsPerMinute/5, 1)))
}
