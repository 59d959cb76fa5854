package room

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/recording"
	"outlierlab/web/roombus"
	"outlierlab/web/tabstate"
)

// twoReplicas is replica A with the embedded bus open to B, and B.
func twoReplicas(t *testing.T) (a, b *roomLab) {
	a = startRoomLab(t, roombus.BusOptions{Listen: "127.0.0.1:0"}, Limits{})
	b = startRoomLab(t, a.Bus.Replica(), Limits{})
	return a, b
}

// The acceptance test of predict-then-reveal over two replicas and one
// NATS: 30 attendees (half on each replica) answer "Is h5 ejected at
// 60 s?" on search-cache, whose 10% cap refuses h5's ejection (so the
// engine says no); the instructor sees the count, not the split; the
// reveal patches every attendee's panel with the histogram and the
// engine's answer marked; bad input is refused.
func TestRoomQuestionReveal(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	bases := []string{la.TS.URL, lb.TS.URL}
	follower := roomtest.OpenRoomStream(t, lb.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)

	st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"ejected","qhost":"h5","qat":60}`, code, "", "")
	if st != 403 {
		t.Fatalf("a question without the key: %d %s", st, body)
	}
	for _, bad := range []string{`{"qkind":"ejected","qhost":"h9","qat":60}`, `{"qkind":"ejected","qhost":"h5","qat":-1}`, `{"qkind":"guess"}`, `{"qkind":"out","qat":9999}`} {
		if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", bad, code, key, ""); st != 422 {
			t.Errorf("question %s: %d %s", bad, st, body)
		}
	}
	st, body = roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"ejected","qhost":"h5","qat":60}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil || q.Text != "Is h5 ejected at 60 s?" || q.Hold != 5 {
		t.Fatalf("open: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the question on the follower's page", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "Is h5 ejected at 60 s?") && strings.Contains(ev.Data, ">0</span> answered")
	})

	answer30(t, la, bases, code, q.ID) // 20 yes, 10 no
	// A second answer replaces the first: attendee 0 changes its mind.
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/answer", `{"q":"`+q.ID+`","qans":"no"}`, code, "", att(t, la, code, "attendee-00")); st != 204 {
		t.Fatalf("second answer: %d %s", st, body)
	}
	for _, c := range []struct {
		path, body string
		want       int
	}{
		{"/answer?q=nosuch&a=yes", `{}`, 404},
		{"/answer?q=" + q.ID + "&a=maybe", `{}`, 422},
	} {
		if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+c.path, c.body, code, "", att(t, la, code, "attendee-99")); st != c.want {
			t.Errorf("%s: %d %s (want %d)", c.path, st, body, c.want)
		}
	}
	// The instructor sees the count, not the split: the count as replica
	// B has heard it (the answers went to both).
	roomtest.WaitUntil(t, "replica B counts 30 answers", func() bool {
		st, body = roomtest.Call(t, "GET", lb.TS.URL+"/r/"+code+"/question", "", code, "", "")
		return strings.Contains(body, `"count":30`)
	})
	if st != 200 || !strings.Contains(body, `"count":30`) || strings.Contains(body, `"hist"`) || strings.Contains(body, `"answer":"no"`) {
		t.Fatalf("status before the reveal: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the count at 30", func(ev webtest.Event) bool { return strings.Contains(ev.Data, ">30</span> answered") })

	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/questions/nosuch/reveal", "", code, key, ""); st != 404 {
		t.Errorf("reveal of an unknown question: %d %s", st, body)
	}
	st, body = roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	if st != 200 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("reveal: %d %s", st, body)
	}
	want := []record.HistBar{{Answer: "yes", N: 19}, {Answer: "no", N: 11, Right: true}}
	if q.Answer != "no" || q.Total != 30 || fmt.Sprint(q.Hist) != fmt.Sprint(want) {
		t.Fatalf("revealed: %+v", q)
	}
	webtest.WaitFor(t, follower, "the histogram with the engine's answer", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, "✓ the engine's answer") && strings.Contains(ev.Data, `room-hist-row right`) && strings.Contains(ev.Data, "The engine says <b class=\"room-q-answer\">no</b>")
	})
	webtest.WaitFor(t, follower, "playback on after the reveal", roomtest.SignalPatch(`"playing":true`))
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=yes", `{}`, code, "", att(t, la, code, "attendee-01")); st != 409 {
		t.Errorf("answer after the reveal: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, ""); st != 409 {
		t.Errorf("second reveal: %d %s", st, body)
	}
}

// Bring everyone here and Lock are room state on the bus: followers on
// both replicas that broke away come back, and while the room is locked
// their commands are refused (409) and they stay; unlocked, they may
// break away again.
func TestRoomSummonAndLock(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	tabs := []string{roomtest.TabFollower, roomtest.TabFollower2}
	bases := []string{la.TS.URL, lb.TS.URL}
	var streams []<-chan webtest.Event
	for i, base := range bases {
		ev := roomtest.OpenRoomStream(t, base, code, roomtest.Sig(tabs[i], code, "follow", `"preset":"search-cache"`))
		webtest.WaitFor(t, ev, "the first redraw", roomtest.Charted)
		streams = append(streams, ev)
	}
	breakAway := func(i int) (int, string) {
		return roomtest.Post(t, bases[i], "set", roomtest.Sig(tabs[i], code, "follow", `"seq":9,"cfg":{"max_ejection_percent":80}`), code, "")
	}
	for i := range bases {
		if st, body := breakAway(i); st != 204 {
			t.Fatalf("follower %d breaks away: %d %s", i, st, body)
		}
		webtest.WaitFor(t, streams[i], "the break-away", roomtest.SignalPatch(`"follow":false`))
	}
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/summon", "", code, "", ""); st != 403 {
		t.Fatalf("summon without the key: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/summon", "", code, key, ""); st != 200 || !strings.Contains(body, `"summon":1`) {
		t.Fatalf("summon: %d %s", st, body)
	}
	for i := range bases {
		roomtest.WaitEach(t, streams[i], fmt.Sprintf("follower %d brought back", i), `"follow":true`, `"max_ejection_percent":10`)
	}

	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/lock?on=yes", "", code, key, ""); st != 422 {
		t.Fatalf("lock?on=yes: %d %s", st, body)
	}
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/lock?on=1", "", code, key, ""); st != 200 || !strings.Contains(body, `"lock":true`) {
		t.Fatalf("lock: %d %s", st, body)
	}
	for i := range bases {
		// Wait until replica i has the lock, then try to break away.
		roomtest.WaitUntil(t, "replica sees the lock", func() bool {
			rec, _, err := []*roomLab{la, lb}[i].S.rooms.lookup(t.Context(), code)
			return err == nil && rec.State.Lock
		})
		if st, body := breakAway(i); st != 409 || !strings.Contains(body, "locked") {
			t.Fatalf("follower %d while locked: %d %s", i, st, body)
		}
	}
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/lock?on=0", "", code, key, ""); st != 200 || !strings.Contains(body, `"lock":false`) {
		t.Fatalf("unlock: %d %s", st, body)
	}
	roomtest.WaitUntil(t, "replica B sees the unlock", func() bool {
		rec, _, err := lb.S.rooms.lookup(t.Context(), code)
		return err == nil && !rec.State.Lock
	})
	if st, body := breakAway(1); st != 204 {
		t.Fatalf("follower after unlock: %d %s", st, body)
	}
	webtest.WaitFor(t, streams[1], "the break-away after unlock", roomtest.SignalPatch(`"follow":false`))
}

// The board on the instructor's page counts the attendees of both
// replicas, following or exploring, with their last answer; an attendee
// whose stream ends leaves it.
func TestRoomBoard(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	presenter := roomtest.OpenStreamKey(t, la.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`), code, key)
	f1, id1 := roomtest.OpenRoomStreamCtx(t, t.Context(), la.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, f1, "the first redraw", roomtest.Charted)
	f2ctx, f2stop := context.WithCancel(context.Background())
	t.Cleanup(f2stop)
	att2 := roomtest.AttendeeCookie(t, lb.TS.URL, code)
	id2, _, _ := strings.Cut(att2.Value, ".")
	f2 := roomtest.OpenStreamCtx(t, f2ctx, lb.TS.URL, roomtest.Sig(roomtest.TabFollower2, code, "follow", `"preset":"search-cache"`), att2)
	webtest.WaitFor(t, f2, "the first redraw", roomtest.Charted)
	board := func(parts ...string) func(webtest.Event) bool { return roomtest.PatchOf(`id="room-board"`, parts...) }
	webtest.WaitFor(t, presenter, "two following", board("<b>2</b> following, <b>0</b> exploring", record.Nickname(id1), record.Nickname(id2)))

	_, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":"60"}`, code, key, "")
	var q record.Question
	_ = json.Unmarshal([]byte(body), &q)
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/answer", `{"tab":"`+roomtest.TabFollower2+`","q":"`+q.ID+`","qans":3}`, code, "", att2.Value); st != 204 {
		t.Fatalf("answer: %d %s", st, body)
	}
	if st, _ := roomtest.Post(t, la.TS.URL, "set", roomtest.Sig(roomtest.TabFollower, code, "follow", `"seq":9,"cfg":{"max_ejection_percent":80}`), code, ""); st != 204 {
		t.Fatal("break away")
	}
	webtest.WaitFor(t, presenter, "one exploring, an answer on the board", board("<b>1</b> following, <b>1</b> exploring", "<td>3</td>"))
	f2stop()
	webtest.WaitFor(t, presenter, "the attendee gone", board("<b>0</b> following, <b>1</b> exploring"))
}

