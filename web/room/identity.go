package room

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"outlierlab/web/httperr"
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

const attendeeCookiePrefix = "olab_att_"

// attendeeIDBytes is the random part of an identity; attendeeTagBytes the
// part of the HMAC kept (128 bits: not guessable, short in a cookie).
const (
	attendeeIDBytes  = 16
	attendeeTagBytes = 16
)

// attendeeSecret is the key of the room's identity HMAC: derived from the
// key hash (a hash of 256 random bits) under a label of its own, so that
// the tag says nothing about the key hash and the key hash is not the HMAC
// key of anything else.
func (rec *roomRecord) attendeeSecret() []byte {
	m := hmac.New(sha256.New, []byte(rec.KeyHash))
	m.Write([]byte("outlierlab attendee identity v1"))
	return m.Sum(nil)
}

func (rec *roomRecord) attendeeTag(code, id string) string {
	m := hmac.New(sha256.New, rec.attendeeSecret())
	m.Write([]byte(code + "\x00" + id))
	return hex.EncodeToString(m.Sum(nil)[:attendeeTagBytes])
}

// newAttendee is a fresh identity for room code: its id and its token (the
// cookie's value).
func (rec *roomRecord) newAttendee(code string) (id, token string) {
	var b [attendeeIDBytes]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	return id, id + "." + rec.attendeeTag(code, id)
}

// attendeeOf checks token, an identity's cookie value, against room code
// and gives its id; ok is false for anything the server did not issue for
// this room.
func (rec *roomRecord) attendeeOf(code, token string) (id string, ok bool) {
	id, tag, found := strings.Cut(token, ".")
	if !found || len(id) != 2*attendeeIDBytes || len(tag) != 2*attendeeTagBytes {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	if !hmac.Equal([]byte(tag), []byte(rec.attendeeTag(code, id))) {
		return "", false
	}
	return id, true
}

// attendeeToken is the identity cookie a request carries for room code.
func attendeeToken(r *http.Request, code string) string {
	c, err := r.Cookie(attendeeCookiePrefix + code)
	if err != nil {
		return ""
	}
	return c.Value
}

// attendee is the checked identity a request carries for the room, or "".
func (rec *roomRecord) attendee(r *http.Request, code string) string {
	id, _ := rec.attendeeOf(code, attendeeToken(r, code))
	return id
}

// errNoAttendee answers a request of the room that needs an identity and
// carries none this server issued.
func errNoAttendee(code string) error {
	return httperr.WithKind(httperr.KindForbidden, &httperr.FieldError{Field: "attendee", Msg: fmt.Sprintf(
		"this browser has no attendee identity for workshop %s (the %s%s cookie, which the server gives): open /r/%s first", code, attendeeCookiePrefix, code, code)})
}

// issueAttendee makes sure the browser has an identity for the room: the
// one its cookie holds if the server issued it, else a new one, if the
// client address has not had too many for this room lately. It reports
// false when it had to refuse.
func (s *Workshops) issueAttendee(w http.ResponseWriter, r *http.Request, code string, rec *roomRecord) bool {
	if rec.attendee(r, code) != "" {
		return true
	}
	if !s.rooms.ids.Allow(s.rooms.clientAddr(r)+" "+code, s.Now()) {
		return false
	}
	_, token := rec.newAttendee(code)
	http.SetCookie(w, &http.Cookie{Name: attendeeCookiePrefix + code, Value: token, Path: "/",
		MaxAge: int((12 * time.Hour).Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.rooms.secure(r)})
	return true
}

func tooManyAttendees(w http.ResponseWriter, code string, lim Limits) {
	w.Header().Set("Retry-After", "60")
	httperr.Plain(w, http.StatusTooManyRequests, fmt.Sprintf(
		"attendee: too many new attendees of workshop %s from your address (allowed %d at once, then %d a minute): try again in a minute", code, lim.JoinBurst, max(lim.JoinsPerMinute/5, 1)))
}
