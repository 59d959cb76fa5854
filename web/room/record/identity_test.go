package record

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
)

// An identity is the server's only: a token it issued for the room
// checks out on any replica (the secret is the room's), anything else —
// made up, tampered, another room's, another room key's — does not.
func TestRoomAttendeeIdentity(t *testing.T) {
	rec := Record{V: 1, KeyHash: HashKey("the room's key")}
	other := Record{V: 1, KeyHash: HashKey("another room's key")}
	id, token := rec.NewAttendee("K7QX2M")
	idPart, tag, _ := strings.Cut(token, ".")
	flip := func(s string) string {
		if s[0] == '0' {
			return "1" + s[1:]
		}
		return "0" + s[1:]
	}
	_, otherToken := other.NewAttendee("K7QX2M")
	for _, c := range []struct {
		name, code, token string
		ok                bool
	}{
		{"issued", "K7QX2M", token, true},
		{"another room's code", "K7QX2N", token, false},
		{"another room key's", "K7QX2M", otherToken, false},
		{"tag tampered", "K7QX2M", idPart + "." + flip(tag), false},
		{"id tampered", "K7QX2M", flip(idPart) + "." + tag, false},
		{"no tag", "K7QX2M", idPart, false},
		{"made up", "K7QX2M", randomHex(16) + "." + randomHex(16), false},
		{"not hex", "K7QX2M", strings.Repeat("z", 32) + "." + tag, false},
		{"a tab id", "K7QX2M", "follower-tab-00000000001", false},
		{"empty", "K7QX2M", "", false},
	} {
		got, ok := rec.AttendeeOf(c.code, c.token)
		if ok != c.ok || ok && got != id {
			t.Errorf("%s: attendeeOf = %q, %v; want ok %v", c.name, got, ok, c.ok)
		}
	}
	// Another replica reads the same record from the bus: same secret.
	copied := Record{V: 1, KeyHash: rec.KeyHash}
	if got, ok := copied.AttendeeOf("K7QX2M", token); !ok || got != id {
		t.Errorf("another replica's check: %q %v", got, ok)
	}
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
