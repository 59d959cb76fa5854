package room

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/question"
	"outlierlab/web/room/record"
)

// A plan scene's question asked with one click, over two replicas: the
// ask path refuses what it must (no key or a wrong one 403, a made-up
// scene or a scene without a question 422 naming scene, a scene the room
// is not on or a room without a plan 409); the question asked is the
// scene's (kind, moment, the author's choices), whatever the page's form
// holds; the plan's answer is on the instructor's scene panel and board
// only, never on an attendee's page, the question's JSON or the room's
// state before the reveal; the board counts the answers right and wrong
// against the plan.
func TestRoomPlanAskScene(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	st, code, key, body := startPlanRoom(t, la, "plan:lightning")
	if st != 201 {
		t.Fatalf("start: %d %s", st, body)
	}
	// The pages of the room's first scene (the cap lesson): a page on
	// another is told to load the room's, and its stream sends the room's
	// panels only at the room's next change.
	presenter := roomtest.OpenStreamKey(t, la.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"lesson":"cap"`), code, key)
	follower := roomtest.OpenRoomStream(t, lb.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"lesson":"cap"`))
	// A stream that claims the instructor's role without the key is
	// refused, naming the key (issue 34: it could take over a tab).
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/lab/stream", roomtest.Sig(roomtest.TabFollower2, code, "present", `"preset":"search-cache"`), code, "", att(t, la, code, "pretender")); st != 403 || !strings.Contains(body, "key:") {
		t.Errorf("a keyless present stream: %d %s", st, body)
	}
	scenePanel := func(parts ...string) func(webtest.Event) bool { return roomtest.PatchOf(`id="room-scene"`, parts...) }
	webtest.WaitFor(t, presenter, "the instructor's first scene: its question and the plan's answer", scenePanel(
		`<b id="room-scene-question">Is h5 ejected at 40 s?</b>`, `id="btn-scene-ask"`, `/r/`+code+`/questions?scene=0`, `<b id="room-scene-expect">no</b>`))
	for name, events := range map[string]<-chan webtest.Event{"attendee": follower} {
		ev := webtest.WaitFor(t, events, name+"'s scene panel", scenePanel("One host fails a third of its searches"))
		if containsAny(ev.Data, "room-scene-expect", "btn-scene-ask", "room-scene-notes") {
			t.Errorf("the %s gets the instructor's parts of the scene panel: %s", name, ev.Data)
		}
	}

	ask := func(base, query, body, k string) (int, string) {
		t.Helper()
		return roomtest.Call(t, "POST", base+"/r/"+code+"/questions"+query, body, code, k, "")
	}
	noQuestion := func(what string) {
		t.Helper()
		rec, _, err := la.S.rooms.lookup(t.Context(), code)
		if err != nil || rec.State.Question != nil {
			t.Errorf("%s: refused, but the room has a question: %+v %v", what, rec.State.Question, err)
		}
	}
	for _, tt := range []struct {
		name, query, body, key string
		status                 int
		has                    string
	}{
		{"no key", "?scene=0", "", "", 403, "key:"},
		{"a wrong key", "?scene=0", "", "not-" + key, 403, "key:"},
		{"a made-up scene", "?scene=9", "", key, 422, "scene: 9 is not a scene of plan lightning (allowed 0–5)"},
		{"a negative scene", "", `{"scene":-1}`, key, 422, "scene: -1 is not a scene of plan lightning (allowed 0–5)"},
		{"not a number", "?scene=first", "", key, 422, `scene: "first" is not a scene number`},
		{"a scene the room is not on", "?scene=2", "", key, 409, "scene: 2 is not the room's scene: it is on 0 (one-bad-host)"},
		{"a choice without a scene", "", `{"qkind":"choice","qat":50}`, key, 422, "qkind: choice is asked from a plan's scene"},
	} {
		if st, body := ask(la.TS.URL, tt.query, tt.body, tt.key); st != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("%s: %d %s (want %d, %q)", tt.name, st, body, tt.status, tt.has)
		}
		noQuestion(tt.name)
	}
	free, fkey := la.CreateRoom(t, "")
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+free+"/questions?scene=0", "", free, fkey, ""); st != 409 || !strings.Contains(body, "scene: this room was not started from a plan") {
		t.Errorf("a room without a plan: %d %s", st, body)
	}
	scene := func(n string) {
		t.Helper()
		if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/scene?scene="+n, "", code, key, ""); st != 200 {
			t.Fatalf("scene %s: %d %s", n, st, body)
		}
	}
	scene("1")
	if st, body := ask(lb.TS.URL, "?scene=1", "", key); st != 422 || !strings.Contains(body, "scene: scene 1 (the-cap) has no question (allowed the scenes with one: 0, 2, 3, 4)") {
		t.Errorf("a scene without a question: %d %s", st, body)
	}
	noQuestion("a scene without a question")

	// Scene 2 asks how many hosts are out at 40 s; the page posts its
	// form's signals too (another kind, host and moment), which the
	// scene's question overrides.
	scene("2")
	st, body = ask(la.TS.URL, "?scene=2", `{"tab":"`+roomtest.TabPresenter+`","qkind":"ejected","qhost":"h2","qat":90}`, key)
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil || q.Kind != "out" || q.Text != "How many hosts are ejected at 40 s?" || q.AtMs != 40000 ||
		q.Scene == nil || *q.Scene != 2 || len(q.Choices) != 0 {
		t.Fatalf("ask scene 2: %d %s", st, body)
	}
	if strings.Contains(body, `"answer"`) {
		t.Errorf("the question's JSON carries an answer before the reveal: %s", body)
	}
	if rec, _, _ := la.S.rooms.lookup(t.Context(), code); strings.Contains(webtest.JSON(t, rec.State), `"answer"`) {
		t.Errorf("the room's state carries an answer before the reveal: %s", webtest.JSON(t, rec.State))
	}
	webtest.WaitFor(t, follower, "the scene's question on the attendee's page", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "How many hosts are ejected at 40 s?") && strings.Contains(ev.Data, `data-bind:qans`)
	})
	board := func(parts ...string) func(webtest.Event) bool {
		return roomtest.PatchOf(`id="room-board-scenes-sum"`, parts...)
	}
	webtest.WaitFor(t, presenter, "the board: three scenes shown, the third asked", board("Scenes: 3 of 6 shown, 0 questions revealed",
		`<td>3. Raise the cap to 34</td><td>now</td><td>How many hosts are ejected at 40 s? (1)</td><td class="room-board-answers">asked, not revealed yet</td>`,
		`<td>4. Out for 30 s, then 60, then 90</td><td>not yet</td>`))

	answer := func(base, who, a string) {
		t.Helper()
		if st, body := roomtest.Call(t, "POST", base+"/r/"+code+"/answer", `{"q":"`+q.ID+`","qans":`+a+`}`, code, "", att(t, la, code, who)); st != 204 {
			t.Fatalf("answer %s: %d %s", a, st, body)
		}
	}
	// Revealed on another scene, the answer would be that scene's run's.
	scene("3")
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != 409 || !strings.Contains(body, "question: it is scene 2's, and the room is on scene 3 now") {
		t.Errorf("a reveal on another scene: %d %s", st, body)
	}
	scene("2")
	answer(la.TS.URL, "ada", "1")
	answer(lb.TS.URL, "bo", `"2"`)
	answer(lb.TS.URL, "cy", "1")
	roomtest.WaitUntil(t, "replica B counts 3 answers", func() bool {
		_, body := roomtest.Call(t, "GET", lb.TS.URL+"/r/"+code+"/question", "", code, "", "")
		return strings.Contains(body, `"count":3`)
	})
	st, body = roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	if st != 200 || json.Unmarshal([]byte(body), &q) != nil || q.Answer != "1" || q.Total != 3 {
		t.Fatalf("reveal: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the histogram, the engine's answer 1", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, `The engine says <b class="room-q-answer">1</b>`)
	})
	webtest.WaitFor(t, presenter, "the board: 2 right, 1 wrong", board("Scenes: 4 of 6 shown, 1 question revealed",
		`<td class="room-board-answers">3 answered: <b>2 right</b>, 1 wrong`))

	// Scene 4, a choice: the author's text and choices, in the room's
	// order (course.ChoiceOrder by the code, as the room's lesson pages
	// order a prediction); the engine's answer is the choice whose check
	// holds on the room's run.
	scene("4")
	st, body = ask(la.TS.URL, "", `{"scene":4}`, key)
	authors := []string{"Only to the hosts still in", "To every host, ejected or not"}
	var roomOrder []string
	for _, i := range course.ChoiceOrder(code, question.PlanChoiceKey("lightning", 4), len(authors)) {
		roomOrder = append(roomOrder, authors[i])
	}
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil || q.Kind != "choice" || q.Text != "At 50 s most hosts are ejected. Where does the traffic go?" ||
		strings.Join(q.Choices, "|") != strings.Join(roomOrder, "|") {
		t.Fatalf("ask scene 4: %d %s, want the choices %q", st, body, roomOrder)
	}
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/answer", `{"q":"`+q.ID+`","qans":"Nowhere"}`, code, "", att(t, la, code, "ada")); st != 422 || !strings.Contains(body, "answer:") {
		t.Errorf("not one of the choices: %d %s", st, body)
	}
	answer(lb.TS.URL, "ada", `"Only to the hosts still in"`)
	roomtest.WaitUntil(t, "replica A counts 1 answer", func() bool {
		_, body := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/question", "", code, "", "")
		return strings.Contains(body, `"count":1`)
	})
	st, body = roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	if st != 200 || json.Unmarshal([]byte(body), &q) != nil || q.Answer != "To every host, ejected or not" {
		t.Fatalf("reveal the choice: %d %s", st, body)
	}
	webtest.WaitFor(t, presenter, "the board: the choice answered wrong", board("Scenes: 5 of 6 shown, 2 questions revealed",
		`<td>5. A burst, an 80% cap, and panic</td><td>now</td>`, `1 answered: <b>0 right</b>, 1 wrong`))
	const want = `[{"scene":0},{"scene":1},{"scene":2,"asked":true,"revealed":true,"answered":3,"right":2},{"scene":3},{"scene":4,"asked":true,"revealed":true,"answered":1}]`
	var got string
	roomtest.WaitUntil(t, "replica B has the room's progress", func() bool {
		rec, _, err := lb.S.rooms.lookup(t.Context(), code)
		got = webtest.JSON(t, rec.State.Progress)
		return err == nil && got == want
	})
}

