package room

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
	"outlierlab/web/tabid"
	"outlierlab/web/tabrelay"
)

// Issue 34, item 7: knowing a tab's id, a third party opened a stream
// with it, naming a room of its own and the instructor's role; the
// victim's tab then showed the attacker's room, and every slider move of
// the victim's got 403. A tab id alone now moves and re-rooms nothing, on
// the replica that holds the victim's stream and on another alike: the
// attacker's stream and commands are refused (403 naming the tab), no
// session is made or changed, a command is not even forwarded; and one
// that reaches the holder anyway (forwarded by a replica that did not
// check) meets the holder's own check, the attacker's cookie with it.
// The victim's moves, sent to either replica, still reach its stream.
func TestTabIDAloneReroomsNothing(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	lb := startRoomLab(t, la.Bus.Replica(), Limits{})
	victim := webtest.TabOf("victim-tab-0000000000001")
	victimSig := func(rest string) string {
		return fmt.Sprintf(`{"tab":%q,"preset":"search-cache","conn":"live"%s}`, victim, rest)
	}
	events := roomtest.OpenStreamCtx(t, t.Context(), la.TS.URL, victimSig(""))
	webtest.WaitFor(t, events, "the victim's first redraw", roomtest.Charted)
	sess := la.S.lab.Sessions.Get(victim)
	before, gen := sess.State(), sess.Gen()

	// The attacker: its own room (and its key), its own browser.
	mine, key := lb.CreateRoom(t, `{"preset":"search-cache"}`)
	cookies := []*http.Cookie{{Name: tabid.Cookie, Value: tabid.NewBrowser()}, {Name: "olab_key_" + mine, Value: key}}
	attack := fmt.Sprintf(`{"tab":%q,"room":%q,"roomRole":"present","preset":"burst","seq":99,"cfg":{"max_ejection_percent":99}}`, victim, mine)
	refused := func(t *testing.T, what string, res *http.Response) {
		t.Helper()
		if res.StatusCode != http.StatusForbidden {
			res.Body.Close() // a stream that was let in never ends
			t.Errorf("%s: %d, want 403 naming the tab", what, res.StatusCode)
			return
		}
		if body := webtest.Body(t, res); !strings.HasPrefix(body, "tab: the tab is not this browser's: its id was issued to another browser") {
			t.Errorf("%s: 403 %q, want it naming the tab", what, body)
		}
	}
	for _, base := range []string{la.TS.URL, lb.TS.URL} {
		ctx, cancel := context.WithCancel(t.Context())
		res, err := http.DefaultClient.Do(webtest.StreamRequest(ctx, base, "/lab/stream", attack, cookies...))
		if err != nil {
			t.Fatal(err)
		}
		refused(t, "the attacker's present stream with the victim's tab id on "+base, res)
		cancel()
		for _, verb := range []string{"set", "scrub", "preset", "play"} {
			req, _ := http.NewRequest("POST", base+"/lab/cmd/"+verb, strings.NewReader(attack))
			req.Header.Set("Content-Type", "application/json")
			for _, c := range cookies {
				req.AddCookie(c)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			refused(t, "the attacker's "+verb+" with the victim's tab id on "+base, res)
		}
	}
	if lb.S.lab.Sessions.Get(victim) != nil {
		t.Error("the other replica made a session of the victim's tab for the attacker")
	}

	// A replica that forwarded the attacker's command without a look (an
	// older one) reaches the holder, which checks the cookie that came
	// with it.
	req := httptest.NewRequest("POST", "/lab/cmd/set", strings.NewReader(attack))
	req.Header.Set("Content-Type", "application/json")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	if err := tabrelay.New(lb.Bus, nil).Forward(w, req, victim, []byte(attack)); err != nil {
		t.Fatalf("forward to the holder: %v", err)
	}
	refused(t, "the attacker's command forwarded to the victim's holder", w.Result())

	if sess.TieOf() != nil {
		t.Errorf("the victim's tab is in a room now: %s", sess.TieOf().RoomCode())
	}
	if after := sess.State(); !reflect.DeepEqual(after, before) || sess.Gen() != gen || la.S.lab.Sessions.Get(victim) != sess || sess.Streams() != 1 {
		t.Errorf("the victim's session changed: gen %d→%d, %d streams\n%+v\n%+v", gen, sess.Gen(), sess.Streams(), before.In, after.In)
	}
	roomtest.ExpectNone(t, events, 300*time.Millisecond, "the attacker's settings on the victim's stream", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "max_ejection_percent: 99\n") || strings.Contains(ev.Data, `"room"`)
	})
	// The victim's own moves still land, on either replica.
	for i, base := range []string{lb.TS.URL, la.TS.URL} {
		cap := 30 + i
		if st, body := roomtest.Post(t, base, "set", victimSig(fmt.Sprintf(`,"seq":%d,"cfg":{"max_ejection_percent":%d}`, i+1, cap)), "", ""); st != 204 {
			t.Fatalf("the victim's move on %s: %d %s", base, st, body)
		}
		want := fmt.Sprintf("max_ejection_percent: %d\n", cap)
		webtest.WaitFor(t, events, "the victim's move on its stream", func(ev webtest.Event) bool { return strings.Contains(ev.Data, want) })
	}
}