// The recording of a test workshop, replayed on a server of its own, gives
// the same runs, frame for frame, as replica B drew live for its
// followers; the JSON needs the instructor key; the page lists it.
func TestRoomRecordingReplay(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	follower := roomtest.OpenRoomStream(t, lb.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first redraw", roomtest.Charted)
	hub := lb.S.rooms.hub(code)
	seen := []liveState{}
	take := func() {
		n := hub.current()
		b, _ := json.Marshal(n.rec.State)
		seen = append(seen, liveState{string(b), n.run})
	}
	take()
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`)
	actions := []func(){
		func() {
			roomtest.Post(t, la.TS.URL, "set", strings.Replace(present, "}", `,"seq":1,"cfg":{"max_ejection_percent":34}}`, 1), code, key)
		},
		func() {
			roomtest.Post(t, la.TS.URL, "speed", strings.Replace(present, "}", `,"speed":"16"}`, 1), code, key)
		},
		func() { roomtest.Post(t, la.TS.URL, "play", present, code, key) },
		func() {
			roomtest.Post(t, la.TS.URL, "inject", strings.Replace(present, "}", `,"injectHost":"h2"}`, 1), code, key)
		},
		func() {
			roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions", `{"qkind":"out","qat":80}`, code, key, "")
		},
		func() {
			var q record.Question
			_, body := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/question", "", code, "", "")
			var st struct{ Question record.Question }
			_ = json.Unmarshal([]byte(body), &st)
			q = st.Question
			roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a=1", `{}`, code, "", att(t, la, code, "someone"))
			roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
		},
	}
	for _, act := range actions {
		before := hub.current().rev
		act()
		roomtest.WaitUntil(t, "replica B has the change", func() bool { return hub.current().rev > before })
		take()
	}
	// The export is read as the player page is: with the room's code, no
	// key (one rule, issue 22 item 6); it never holds the key.
	if st, body := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/recording.json", "", code, "", ""); st != 200 || strings.Contains(body, key) {
		t.Fatalf("recording without the key: %d (or it holds the key)", st)
	}
	st, body := roomtest.Call(t, "GET", la.TS.URL+"/r/"+code+"/recording.json", "", code, key, "")
	var rec recording.Recording
	if st != 200 || json.Unmarshal([]byte(body), &rec) != nil {
		t.Fatalf("recording: %d %s", st, webtest.Head(body, 300))
	}
	// The presenter's commands before the reveal each published once; the
	// question and the reveal are entries of their own.
	if len(rec.Entries) != len(seen) {
		t.Fatalf("recording has %d entries, the live room went through %d states: %s", len(rec.Entries), len(seen), webtest.Head(body, 2000))
	}
	checkReplay(t, rec, seen)
	if got := rec.Entries[len(rec.Entries)-1]; got.Kind != "reveal" || got.State.Question.Answer == "" {
		t.Errorf("last entry: %+v", got)
	}
	st, page := roomtest.Call(t, "GET", lb.TS.URL+"/r/"+code+"/recording", "", code, "", "")
	if st != 200 || !strings.Contains(page, "engine: ") || !strings.Contains(page, "/lab?preset=search-cache&amp;max_ejection_percent=34") {
		t.Errorf("recording page: %d %s", st, webtest.Head(page, 400))
	}
}

// Spotlight: the instructor's host or time range reaches the followers on
// both replicas as the spot signal; bad ones are refused naming the field.
func TestRoomSpotlight(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	code, key := la.CreateRoom(t, `{"preset":"search-cache"}`)
	var streams []<-chan webtest.Event
	for i, base := range []string{la.TS.URL, lb.TS.URL} {
		ev := roomtest.OpenRoomStream(t, base, code, roomtest.Sig([]string{roomtest.TabFollower, roomtest.TabFollower2}[i], code, "follow", `"preset":"search-cache"`))
		webtest.WaitFor(t, ev, "the first redraw", roomtest.Charted)
		streams = append(streams, ev)
	}
	for _, c := range []struct {
		q, body string
		want    int
		msg     string
	}{
		{"?host=h9", "", 422, "host: \"h9\" is not a host"},
		{"?from=60&to=40", "", 422, "from: 60–40 s is not a time range"},
		{"?from=x", "", 422, "from: \"x\" is not a number"},
		{"?log=lg-x", "", 422, "log: \"lg-x\" is not a decision-log line"},
		{"?log=lg-99-0", "", 422, "log: \"lg-99-0\" is not a line of this run's log (it has 30 intervals)"},
		{"?log=lg-3-7", "", 422, "log: \"lg-3-7\" is not a line of this run's log"},
		{"", `{"log":"3-0"}`, 422, "log: \"3-0\" is not a decision-log line"},
	} {
		if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/spotlight"+c.q, c.body, code, key, ""); st != c.want || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %s", c.q, st, body)
		}
	}
	if st, _ := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/spotlight?host=h5", "", code, "", ""); st != 403 {
		t.Errorf("spotlight without the key: %d", st)
	}
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/spotlight", `{"host":"h5","from":40,"to":60}`, code, key, ""); st != 200 {
		t.Fatalf("spotlight: %d %s", st, body)
	}
	for _, ev := range streams {
		webtest.WaitFor(t, ev, "the spotlight", roomtest.SignalPatch(`"spot":{"host":"h5","from":"40 s","to":"60 s","fromMs":40000,"toMs":60000,"log":""}`))
	}
	// A log line: h5's overflow at 40 s (lg-3-0) speaks of the interval
	// that ended at 40 s, 30–40 s.
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/spotlight?log=lg-3-0", "", code, key, ""); st != 200 || !strings.Contains(body, `"host":"h5","from":"30 s","to":"40 s"`) {
		t.Fatalf("spotlight a log line: %d %s", st, body)
	}
	for _, ev := range streams {
		webtest.WaitFor(t, ev, "the log line's spotlight", roomtest.SignalPatch(`"spot":{"host":"h5","from":"30 s","to":"40 s","fromMs":30000,"toMs":40000,"log":"lg-3-0"}`))
	}
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/spotlight?clear=1", "", code, key, ""); st != 200 {
		t.Fatalf("clear: %d %s", st, body)
	}
	for _, ev := range streams {
		webtest.WaitFor(t, ev, "the spotlight cleared", roomtest.SignalPatch(`"spot":{"host":"","from":"","to":"","fromMs":0,"toMs":0,"log":""}`))
	}
}

// The instructor's own page holds at the question too (its request names
// its tab), and plays on at the reveal.
func TestRoomQuestionHoldsInstructor(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`)
	ev := roomtest.OpenStreamKey(t, l.TS.URL, present, code, key)
	webtest.WaitFor(t, ev, "the first redraw", roomtest.Charted)
	for _, c := range [][2]string{{"speed", strings.Replace(present, "}", `,"speed":"instant"}`, 1)}, {"play", present}} {
		if st, body := roomtest.Post(t, l.TS.URL, c[0], c[1], code, key); st != 204 {
			t.Fatalf("%s: %d %s", c[0], st, body)
		}
	}
	cursor := func() int {
		st := l.S.lab.Sessions.Get(roomtest.TabPresenter).State()
		return st.Playback.CursorAt(l.S.lab.Now(), len(st.Run.Frames))
	}
	roomtest.WaitUntil(t, "the end of the run", func() bool { return cursor() == 30 })
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"tab":"`+roomtest.TabPresenter+`","qkind":"ejected","qhost":"h5","qat":60}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open: %d %s", st, body)
	}
	roomtest.WaitUntil(t, "the instructor's page held before 60 s", func() bool { return cursor() == 5 })
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", `{"tab":"`+roomtest.TabPresenter+`"}`, code, key, ""); st != 200 {
		t.Fatalf("reveal: %d %s", st, body)
	}
	roomtest.WaitUntil(t, "the instructor's page playing on", func() bool { return cursor() == 30 })
}

