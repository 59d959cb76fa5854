package room

import (
	"strings"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/roombus"
)

// A room started from a page's signals takes the page's state but makes
// no session (issue 37, item 6: five posts made five stored sessions, each
// counted against -max-tabs like an open tab). The room holds the
// signals' preset, setting and cursor; a bad cursor is refused naming its
// field, as a tab's would be.
func TestCreateRoomFromSignalsMakesNoSession(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	before := l.S.lab.Sessions.Count()
	for range 5 {
		code, _ := l.CreateRoom(t, `{"preset":"search-cache","cfg":{"max_ejection_percent":34},"cursor":4,"speed":"2x"}`)
		rec, _, err := l.S.rooms.lookup(t.Context(), code)
		if err != nil {
			t.Fatal(err)
		}
		if st := rec.State; st.Preset != "search-cache" || st.Cfg["max_ejection_percent"] != 34 || st.Anchor != 4 || st.Playing {
			t.Errorf("the room's state: %+v, want search-cache at cap 34, paused at frame 4", st)
		}
	}
	if after := l.S.lab.Sessions.Count(); after != before {
		t.Errorf("five rooms from signals made %d sessions", after-before)
	}
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/rooms", `{"preset":"search-cache","cursor":-1}`, "", "", "")
	if st != 422 || !strings.Contains(body, "cursor") || !strings.Contains(body, "allowed 0–") {
		t.Errorf("a room from a cursor of -1: %d %s, want 422 naming the cursor and its range", st, body)
	}
}
