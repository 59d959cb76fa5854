package room

import (
	"net/http"
	"testing"
	"time"

	"outlierlab/web/roombus"
)

// Issue 33: fifty attendees behind one NAT (one client address) join a
// room and reload its page twice, every page is served; a script from
// that address that goes on loading pages is then refused (429), and
// gets one a second. The server's clock is the test's: the class loads
// its 150 pages at one instant (the worst case: as fast as it can), and
// a second is a second however slow the machine (in CI under the race
// detector the class took 82 s of real time, the bucket refilled 82
// pages meanwhile, and the script was never refused).
func TestRoomClassReloads(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	clk := &testClock{t: time.UnixMilli(1_800_000_000_000)}
	l.S.lab.Now = clk.Now
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	const nat = "127.0.0.3"
	class := make([]*http.Client, 50)
	for i := range class {
		class[i] = clientFrom(t, nat)
	}
	for wave := range 3 {
		for i, c := range class {
			if st, body := call(t, c, "GET", l.TS.URL+"/r/"+code, ""); st != 200 {
				t.Fatalf("wave %d (a join, then reloads): attendee %d's page: %d %s", wave+1, i+1, st, body)
			}
		}
	}
	script := class[0]
	load := func(n int) (served int) {
		t.Helper()
		for range n {
			switch st, body := call(t, script, "GET", l.TS.URL+"/r/"+code, ""); st {
			case 200:
				served++
			case 429:
			default:
				t.Fatalf("a script's page: %d %s", st, body)
			}
		}
		return served
	}
	// What the class left of the burst: 3 × 60 − 150.
	if got, want := load(100), pageLoads*60-3*len(class); got != want {
		t.Errorf("a script after the class: %d of 100 pages served at once, want the %d the class left", got, want)
	}
	clk.add(10 * time.Second)
	if got := load(20); got != 10 {
		t.Errorf("the script 10 s later: %d of 20 pages served, want 10 (one a second)", got)
	}
}
