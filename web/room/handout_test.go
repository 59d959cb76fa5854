package room

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/room/record"
)

// A room's handout shows what the room answered to a scene's question
// once it was revealed, with no key (attendees read it after class), and
// says which questions the room did not reveal. The present page links
// to it. A room that ran no plan has none (404), nor has a code that
// names no room.
func TestRoomHandout(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	// The scene's question asked with its button (?scene=0), or made by
	// hand on the form with the same host and moment: the handout shows
	// the room's answers either way.
	for _, ask := range []string{`{"scene":0}`, `{"qkind":"ejected","qhost":"h5","qat":40}`} {
		_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
		// Scene 1's question, as the room asks it; three attendees answer.
		// Before the reveal the handout shows no answers.
		askScene1(t, l, code, key, ask, func() {
			status, page, _ := getRoomPage(t, l.TS.URL, "/r/"+code+"/handout", "", "")
			if status != http.StatusOK || strings.Contains(page, `class="room-hist-row`) || !strings.Contains(page, "Workshop "+code+" did not reveal this question.") {
				t.Fatalf("before the reveal: %d", status)
			}
		})
		status, page, _ := getRoomPage(t, l.TS.URL, "/r/"+code+"/handout", "", "")
		if status != http.StatusOK {
			t.Fatalf("the room's handout: %d", status)
		}
		for _, want := range []string{
			"as run in workshop <span class=\"room-code\">" + code + "</span>",
			"What workshop <span class=\"room-code\">" + code + "</span> answered (3 answers):",
			`<span class="room-hist-label">no</span>`, `<span class="room-hist-n">2</span>`,
			`<div class="room-hist-row right"><span class="room-hist-label">no</span>`,
			"Workshop " + code + " did not reveal this question.", // the other scenes' questions
			`href="/r/` + code + `/recording"`, `href="/plans/lightning/handout"`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the room's handout has no %q", want)
			}
		}
		if strings.Contains(page, `class="handout-warn"`) {
			t.Error("a warning: the room's run answered as the plan's scene does")
		}
		if n := strings.Count(page, `class="room-hist-row`); n != 2 {
			t.Errorf("%d histogram bars, want the one question's 2", n)
		}
		if _, page, _ := getRoomPage(t, l.TS.URL, "/r/"+code+"/present", code, key); !strings.Contains(page, `href="/r/`+code+`/handout"`) {
			t.Error("the present page has no link to the handout")
		}
	}
	_, code, _, _ := startPlanRoom(t, l, "plan:lightning")
	plain, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	for _, tt := range []struct {
		path   string
		status int
		has    string
	}{
		{"/r/" + plain + "/handout", 404, "Workshop " + plain + " was not started from a workshop plan"},
		{"/r/ZZZZZZ/handout", 404, "There is no workshop ZZZZZZ"},
		{"/r/K0QX/handout", 404, "is not a workshop code"},
		{"/r/" + code + "/handout?scene=1", 400, "scene: is not a parameter of a handout"},
		{"/", 200, `href="/plans/lightning/handout"`}, // the plans' list
	} {
		status, body, _ := getRoomPage(t, l.TS.URL, tt.path, "", "")
		if status != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("GET %s: %d, want %d with %q", tt.path, status, tt.status, tt.has)
		}
	}
}

// askScene1 asks lightning's first question in room code ("Is h5 ejected
// at 40 s?") with the question request ask, has three attendees answer
// (one yes, two no), runs before (if not nil), and reveals it.
func askScene1(t *testing.T, l *roomLab, code, key, ask string, before func()) {
	t.Helper()
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", ask, code, key, "")
	var q record.Question
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open: %d %s", st, body)
	}
	for name, a := range map[string]string{"ann": "yes", "bob": "no", "cat": "no"} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a="+a, `{}`, code, "", att(t, l, code, name)); st != http.StatusNoContent {
			t.Fatalf("answer %s: %d %s", a, st, body)
		}
	}
	if before != nil {
		before()
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != http.StatusOK {
		t.Fatalf("reveal: %d %s", st, body)
	}
}
