package web

import (
	"fmt"
	"net/http"
	"testing"
)

// mintAttendees is n identities of room code as its page would issue them
// (room_identity.go), without n page loads.
func mintAttendees(t testing.TB, l *roomLab, code string, n int) []*http.Cookie {
	out := make([]*http.Cookie, 0, n)
	for i := range n {
		out = append(out, &http.Cookie{Name: attendeeCookiePrefix + code, Value: l.att(t, code, fmt.Sprintf("attendee-%d", i))})
	}
	return out
}
