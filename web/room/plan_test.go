package room

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"outlierlab/plans"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
	"outlierlab/web/roombus"
)

// drillPlan is a test plan whose scenes use what the shipped plans do not
// (scenes/testdata/drill.md): a preset with a setting, an injected fault
// and a play range; then a lesson step at a cursor, with notes.
func drillPlan(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("scenes/testdata/drill.md")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// planLab is a room lab offering the shipped lightning plan and drill.
func planLab(t *testing.T) *roomLab {
	t.Helper()
	l := startRoomLab(t, roombus.BusOptions{}, Limits{})
	lightning, err := fs.ReadFile(plans.FS, "lightning.md")
	if err != nil {
		t.Fatal(err)
	}
	if l.S.plans, err = scenes.Load(fstest.MapFS{
		"lightning.md": {Data: lightning},
		"drill.md":     {Data: drillPlan(t)},
	}, l.S.lab); err != nil {
		t.Fatal(err)
	}
	return l
}

// startPlanRoom starts a room from the home page's form with start, for
// JSON, and returns the status and the code and key.
func startPlanRoom(t *testing.T, l *roomLab, start string) (status int, code, key, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", l.TS.URL+"/rooms", strings.NewReader("start="+start))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, c := range res.Cookies() {
		if code, ok := strings.CutPrefix(c.Name, "olab_key_"); ok {
			return res.StatusCode, code, c.Value, string(b)
		}
	}
	return res.StatusCode, "", "", string(b)
}

// A room started from a plan opens on its first scene; /scene puts it on
// each scene's lesson step or preset, settings, faults and cursor or play
// range, and refuses a missing key (403), a scene out of range (422) and
// a room without a plan (409).
func TestRoomPlanScenes(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	if st, _, _, body := startPlanRoom(t, l, "plan:nope"); st != http.StatusNotFound || !strings.Contains(body, `start: "nope" is not a plan`) {
		t.Errorf("an unknown plan: %d %s", st, body)
	}
	st, code, key, body := startPlanRoom(t, l, "plan:lightning")
	if st != http.StatusCreated || code == "" {
		t.Fatalf("start from lightning: %d %s", st, body)
	}
	state := func(code string) record.State {
		t.Helper()
		rec, _, err := l.S.rooms.lookup(t.Context(), code)
		if err != nil {
			t.Fatal(err)
		}
		return rec.State
	}
	if s := state(code); s.Plan != "lightning" || s.Scene != 0 || s.Lesson != "cap" || s.Step != "" || len(s.Cfg) != 0 || s.Anchor != 3 || s.Playing || s.Spot == nil || s.Spot.Host != "h5" {
		t.Errorf("the room's start: %+v", s)
	}

	_, dcode, dkey, _ := startPlanRoom(t, l, "plan:drill")
	for _, tt := range []struct {
		name, code, key, query, body string
		status                       int
		has                          string
		check                        func(record.State) bool
	}{
		{"lightning's third scene", code, key, "", `{"scene":2}`, 200, `"title":"Raise the cap to 34"`,
			func(s record.State) bool {
				return s.Scene == 2 && s.Lesson == "cap" && s.Step == "cap-34" && s.Cfg["max_ejection_percent"] == 34 && s.Anchor == 3 && !s.Playing && s.Spot == nil
			}},
		{"lightning's last scene, at the end", code, key, "?scene=5", "", 200, `"id":"takeaways"`,
			func(s record.State) bool { return s.Scene == 5 && s.Step == "cap-34" && s.Anchor == 30 }},
		{"drill's preset, a setting, a fault, playing", dcode, dkey, "?scene=0", "", 200, `"id":"preset"`,
			func(s record.State) bool {
				return s.Plan == "drill" && s.Preset == "search-cache" && s.Lesson == "" && s.Cfg["max_ejection_percent"] == 34 &&
					s.Inject == "h2@60s" && s.Playing && s.Anchor == 3 && s.AnchorAtMs > 0 && s.Spot == nil
			}},
		{"drill's lesson step at 40 s", dcode, dkey, "", `{"tab":"t","scene":1}`, 200, `"id":"step"`,
			func(s record.State) bool {
				return s.Lesson == "cap" && s.Step == "cap-34" && s.Anchor == 4 && s.Cfg["max_ejection_percent"] == 34 && s.Inject == "" &&
					s.Spot != nil && *s.Spot == record.Spot{Host: "h5", From: 30, To: 60}
			}},
		{"no key", code, "", "?scene=1", "", 403, "key:", nil},
		{"a stale key", code, "stale-" + key, "?scene=1", "", 403, "key:", nil},
		{"past the last scene", code, key, "?scene=6", "", 422, "scene: 6 is not a scene of plan lightning (allowed 0–5)", nil},
		{"a negative scene", code, key, "", `{"scene":-1}`, 422, "scene: -1 is not a scene of plan lightning (allowed 0–5)", nil},
		{"no scene", code, key, "", `{}`, 422, "scene: none is not a scene", nil},
		{"not a number", code, key, "?scene=two", "", 422, `scene: "two" is not a scene number`, nil},
	} {
		before := state(tt.code)
		st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+tt.code+"/scene"+tt.query, tt.body, tt.code, tt.key, "")
		if st != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("%s: %d %s (want %d, %q)", tt.name, st, body, tt.status, tt.has)
		}
		after := state(tt.code)
		if tt.check != nil && !tt.check(after) {
			t.Errorf("%s: the room's state %+v", tt.name, after)
		}
		if tt.check == nil && (after.Scene != before.Scene || after.Anchor != before.Anchor) {
			t.Errorf("%s: refused, but the room moved: %+v → %+v", tt.name, before, after)
		}
	}

	free, fkey := l.CreateRoom(t, "")
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+free+"/scene?scene=0", "", free, fkey, ""); st != http.StatusConflict || !strings.Contains(body, "scene:") {
		t.Errorf("a room without a plan: %d %s", st, body)
	}
}

