package room

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

// Issue 34, item 8: one address clearing its cookie answered a poll 60
// times at once, then 12 times a minute, for as long as it liked. Now a
// room gives one client address a budget of attendee identities, counted
// on the bus: a script clearing its cookies from one address, through
// either of two replicas, gets the budget's answers in and no more (its
// next page a 429 naming the budget and who raises it), while another
// address still joins; the instructor's board shows the budget, the
// address at it, and the question panel that most answers come from one
// network; the instructor raises the budget, and the address gets as many
// more; out of range, or without the key, the budget does not change.
func TestRoomIDBudget(t *testing.T) {
	t.Parallel()
	const budget = 5
	lim := Limits{JoinsPerMinute: 100_000, JoinBurst: 100_000, IDsPerAddress: budget} // the budget alone limits the script
	la := startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, lim)
	lb := startRoomLab(t, la.Bus.Replica(), lim)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, la, code, key)
	board := roomtest.OpenStreamKey(t, la.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`), code, key)
	first := webtest.WaitFor(t, board, "the board at the server's default", roomtest.PatchOf(`id="room-board-ids"`, "up to <b>5</b>", "from a network (default)"))
	if strings.Contains(first.Data, "btn-ids-raise") {
		t.Errorf("the board offers to raise the budget before any network is near it: %s", first.Data)
	}

	// The script: a fresh browser each time (cookies cleared), its page
	// then its answer, on either replica in turn.
	script := func(n int) (answered int, refusals []string) {
		t.Helper()
		for i := range n {
			base := []string{la.TS.URL, lb.TS.URL}[i%2]
			c := clientFrom(t, "127.0.0.9")
			st, body := call(t, c, "GET", base+"/r/"+code, "")
			if st != 200 {
				refusals = append(refusals, fmt.Sprintf("%d %s", st, body))
				continue
			}
			if st, body := call(t, c, "POST", base+"/r/"+code+"/answer?q="+q.ID+"&a=9", `{}`); st != 204 {
				t.Fatalf("an answer under a fresh identity: %d %s", st, body)
			}
			answered++
		}
		return answered, refusals
	}
	answered, refusals := script(20)
	if answered != budget || len(refusals) != 20-budget {
		t.Fatalf("a script clearing its cookies from one address: %d answers in, %d refused; want the budget, %d, and the rest refused", answered, len(refusals), budget)
	}
	for _, want := range []string{"429 ", "Workshop " + code + " gives one network (client address) 5 attendee identities, and yours has had them all", "Ask your instructor to raise the limit"} {
		if !strings.Contains(refusals[0], want) {
			t.Errorf("the refused page lacks %q:\n%s", want, webtest.Head(refusals[0], 2000))
		}
	}
	// Another address (a classmate at home) still joins, and answers.
	other := clientFrom(t, "127.0.0.10")
	if st, body := call(t, other, "GET", lb.TS.URL+"/r/"+code, ""); st != 200 {
		t.Fatalf("another address's page: %d %s", st, webtest.Head(body, 300))
	}
	if st, body := call(t, other, "POST", lb.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=3", `{}`); st != 204 {
		t.Fatalf("another address's answer: %d %s", st, body)
	}
	webtest.WaitFor(t, board, "the board: the script's address at the budget", roomtest.PatchOf(`id="room-board-ids"`, "most from one: <b>5</b>", "at the limit: <b>1</b>", `id="btn-ids-raise"`, `/identities?per_address=10`))
	webtest.WaitFor(t, board, "the question panel: most answers from one network", roomtest.PatchOf(`id="room-question"`, "Most answers come from one network (5 of 6)", "up to 5 attendees here"))

	// The budget changes only with the key, and in range.
	for _, c := range []struct{ query, key, want string }{
		{"?per_address=0", key, "422 per_address: 0 is out of range (allowed 1–10000)"},
		{"?per_address=10001", key, "422 per_address: 10001 is out of range"},
		{"?per_address=2.5", key, "422 per_address: 2.5 is not a whole number (allowed 1–10000)"},
		{"?per_address=NaN", key, `422 per_address: "NaN" is not a number`},
		{"", key, `422 per_address: "" is not a number`},
		{"?per_address=500", "", "403 key:"},
	} {
		st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/identities"+c.query, "", code, c.key, "")
		if got := fmt.Sprintf("%d %s", st, body); !strings.HasPrefix(got, c.want) {
			t.Errorf("identities%s: %s, want %q", c.query, strings.TrimSpace(got), c.want)
		}
	}
	// The instructor raises it (the board's button, on the other
	// replica): the address gets as many more, and no more.
	st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/identities?per_address=10", "", code, key, "")
	var set struct{ IDsPerAddress int }
	if st != 200 || json.Unmarshal([]byte(body), &set) != nil || set.IDsPerAddress != 10 {
		t.Fatalf("raise the budget: %d %s", st, body)
	}
	webtest.WaitFor(t, board, "the board at the room's budget", roomtest.PatchOf(`id="room-board-ids"`, "up to <b>10</b>", "most from one: <b>5</b>"))
	if answered, _ := script(20); answered != 10-budget {
		t.Errorf("after the budget was raised to 10: %d more answers from the address, want %d", answered, 10-budget)
	}
	if st, body := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/question", "", code, key, ""); st != 200 || !strings.Contains(body, `"count":11`) || !strings.Contains(body, `"idsPerAddress":10`) {
		t.Errorf("the question, for the key holder: %d %s", st, body)
	}
}