// The recording names each scene: an entry of a plan room carries the
// scene it was on (so an export stands alone), the room's move to a
// scene reads "Instructor moved the room to scene 3 of 6, …", the start
// names the plan, and the timeline's marks of those entries say so.
func TestRoomPlanRecording(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
	for _, n := range []string{"1", "2"} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene="+n, "", code, key, ""); st != 200 {
			t.Fatalf("scene %s: %d %s", n, st, body)
		}
	}
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions?scene=2", "", code, key, ""); st != 201 {
		t.Fatalf("ask: %d %s", st, body)
	}
	entries, err := l.S.rooms.timeline.Read(t.Context(), code)
	if err != nil || len(entries) != 4 {
		t.Fatalf("the recording: %d entries, %v", len(entries), err)
	}
	rows := recordingRows(t, l.TS.URL, code)
	if len(rows) != 4 {
		t.Fatalf("the recording's page lists %d entries, want 4", len(rows))
	}
	for i, want := range []string{
		`The workshop started from the plan "Outlier detection in 15 minutes" on scene 1 of 6, "One host fails a third of its searches" (lesson cap, paused at 30 s)`,
		`Instructor moved the room to scene 2 of 6, "The cap that ejects nothing" (lesson cap, paused at 40 s)`,
		`Instructor moved the room to scene 3 of 6, "Raise the cap to 34" (lesson cap step cap-34, paused at 30 s)`,
		`Question: How many hosts are ejected at 40 s? — the room waits before 40 s for the answers`,
	} {
		if got := rows[i].What; got != want {
			t.Errorf("entry %d: %q, want %q", i, got, want)
		}
	}
	if sc := entries[2].Scene; sc == nil || *sc != (record.EntryScene{Plan: "Outlier detection in 15 minutes", N: 3, Of: 6, ID: "cap-34", Title: "Raise the cap to 34"}) {
		t.Errorf("the scene entry's scene: %+v", sc)
	}
	if got := rows[3].State; !strings.HasPrefix(got, "scene 3 of 6 (cap-34), lesson cap step cap-34") {
		t.Errorf("the question's state in words: %q", got)
	}
	_, page, _ := getRoomPage(t, l.TS.URL, "/r/"+code+"/recording", code, "")
	for _, part := range []string{`class="rec-mark rec-scene"`, `<span class="rec-key rec-scene"></span> scene`} {
		if !strings.Contains(page, part) {
			t.Errorf("the recording's page has no %q", part)
		}
	}
	// The mark's time is the recording's own, a second or more after its
	// start on a loaded machine (CI: 00:01).
	if mark := regexp.MustCompile(`aria-label="\d\d:\d\d: Instructor moved the room to scene 3 of 6, &#34;Raise the cap to 34&#34;`); !mark.MatchString(page) {
		t.Errorf("the recording's page has no mark %q", mark)
	}
	_, export := roomtest.Call(t, "GET", l.TS.URL+"/r/"+code+"/recording.json", "", code, "", "")
	if !strings.Contains(export, `"scene":{"plan":"Outlier detection in 15 minutes","n":3,"of":6,"id":"cap-34","title":"Raise the cap to 34"}`) {
		t.Errorf("the export does not name the scene: %.400s", export)
	}
	if strings.Contains(export, `"answer"`) {
		t.Errorf("the export carries an answer before the reveal")
	}
}
