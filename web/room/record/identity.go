package record

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// An attendee's identity is the server's own: a random id and an HMAC of
// it under a secret derived from the room's key hash, so that any replica
// checks a token without a shared store, and a token of one room (or of
// one room key) is worth nothing in another.

// AttendeeCookiePrefix names an attendee's identity cookie, the room's
// code after it.
const AttendeeCookiePrefix = "olab_att_"

// AttendeeIDBytes is the random part of an identity; attendeeTagBytes the
// part of the HMAC kept (128 bits: not guessable, short in a cookie).
const (
	AttendeeIDBytes  = 16
	attendeeTagBytes = 16
)

// attendeeToken is the identity cookie a request carries for room code.
func attendeeToken(r *http.Request, code string) string {
	c, err := r.Cookie(AttendeeCookiePrefix + code)
	if err != nil {
		return ""
	}
	return c.Value
}

// attendeeSecret is the key of the room's identity HMAC: derived from the
// key hash (a hash of 256 random bits) under a label of its own, so that
// the tag says nothing about the key hash and the key hash is not the HMAC
// key of anything else.
func (rec *Record) attendeeSecret() []byte {
	m := hmac.New(sha256.New, []byte(rec.KeyHash))
	m.Write([]byte("outlierlab attendee identity v1"))
	return m.Sum(nil)
}

func (rec *Record) AttendeeTag(code, id string) string {
	m := hmac.New(sha256.New, rec.attendeeSecret())
	m.Write([]byte(code + "\x00" + id))
	return hex.EncodeToString(m.Sum(nil)[:attendeeTagBytes])
}

// SourceTag is a client address (addr, as the address limits count it)
// as a room's answers keep it: an HMAC under the room's secret, so that
// two answers from one address have the same tag and the bus holds no
// address.
func (rec *Record) SourceTag(code, addr string) string {
	m := hmac.New(sha256.New, rec.attendeeSecret())
	m.Write([]byte("source\x00" + code + "\x00" + addr))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// NewAttendee is a fresh identity for room code: its id and its token (the
// cookie's value).
func (rec *Record) NewAttendee(code string) (id, token string) {
	var b [AttendeeIDBytes]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	return id, id + "." + rec.AttendeeTag(code, id)
}

// AttendeeOf checks token, an identity's cookie value, against room code
// and gives its id; ok is false for anything the server did not issue for
// this room.
func (rec *Record) AttendeeOf(code, token string) (id string, ok bool) {
	id, tag, found := strings.Cut(token, ".")
	if !found || len(id) != 2*AttendeeIDBytes || len(tag) != 2*attendeeTagBytes {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	if !hmac.Equal([]byte(tag), []byte(rec.AttendeeTag(code, id))) {
		return "", false
	}
	return id, true
}

// Attendee is the checked identity a request carries for the room, or "".
func (rec *Record) Attendee(r *http.Request, code string) string {
	id, _ := rec.AttendeeOf(code, attendeeToken(r, code))
	return id
}