// answer30 has 30 attendees, alternating between the replicas, answer
// question id: the first 20 yes, the others no.
func answer30(t *testing.T, l *roomLab, bases []string, code, id string) {
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := "no"
			if i < 20 {
				a = "yes"
			}
			att := att(t, l, code, fmt.Sprintf("attendee-%02d", i))
			if st, body := roomtest.Call(t, "POST", bases[i%2]+"/r/"+code+"/answer?q="+id+"&a="+a, `{}`, code, "", att); st != 204 {
				t.Errorf("answer %d: %d %s", i, st, body)
			}
		}()
	}
	wg.Wait()
}

// liveState is a state of the room as replica B took it, and the run it
// drew for its followers.
type liveState struct {
	state string
	run   *tabstate.Run
}

// checkReplay replays every entry of rec on a server of its own and
// compares its state and frames with the live ones.
func checkReplay(t *testing.T, rec recording.Recording, seen []liveState) {
	t.Helper()
	fresh, err := newServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fresh.lab.Shutdown)
	for i, e := range rec.Entries {
		b, _ := json.Marshal(e.State)
		if string(b) != seen[i].state {
			t.Fatalf("entry %d (%s): state %s, live %s", i, e.Kind, b, seen[i].state)
		}
		in, _, err := e.State.Inputs(fresh.lab.Lessons)
		if err != nil {
			t.Fatal(err)
		}
		run, err := fresh.lab.Runs.Get(in)
		if err != nil {
			t.Fatal(err)
		}
		if run == seen[i].run || !reflect.DeepEqual(run.Frames, seen[i].run.Frames) {
			t.Fatalf("entry %d (%s): the replayed frames differ from the live ones", i, e.Kind)
		}
	}
}

