package room

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

// Any replica takes any request of a tab (issue 33: through nginx's round
// robin, 9 of 9 slider moves that landed on the replica without the tab's
// stream were answered 204 and lost). A free-lab tab streams from replica
// A; its 100 slider moves go to A and B in turn, and every one of them
// reaches the stream, in order, B's through the bus.
func TestTabCommandsAnyReplica(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	lb := startRoomLab(t, la.Bus.Replica(), Limits{})
	tab := webtest.TabOf("relay-tab-00000000000001")
	sig := func(rest string) string {
		return fmt.Sprintf(`{"tab":%q,"preset":"search-cache","conn":"live"%s}`, tab, rest)
	}
	events := roomtest.OpenStreamCtx(t, t.Context(), la.TS.URL, sig(""))
	webtest.WaitFor(t, events, "the first redraw", roomtest.Charted)
	for i := 1; i <= 100; i++ {
		base := []string{la.TS.URL, lb.TS.URL}[i%2]
		// Four caps in turn: each move changes the one before (a move to
		// the cap shown redraws nothing), and after the first four each
		// run is in A's cache: under the race detector 90 distinct runs
		// were most of the test's 40 s, and a lost move still leaves its
		// value off the stream before the next is sent.
		cap := 10 + 10*(i%4)
		st, body := roomtest.Post(t, base, "set", sig(fmt.Sprintf(`,"seq":%d,"cfg":{"max_ejection_percent":%d}`, i, cap)), "", "")
		if st != 204 {
			t.Fatalf("move %d on %s: %d %s", i, base, st, body)
		}
		want := fmt.Sprintf("max_ejection_percent: %d\n", cap)
		webtest.WaitFor(t, events, fmt.Sprintf("move %d (cap %d, sent to %s) on the stream", i, cap, base), func(ev webtest.Event) bool {
			return strings.Contains(ev.Data, want)
		})
	}
}

// A command whose page says its stream is live, when no replica holds the
// stream (its replica is gone), tells the page to reconnect its stream
// rather than answer 204 for a change no stream would show; one from a
// tab with no stream yet (a script's, the page's first) is applied where
// it lands, as before.
func TestTabCommandOrphanedReconnects(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{}, Limits{})
	st, body := roomtest.Post(t, la.TS.URL, "set", `{"tab":"`+webtest.TabOf("relay-tab-00000000000002")+`","preset":"search-cache","conn":"live","seq":1,"cfg":{"max_ejection_percent":34}}`, "", "")
	if st != 200 || !strings.Contains(body, "datastar-patch-signals") || !strings.Contains(body, `"conn":"stale"`) {
		t.Fatalf("a live page's command that no replica holds: %d %q, want the page told to reconnect (conn stale)", st, body)
	}
	if st, body := roomtest.Post(t, la.TS.URL, "set", `{"tab":"`+webtest.TabOf("relay-tab-00000000000003")+`","preset":"search-cache","seq":1,"cfg":{"max_ejection_percent":34}}`, "", ""); st != 204 {
		t.Fatalf("a command of a tab with no stream yet: %d %q, want 204", st, body)
	}
}

// A stream that comes back to a replica it left finds the session it had
// there, which missed the moves another replica applied meanwhile: the
// page's signals (a newer slider sequence) win over it.
func TestTabStreamBackOnOlderSession(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	lb := startRoomLab(t, la.Bus.Replica(), Limits{})
	tab := webtest.TabOf("relay-tab-00000000000004")
	sig := func(rest string) string {
		return fmt.Sprintf(`{"tab":%q,"preset":"search-cache","conn":"live"%s}`, tab, rest)
	}
	ctxA, leaveA := context.WithCancel(t.Context())
	webtest.WaitFor(t, roomtest.OpenStreamCtx(t, ctxA, la.TS.URL, sig("")), "the first redraw on A", roomtest.Charted)
	leaveA()
	roomtest.WaitUntil(t, "A lets the stream go", func() bool { return la.S.lab.Sessions.Get(tab).Streams() == 0 })
	ctxB, leaveB := context.WithCancel(t.Context())
	webtest.WaitFor(t, roomtest.OpenStreamCtx(t, ctxB, lb.TS.URL, sig("")), "the first redraw on B", roomtest.Charted)
	if st, body := roomtest.Post(t, lb.TS.URL, "set", sig(`,"seq":1,"cfg":{"max_ejection_percent":34}`), "", ""); st != 204 {
		t.Fatalf("move on B: %d %s", st, body)
	}
	leaveB()
	back := roomtest.OpenStreamCtx(t, t.Context(), la.TS.URL, sig(`,"seq":1,"cfg":{"max_ejection_percent":34}`))
	webtest.WaitFor(t, back, "the page's cap (34) on A's first redraw", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "max_ejection_percent: 34\n")
	})
}

// A recording's player lives where its stream is: its speed, set on the
// other replica, is the stream's (issue 33's round robin, for the
// review after class).
func TestPlayerCommandAnyReplica(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	lb := startRoomLab(t, la.Bus.Replica(), Limits{})
	code, _ := la.CreateRoom(t, `{"preset":"search-cache"}`)
	tab := webtest.TabOf("relay-player-tab-0000001")
	ev := openReplayStream(t, la.TS.URL, code, `{"tab":"`+tab+`","preset":"search-cache"}`)
	webtest.WaitFor(t, ev, "the player's first redraw", roomtest.Charted)
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/recording/speed?speed=max", `{"tab":"`+tab+`"}`, code, "", ""); st != 204 {
		t.Fatalf("speed on the other replica: %d %s", st, body)
	}
	webtest.WaitFor(t, ev, "the player's new speed, on the stream of the first replica", roomtest.SignalPatch(`"recSpeed":"max"`))
}
