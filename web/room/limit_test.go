package room

import (
	"net/http"
	"testing"
	"time"

	"outlierlab/web/roombus"
)

// Issue 33: fifty attendees behind one NAT (one client address) join a
// room and reload its page twice within 90 s, every page is served; a
// script from that address that goes on loading pages is soon refused
// (429), then gets about one a second.
func TestRoomClassReloads(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	const nat = "127.0.0.3"
	class := make([]*http.Client, 50)
	for i := range class {
		class[i] = clientFrom(t, nat)
	}
	start := time.Now()
	for wave := range 3 {
		for i, c := range class {
			if st, body := call(t, c, "GET", l.TS.URL+"/r/"+code, ""); st != 200 {
				t.Fatalf("wave %d (a join, then reloads): attendee %d's page: %d %s", wave+1, i+1, st, body)
			}
		}
	}
	script := class[0]
	served, refused := 0, 0
	for range 100 {
		switch st, body := call(t, script, "GET", l.TS.URL+"/r/"+code, ""); st {
		case 200:
			served++
		case 429:
			refused++
		default:
			t.Fatalf("a script's page: %d %s", st, body)
		}
	}
	// What the class left of the burst (30), then one a second since the
	// class began.
	if limit := 30 + 1 + int(time.Since(start).Seconds()); served > limit || refused == 0 {
		t.Errorf("a script after the class: %d of 100 pages served, %d refused; want at most %d served", served, refused, limit)
	}
	t.Logf("a script after the class: %d of 100 pages served in %v", served, time.Since(start).Round(time.Millisecond))
}
