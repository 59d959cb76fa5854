package room

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
)

// testClock is a server clock the test sets.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The explore timer: started on the room's scene it puts the end (the
// server's clock + the scene's minutes) on the room's state; it survives
// the instructor's own commands, a restart moves its end, Stop clears
// it, and so does a move to another scene. Bad requests are refused:
// 403 without the key, 422 naming the field, 409 for a room without a
// plan or a scene the room is not on.
func TestRoomExploreTimer(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	clk := &testClock{t: time.UnixMilli(1_800_000_000_000)}
	l.S.lab.Now = clk.Now
	_, code, key, _ := startPlanRoom(t, l, "plan:drill")
	// The state as the bus has it: this replica's hub may be a write behind.
	state := func() record.State {
		t.Helper()
		e, err := l.Bus.KV.Get(t.Context(), code)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := record.Decode(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		return rec.State
	}
	post := func(query, body, key string) (int, string) {
		t.Helper()
		return roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/explore"+query, body, code, key, "")
	}

	for _, tt := range []struct {
		name, query, body, key string
		status                 int
		has                    string
	}{
		{"no key", "?scene=1", "", "", 403, "key:"},
		{"a stale key", "?scene=1", "", "stale-" + key, 403, "key:"},
		{"a scene without a timer", "?scene=0", "", key, 422, "scene: scene 0 (preset) has no explore timer (allowed the scenes with one: 1)"},
		{"a made-up scene", "?scene=7", "", key, 422, "scene: 7 is not a scene of plan drill (allowed 0–1)"},
		{"a negative scene", "", `{"scene":-1}`, key, 422, "scene: -1 is not a scene of plan drill"},
		{"no scene", "", `{}`, key, 422, "scene: none is not a scene"},
		{"not a number", "?scene=one", "", key, 422, `scene: "one" is not a scene number`},
		{"stop, not a yes or no", "?stop=maybe", "", key, 422, `stop: "maybe" is not a yes or no`},
		{"stop with a scene", "?stop=1&scene=1", "", key, 422, "stop: stop takes no scene"},
		{"not the room's scene", "?scene=1", "", key, 409, "scene: 1 is not the room's scene: it is on 0 (preset)"},
	} {
		st, body := post(tt.query, tt.body, tt.key)
		if st != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("%s: %d %s (want %d, %q)", tt.name, st, body, tt.status, tt.has)
		}
	}
	if s := state(); s.Explore != nil {
		t.Fatalf("refused, but the room has a timer: %+v", s.Explore)
	}

	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != 200 {
		t.Fatalf("scene 1: %d %s", st, body)
	}
	start := clk.Now().UnixMilli()
	st, body := post("?scene=1", "", key)
	end := start + 2*60_000
	if st != 200 || !strings.Contains(body, `"endMs":`+strconv.FormatInt(end, 10)) || !strings.Contains(body, `"minutes":2`) {
		t.Fatalf("start: %d %s", st, body)
	}
	if s := state(); s.Explore == nil || *s.Explore != (record.Explore{Scene: 1, Minutes: 2, EndMs: end}) {
		t.Fatalf("the room's timer after the start: %+v", s.Explore)
	}
	// The instructor's own command (a speed) publishes the tab's state,
	// which knows nothing of the timer: it stays.
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"lesson":"cap","step":"cap-34","speed":"4"`)
	if st, body := roomtest.Post(t, l.TS.URL, "speed", present, code, key); st != 204 {
		t.Fatalf("speed: %d %s", st, body)
	}
	if s := state(); s.Explore == nil || s.Explore.EndMs != end || s.Speed != "4" {
		t.Errorf("after the instructor's speed: %+v, speed %s", s.Explore, s.Speed)
	}
	// Started again a minute later, it ends a minute later.
	clk.add(time.Minute)
	if st, body := post("", `{"scene":1}`, key); st != 200 || !strings.Contains(body, strconv.FormatInt(end+60_000, 10)) {
		t.Errorf("restart: %d %s", st, body)
	}
	if st, body := post("?stop=1", "", key); st != 200 || !strings.Contains(body, `"running":false`) {
		t.Errorf("stop: %d %q", st, body)
	}
	if s := state(); s.Explore != nil {
		t.Errorf("after stop: %+v", s.Explore)
	}
	if st, body := post("", `{"stop":true}`, key); st != 200 || !strings.Contains(body, `"running":false`) {
		t.Errorf("a second stop (nothing to stop): %d %s", st, body)
	}

	// A move to another scene clears it; back on the scene it stays off.
	if st, body := post("?scene=1", "", key); st != 200 {
		t.Fatalf("start again: %d %s", st, body)
	}
	for _, n := range []string{"0", "1"} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene="+n, "", code, key, ""); st != 200 {
			t.Fatalf("scene %s: %d %s", n, st, body)
		}
		if s := state(); s.Explore != nil {
			t.Errorf("after the move to scene %s, the timer: %+v", n, s.Explore)
		}
	}

	free, fkey := l.CreateRoom(t, "")
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+free+"/explore?scene=0", "", free, fkey, ""); st != 409 || !strings.Contains(body, "scene:") {
		t.Errorf("a room without a plan: %d %s", st, body)
	}
}

// A follower on another replica gets the timer as a signal (its end, and
// how long is left on the server's clock), once, and its clearing; the
// recording names the start and the stop.
func TestRoomExploreReplicas(t *testing.T) {
	t.Parallel()
	la, lb := twoReplicas(t)
	_, code, key, _ := startPlanRoom(t, la, "plan:lightning")
	if st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/scene?scene=3", "", code, key, ""); st != 200 {
		t.Fatalf("scene 3: %d %s", st, body)
	}
	follower := roomtest.OpenRoomStream(t, lb.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"lesson":"cap"`))
	webtest.WaitFor(t, follower, "no timer yet", roomtest.SignalPatch(`"explore":{"endMs":0,"leftMs":0,"minutes":0}`))

	st, body := roomtest.Call(t, "POST", la.TS.URL+"/r/"+code+"/explore?scene=3", "", code, key, "")
	var started struct {
		EndMs int64 `json:"endMs"`
	}
	if st != 200 || json.Unmarshal([]byte(body), &started) != nil || started.EndMs == 0 {
		t.Fatalf("start: %d %s", st, body)
	}
	ev := webtest.WaitFor(t, follower, "the timer on replica B's follower", roomtest.SignalPatch(`"explore":{"endMs":`+strconv.FormatInt(started.EndMs, 10)))
	var sig struct {
		Explore record.ExploreSignal `json:"explore"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(ev.Data, "signals ")), &sig); err != nil {
		t.Fatalf("the signal %q: %v", ev.Data, err)
	}
	if e := sig.Explore; e.Minutes != 2 || e.LeftMs <= 0 || e.LeftMs > 2*60_000 {
		t.Errorf("the follower's timer: %+v", e)
	}
	if st, body := roomtest.Call(t, "POST", lb.TS.URL+"/r/"+code+"/explore?stop=1", "", code, key, ""); st != 200 {
		t.Fatalf("stop on replica B: %d %s", st, body)
	}
	webtest.WaitFor(t, follower, "the timer cleared", roomtest.SignalPatch(`"explore":{"endMs":0`))

	var words, states []string
	roomtest.WaitUntil(t, "the recording has both", func() bool {
		words, states = words[:0], states[:0]
		for _, e := range recordingRows(t, la.TS.URL, code) {
			if e.Kind == "explore" {
				// As the player and the timeline name it.
				words, states = append(words, e.What), append(states, e.State)
			}
		}
		return len(words) == 2
	})
	want := []string{`Instructor started a 2-minute explore (scene 4 of 6, "Out for 30 s, then 60, then 90")`, "Instructor stopped the explore timer"}
	if strings.Join(words, "|") != strings.Join(want, "|") {
		t.Errorf("the recording's words: %q", words)
	}
	end := time.UnixMilli(started.EndMs).UTC().Format("15:04:05 UTC")
	if len(states) != 2 || !strings.HasSuffix(states[0], "; a 2-minute explore to "+end) || strings.Contains(states[1], "explore") {
		t.Errorf("the recording's states: %q (want the first to end with the timer's end, %s)", states, end)
	}
}

// The present page offers the scene's timer as a button and the clock
// with Stop; an attendee's page and the projector have the clock alone; a
// scene without a timer has no button.
func TestRoomExplorePages(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:drill")
	check := func(path, key string, has, not []string) {
		t.Helper()
		st, body, _ := getRoomPage(t, l.TS.URL, path, code, key)
		if st != 200 {
			t.Errorf("GET %s: %d", path, st)
		}
		for _, h := range has {
			if !strings.Contains(body, h) {
				t.Errorf("GET %s: no %q", path, h)
			}
		}
		for _, h := range not {
			if strings.Contains(body, h) {
				t.Errorf("GET %s: has %q", path, h)
			}
		}
	}
	check("/r/"+code+"/present", key, []string{`id="room-explore"`}, []string{`id="btn-explore-start"`})
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != 200 {
		t.Fatalf("scene: %d %s", st, body)
	}
	check("/r/"+code+"/present", key, []string{
		`id="btn-explore-start"`, `@post(&#39;/r/` + code + `/explore?scene=1&#39;)`, "Start the 2-minute explore",
		`id="btn-explore-stop"`, `role="timer"`, `olab-explore`,
	}, nil)
	for _, p := range []string{"/r/" + code, "/r/" + code + "/projector"} {
		check(p, "", []string{`id="room-explore"`, `role="timer"`, `olab-explore`}, []string{"btn-explore-start", "btn-explore-stop"})
	}
}