// A lesson room asks the lesson's own prediction: its choices, held at
// its pause_at (30 s: three frames), and the reveal marks the lesson's
// answer, which engine/course checks against the engine.
func TestRoomLessonQuestion(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"lesson":"cap"}`)
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"qkind":"lesson"}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil || q.Hold != 3 || len(q.Choices) != 3 || !strings.HasPrefix(q.Text, "Six hosts") {
		t.Fatalf("open: %d %s", st, body)
	}
	// The choices come in the room's order (web/room/question): someone
	// answers the one after the right one, wrongly.
	const right = "It is detected, and the cap refuses the ejection: one host of six would be more than 10% ejected."
	r := slices.Index(q.Choices, right)
	if r < 0 {
		t.Fatalf("the right answer is not among the choices %q", q.Choices)
	}
	wrong := (r + 1) % len(q.Choices)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/answer?q="+q.ID+"&a="+url.QueryEscape(q.Choices[wrong]), `{}`, code, "", att(t, l, code, "someone")); st != 204 {
		t.Fatalf("answer: %d %s", st, body)
	}
	st, body = roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions/"+q.ID+"/reveal", "", code, key, "")
	if st != 200 || json.Unmarshal([]byte(body), &q) != nil || q.Answer != right || q.Hist[wrong].N != 1 || q.Hist[wrong].Right || !q.Hist[r].Right || q.Hist[r].N != 0 {
		t.Fatalf("reveal: %d %s", st, body)
	}
	// The free lab has no lesson prediction.
	code2, key2 := l.CreateRoom(t, `{"preset":"search-cache"}`)
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code2+"/questions", `{"qkind":"lesson"}`, code2, key2, ""); st != 422 || !strings.Contains(body, "qkind: the room shows no lesson") {
		t.Errorf("lesson question in the free lab: %d %s", st, body)
	}
}

// An attendee arriving changes the instructor's board, not what followers
// show: it wakes the board's waiters, not the room's (a room of 500 would
// otherwise wake every stream at every arrival).
func TestRoomPresenceWakesOnlyTheBoard(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	presenter := roomtest.OpenStreamKey(t, l.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`), code, key)
	webtest.WaitFor(t, presenter, "the first redraw", roomtest.Charted)
	hub, err := l.S.rooms.open(context.Background(), code, "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.release("")
	hub.mu.Lock()
	roomNext, boardNext, gen := hub.now.next, hub.boardNext, hub.boardGen
	hub.mu.Unlock()
	f := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, f, "the follower's first redraw", roomtest.Charted)
	select {
	case <-boardNext:
	case <-time.After(5 * time.Second):
		t.Fatal("the board's waiters were not woken by the arrival")
	}
	webtest.WaitFor(t, presenter, "the attendee on the board", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, `id="room-board"`) && strings.Contains(ev.Data, "<b>1</b> following")
	})
	select {
	case <-roomNext:
		t.Error("the arrival woke every stream of the room")
	default:
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.boardGen == gen {
		t.Error("the board did not change")
	}
}

