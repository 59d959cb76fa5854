package room

import (
	"strings"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/roombus"
)

// A room's run passes the budget as any tab's: the instructor's command
// at the settings (flapping at 3000 rps over 50 hosts, five
// retries into hosts that serve 10 requests a second; issue 34 item 3)
// is a 422 naming what would fit, and the room is not moved (nothing is
// published for its followers to make); a follower's is refused too.
func TestRoomCommandOverBudget(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"flapping"}`)
	cfg := `"preset":"flapping","seq":1,"cfg":{"hosts":50,"rps":3000,"interval":1,"num_retries":5,"fault_rate":1,"max_retries":100000,` +
		`"active_hc":true,"hc_interval":1,"lb_policy":"least_request","capacity_rps":10,"previous_hosts":true}`
	st, body := roomtest.Post(t, l.TS.URL, "set", roomtest.Sig(roomtest.TabPresenter, code, "present", cfg), code, key)
	if st != 422 || !strings.Contains(body, "rps: this run would take about") || !strings.Contains(body, "would fit") {
		t.Fatalf("instructor set: %d %s", st, body)
	}
	rec, _, err := l.S.rooms.lookup(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State.Cfg["rps"] != 0 || rec.State.Cfg["capacity_rps"] != 0 {
		t.Errorf("the room moved to the refused run: %v", rec.State.Cfg)
	}
	att := roomtest.AttendeeCookie(t, l.TS.URL, code)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/lab/cmd/set", roomtest.Sig(roomtest.TabFollower, code, "follow", cfg), code, "", att.Value); st != 422 || !strings.Contains(body, "would fit") {
		t.Errorf("follower set: %d %s", st, body)
	}
}