// The room's tools survive a scene change, and the plan and scene survive
// the instructor's own commands (the tab's state knows nothing of them).
func TestRoomPlanKeepsTools(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:drill")
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/lock?on=1", "", code, key, ""); st/100 != 2 {
		t.Fatalf("lock: %d %s", st, body)
	}
	for _, n := range []string{"1", "0"} {
		if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene="+n, "", code, key, ""); st != 200 {
			t.Fatalf("scene %s: %d %s", n, st, body)
		}
	}
	present := roomtest.Sig(roomtest.TabPresenter, code, "present", `"preset":"search-cache"`)
	if st, body := roomtest.Post(t, l.TS.URL, "scrub", strings.Replace(present, "}", `,"cursor":7}`, 1), code, key); st != 204 {
		t.Fatalf("scrub: %d %s", st, body)
	}
	// The replica's copy of the room follows the bus (its watcher): the
	// scrub's 204 says it is written, not that this copy has heard it.
	var rec record.Record
	var err error
	webtest.Eventually(10*time.Second, func() bool {
		rec, _, err = l.S.rooms.lookup(t.Context(), code)
		return err == nil && rec.State.Anchor == 7
	})
	if err != nil || rec.State.Plan != "drill" || rec.State.Scene != 0 || !rec.State.Lock || rec.State.Anchor != 7 {
		t.Errorf("after a scene and a scrub: %+v %v", rec.State, err)
	}
}

// The present page lists the scenes (the current one marked), offers
// Previous / Next and shows the notes; an attendee's page and the
// projector show the scene's title and never the notes. The home page
// offers the plans.
func TestRoomPlanPages(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:drill")
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != 200 {
		t.Fatalf("scene: %d %s", st, body)
	}
	for _, tt := range []struct {
		path, key string
		has, not  []string
	}{
		{"/r/" + code + "/present", key, []string{
			`id="room-scene"`, `Scene 2 of 2:`, `<b id="room-scene-title">The cap at 34</b>`,
			`id="btn-scene-prev"`, `@post(&#39;/r/` + code + `/scene?scene=0&#39;)`, `id="btn-scene-next" disabled`,
			`<li class="current" aria-current="step"><b>The cap at 34</b></li>`, `A preset, played</button>`,
			"Secret note: h5 goes at <strong>40 s</strong>.", "explore on their own for 2 min",
		}, nil},
		{"/r/" + code, "", []string{`<b id="room-scene-title">The cap at 34</b>`}, []string{"Secret note", "btn-scene-next", `<details class="room-scene-list"`}},
		{"/r/" + code + "/projector", "", []string{`<b id="room-scene-title">The cap at 34</b>`}, []string{"Secret note", "btn-scene-next"}},
		{"/", "", []string{`<option value="plan:lightning">Outlier detection in 15 minutes (15 min)</option>`, `value="plan:drill"`}, nil},
	} {
		st, body, _ := getRoomPage(t, l.TS.URL, tt.path, code, tt.key)
		if st != 200 {
			t.Errorf("GET %s: %d", tt.path, st)
		}
		for _, h := range tt.has {
			if !strings.Contains(body, h) {
				t.Errorf("GET %s: no %q", tt.path, h)
			}
		}
		for _, h := range tt.not {
			if strings.Contains(body, h) {
				t.Errorf("GET %s: has %q", tt.path, h)
			}
		}
	}
}

// A follower's stream patches the scene panel when the room changes
// scene: the new title, and none of the instructor's notes or buttons.
func TestRoomPlanStream(t *testing.T) {
	t.Parallel()
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:drill")
	follower := roomtest.OpenRoomStream(t, l.TS.URL, code, roomtest.Sig(roomtest.TabFollower, code, "follow", `"preset":"search-cache"`))
	webtest.WaitFor(t, follower, "the first scene's panel", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, `id="room-scene"`) && strings.Contains(ev.Data, "A preset, played")
	})
	if st, body := roomtest.Call(t, "POST", l.TS.URL+"/r/"+code+"/scene?scene=1", "", code, key, ""); st != 200 {
		t.Fatalf("scene: %d %s", st, body)
	}
	ev := webtest.WaitFor(t, follower, "the second scene's panel", func(ev webtest.Event) bool {
		return strings.Contains(ev.Data, `id="room-scene"`) && strings.Contains(ev.Data, "The cap at 34")
	})
	if strings.Contains(ev.Data, "Secret note") || strings.Contains(ev.Data, "btn-scene-next") {
		t.Errorf("the follower's panel has the instructor's parts: %s", ev.Data)
	}
}
