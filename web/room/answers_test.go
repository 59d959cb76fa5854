package room

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"outlierlab/web/httperr"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/roombus"
)

func TestParseAnswerKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key, q, who string
		ok          bool
	}{
		{"K7QX2M.q.1a2b3c4d.a." + strings.Repeat("ab", 16), "1a2b3c4d", strings.Repeat("ab", 16), true},
		{"K7QX2M.q.1a2b3c4d.closed", "", "", false},
		{"K7QX2N.q.1a2b3c4d.a.ab", "", "", false},
		{"K7QX2M.q..a.ab", "", "", false},
		{"K7QX2M.q.1a.a.ab.cd", "", "", false},
	} {
		q, who, ok := parseAnswerKey("K7QX2M", c.key)
		if ok != c.ok || ok && (q != c.q || who != c.who) {
			t.Errorf("parseAnswerKey(%q) = %q, %q, %v", c.key, q, who, ok)
		}
	}
}

// The reveal's mark splits the answers exactly: one put before it is in
// the histogram, one put after it is refused (409), not silently lost.
func TestRoomAnswersCloseAtTheMark(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	ctx := t.Context()
	if err := l.S.rooms.putAnswer(ctx, code, q.ID, "before", "3", ""); err != nil {
		t.Fatal(err)
	}
	got, err := l.S.rooms.closeAnswers(ctx, code, q.ID)
	if err != nil || len(got) != 1 || got["before"].Answer != "3" {
		t.Fatalf("closeAnswers: %v, %v", got, err)
	}
	err = l.S.rooms.putAnswer(ctx, code, q.ID, "after", "4", "")
	if httperr.KindOf(err, httperr.KindInternal) != httperr.KindConflict || !strings.Contains(httperr.Text(err), "answers are closed") {
		t.Errorf("an answer after the mark: %v", err)
	}
	// A second reveal (another replica's, at once) finds the same mark.
	if again, err := l.S.rooms.closeAnswers(ctx, code, q.ID); err != nil || len(again) != 1 {
		t.Errorf("closeAnswers again: %v, %v", again, err)
	}
}

// Opening the next question purges the last one's answers from the bus and
// from the hubs: a room that asks many questions holds one's answers.
func TestRoomNextQuestionDropsAnswers(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	hub, err := l.S.rooms.open(t.Context(), code, "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.release("")
	q1 := openQuestion(t, l, code, key)
	for i := range 5 {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q1.ID+"&a=2", `{}`, code, "", att(t, l, code, fmt.Sprint(i))); st != 204 {
			t.Fatalf("answer: %d %s", st, body)
		}
	}
	roomtest.WaitUntil(t, "the hub has the 5 answers", func() bool { n, _ := l.S.rooms.answerCount(code, q1.ID, ""); return n == 5 })
	q2 := openQuestion(t, l, code, key)
	keys := func(q string) int {
		lister, err := l.Bus.KV.ListKeysFiltered(t.Context(), answersOf(code, q))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range lister.Keys() {
			n++
		}
		return n
	}
	if n := keys(q1.ID); n != 0 {
		t.Errorf("the first question's answers on the bus after the next one opened: %d, want 0", n)
	}
	roomtest.WaitUntil(t, "the hub forgets the first question's answers", func() bool {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		return hub.answers[q1.ID] == nil && hub.now.rec.State.Question != nil && hub.now.rec.State.Question.ID == q2.ID
	})
}

// An answer changes the question panel, not the lab: it wakes the room's
// streams through answersNext (their room part is sent, no redraw), not
// through the room's state channel, which has every stream snapshot its
// session.
func TestRoomAnswerWakesOnlyTheQuestion(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	q := openQuestion(t, l, code, key)
	f := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, f, "the question on the follower's page", func(ev webtest.Event) bool { return strings.Contains(ev.Data, `>0</span> answered`) })
	hub, err := l.S.rooms.open(t.Context(), code, "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.release("")
	hub.mu.Lock()
	roomNext, answersNext := hub.now.next, hub.answersNext
	hub.mu.Unlock()
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=2", `{}`, code, "", att(t, l, code, "one")); st != 204 {
		t.Fatalf("answer: %d %s", st, body)
	}
	select {
	case <-answersNext:
	case <-time.After(5 * time.Second):
		t.Fatal("the answer did not wake the question panels")
	}
	webtest.WaitFor(t, f, "the count at 1", func(ev webtest.Event) bool { return strings.Contains(ev.Data, `>1</span> answered`) })
	select {
	case <-roomNext:
		t.Error("the answer woke the room's state waiters (every stream redraws)")
	default:
	}
}