// A change to the room's state starts from the state the replica's hub
// has: one message on the bus when it is the latest; when it is stale (the
// bus moved on before the hub heard), the revision check refuses it and
// the change is made again on the bus's latest, losing nothing.
func TestRoomUpdateFromHubState(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, _ := l.CreateRoom(t, `{"preset":"search-cache"}`)
	ctx := context.Background()
	hub, err := l.S.rooms.open(ctx, code, "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.release("")
	set := func(k string, v float64) uint64 {
		t.Helper()
		_, rev, err := l.S.rooms.updateState(ctx, code, "state", func(st *record.State) error {
			if st.Cfg == nil {
				st.Cfg = map[string]float64{}
			}
			st.Cfg[k] = v
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	rev := set("max_ejection_percent", 20)
	roomtest.WaitUntil(t, "the hub at the new state", func() bool { return hub.current().rev == rev })
	s0 := l.Bus.Conn().Stats()
	rev = set("max_ejection_percent", 30)
	if s1 := l.Bus.Conn().Stats(); s1.OutMsgs-s0.OutMsgs != 2 { // the put and the recording's entry
		t.Errorf("a change from the hub's latest state sent %d messages, want 2", s1.OutMsgs-s0.OutMsgs)
	}
	roomtest.WaitUntil(t, "the hub at the new state", func() bool { return hub.current().rev == rev })

	// The hub falls behind: it still has the state of two changes ago.
	stale := hub.current()
	rev = set("consecutive_5xx", 7)
	roomtest.WaitUntil(t, "the hub at the new state", func() bool { return hub.current().rev == rev })
	hub.mu.Lock()
	keep := hub.now
	hub.now.rec, hub.now.raw, hub.now.rev = stale.rec, stale.raw, stale.rev
	hub.mu.Unlock()
	rev2 := set("base_ejection_time", 60)
	hub.mu.Lock()
	if hub.now.rev == stale.rev { // the watch has not brought rev2 yet
		hub.now = keep
	}
	hub.mu.Unlock()
	if rev2 <= rev {
		t.Fatalf("revision %d after %d", rev2, rev)
	}
	e, err := l.Bus.KV.Get(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record.Decode(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"max_ejection_percent": 30, "consecutive_5xx": 7, "base_ejection_time": 60}
	if !maps.Equal(rec.State.Cfg, want) {
		t.Errorf("after a change from a stale hub: %v, want %v", rec.State.Cfg, want)
	}
}

// An answer to a question opened a moment ago is taken even when this
// replica's hub has not heard of the question yet: the bus is asked.
func TestRoomQuestionOfLaggingHub(t *testing.T) {
	t.Parallel()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := l.CreateRoom(t, `{"preset":"search-cache"}`)
	st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/questions", `{"qkind":"ejected","qhost":"h5","qat":60}`, code, key, "")
	var q record.Question
	if st != 201 || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("open: %d %s", st, body)
	}
	stale := record.Record{} // what a hub that has not heard of it holds
	if got := l.S.rooms.questionOf(context.Background(), code, stale, q.ID); got == nil || got.ID != q.ID {
		t.Errorf("questionOf with a lagging hub: %+v, want question %s", got, q.ID)
	}
	if got := l.S.rooms.questionOf(context.Background(), code, stale, "nope"); got != nil && got.ID == "nope" {
		t.Errorf("an unknown question found: %+v", got)
	}
}

// The board names a lesson's steps as the attendees' pages do (step 1,
// step 2 …: "Try this (2/6)"), never by their ids (issue 33 saw "0 of 6
// finished cap-17").
func TestRoomBoardSteps(t *testing.T) {
	t.Parallel()
	la := startRoomLab(t, roombus.BusOptions{}, Limits{})
	code, key := la.CreateRoom(t, `{"lesson":"cap"}`)
	presenter := roomtest.OpenStreamKey(t, la.TS.URL, roomtest.Sig(roomtest.TabPresenter, code, "present", `"lesson":"cap","preset":"search-cache"`), code, key)
	f := roomtest.OpenRoomStream(t, la.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"lesson":"cap","preset":"search-cache"`))
	webtest.WaitFor(t, f, "the first redraw", roomtest.Charted)
	ev := webtest.WaitFor(t, presenter, "the board's steps", roomtest.PatchOf(`id="room-board"`, "<b>1</b> following", "step 1: <b>0</b> of 1 done", "step 2: <b>0</b> of 1 done"))
	if strings.Contains(ev.Data, "cap-17") || strings.Contains(ev.Data, "finished") {
		t.Errorf("the board names steps by their ids: %s", ev.Data)
	}
}
