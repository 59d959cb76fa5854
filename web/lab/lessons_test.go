package lab

import (
	"html"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"outlierlab/engine/course"
	"outlierlab/lessons"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// courseLessons is the course as engine/course loads it.
func courseLessons(t *testing.T) []course.Lesson {
	t.Helper()
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 14 {
		t.Fatalf("%d lessons, want 14 (twelve on Envoy, then gRPC, then the mesh)", len(ls))
	}
	return ls
}

// Every lesson renders at /lessons/{id} on its preset, with its own
// controls (and no preset menu), every step with a status, its prediction,
// its quiz, and links to its neighbours.
func TestLessonPages(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	ls := courseLessons(t)
	for i, l := range ls {
		t.Run(l.ID, func(t *testing.T) {
			res := webtest.Do(t, h, "GET", "/lessons/"+l.ID, "")
			body := webtest.Body(t, res)
			if res.StatusCode != 200 {
				t.Fatalf("status %d\n%s", res.StatusCode, webtest.Head(body, 400))
			}
			c := tabstate.LookupControl(l.Controls[0])
			if c == nil {
				t.Fatalf("no lab control for %s", l.Controls[0])
			}
			has := []string{
				`<h1 id="lesson-title">` + html.EscapeString(l.Title) + `</h1>`,
				`id="scenario-name">` + l.Preset + `</b>`,
				`name="` + c.Name + `"`,
				`&#34;lesson&#34;:&#34;` + l.ID + `&#34;`,
				`id="predict"`,
				`class="quiz"`,
				`href="/"`,
				`<noscript><style>.after-prediction[hidden] { display: block; }</style></noscript>`,
			}
			for _, st := range l.Steps {
				has = append(has, `id="st-`+st.ID+`"`)
				if st.Preset != "" {
					has = append(has, "Load "+st.Preset+"</button>")
				}
			}
			if i > 0 {
				has = append(has, `rel="prev" href="/lessons/`+ls[i-1].ID+`"`)
			}
			if i+1 < len(ls) {
				has = append(has, `rel="next" href="/lessons/`+ls[i+1].ID+`"`)
			}
			for _, want := range has {
				if !strings.Contains(body, want) {
					t.Errorf("page lacks %s", want)
				}
			}
			if strings.Contains(body, `id="preset"`) {
				t.Error("a lesson page has the free lab's preset menu")
			}
			if n := strings.Count(body, `data-kind="quiz"`); n != len(l.Quiz) {
				t.Errorf("%d quiz questions, want %d", n, len(l.Quiz))
			}
			// The page shows only the lesson's controls (and those its
			// steps ask for); the ending's "your cluster" form, a GET to
			// the free lab, is no control of the lesson's lab.
			d := s.Lessons.ByID[l.ID]
			lab := body
			if i := strings.Index(body, `<section class="ending`); i >= 0 {
				lab = body[:i]
			}
			for _, m := range regexp.MustCompile(`<(?:input|select) [^>]*name="([a-z_0-9]+)"`).FindAllStringSubmatch(lab, -1) {
				if m[1] == "cursor" {
					continue
				}
				if !d.Shows(tabstate.ControlByName[m[1]]) {
					t.Errorf("the page shows %s, which the lesson does not list", m[1])
				}
			}
		})
	}
}

func TestUnknownLesson(t *testing.T) {
	t.Parallel()
	res := webtest.Do(t, newTestServer(t).Handler(), "GET", "/lessons/no-such-lesson", "")
	body := webtest.Body(t, res)
	if res.StatusCode != 404 {
		t.Fatalf("status %d", res.StatusCode)
	}
	for _, want := range []string{`no-such-lesson`, `href="/"`, `href="/lessons/cap"`} {
		if !strings.Contains(body, want) {
			t.Errorf("404 page lacks %s", want)
		}
	}
}

// The lab the page runs is the lesson's: what course.RunLesson runs, frame
// for frame. And every step can be done in the page: loading its scenario
// (its button, or the lesson's start), setting its settings with the
// controls the page shows, inside their ranges, makes its status done; and
// unless it says passes_before it is not done in any state before it.
func TestLessonStepsWorkInTheLab(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	for _, l := range courseLessons(t) {
		d := s.Lessons.ByID[l.ID]
		start, err := s.Runs.Get(d.Inputs(""))
		if err != nil {
			t.Fatalf("%s: %v", l.ID, err)
		}
		want, err := course.RunLesson(l, "", nil)
		if err != nil {
			t.Fatalf("%s: %v", l.ID, err)
		}
		if len(want.Frames) != len(start.Frames) || !reflect.DeepEqual(want.Frames[len(want.Frames)-1].Stats, start.Frames[len(start.Frames)-1].Stats) ||
			want.Config != start.Config {
			t.Errorf("%s: the page's run is not the lesson's", l.ID)
		}
		// The start fits the sliders.
		for name, v := range controlSignals(start, d) {
			c := tabstate.ControlByName[name]
			if f, ok := v.(float64); ok {
				if err := c.Check(f); err != nil {
					t.Errorf("%s: start: %v", l.ID, err)
				}
			}
		}
		for i, st := range l.Steps {
			in := d.Inputs("")
			if st.Preset != "" {
				in = d.Inputs(st.ID)
			}
			vals := map[string]float64{}
			for name, v := range st.Settings {
				c := tabstate.LookupControl(name)
				if c == nil || !d.Shows(c) {
					t.Errorf("%s/%s: the page has no control for %s", l.ID, st.ID, name)
					continue
				}
				f, ok := c.Number(v)
				if !ok {
					t.Errorf("%s/%s: %s=%q is not a value of its control", l.ID, st.ID, name, v)
					continue
				}
				if err := c.Check(f); err != nil {
					t.Errorf("%s/%s: %v", l.ID, st.ID, err)
					continue
				}
				vals[c.Name] = f
			}
			run, err := s.Runs.Get(in.With(vals))
			if err != nil {
				t.Errorf("%s/%s: %v", l.ID, st.ID, err)
				continue
			}
			if got := d.Statuses(run, 0, len(run.Frames))[i]; !got.Done {
				t.Errorf("%s/%s: not done with its settings: %s %s", l.ID, st.ID, got.Hint, got.Detail)
			}
			if !st.MustFailBefore() {
				continue
			}
			// Not done in any state the learner can be in before it, as
			// the page evaluates it (course.Before).
			before, err := course.Before(l, st.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range before {
				run, err := s.Runs.Get(tabstate.Inputs{Preset: b.Preset, Seed: d.SeedOrDefault(), Base: b.Settings})
				if err != nil {
					t.Fatal(err)
				}
				if got := d.Statuses(run, 0, len(run.Frames))[i]; got.Done {
					t.Errorf("%s/%s: done %s, before its action: %s", l.ID, st.ID, b.Name, got.Detail)
				}
			}
		}
	}
}

// The prediction holds playback at its pause_at until answered, and only
// on the scenario it is about.
func TestLessonPredictionHolds(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	d := s.Lessons.ByID["cap"]
	run, err := s.Runs.Get(d.Inputs(""))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	sess := newSession(webtest.Tab, d.Inputs(""), run, tabstate.NewRunCache(4), t0)
	sess.lesson = d
	sess.rehold()
	if sess.pb.Hold != 3 {
		t.Fatalf("hold = %d, want 3 (30 s)", sess.pb.Hold)
	}
	sess.pb.Playing, sess.pb.AnchorAt = true, t0
	if c := sess.cursorAt(t0.Add(2 * time.Second)); c != 2 || !sess.isPlaying(t0.Add(2*time.Second)) {
		t.Errorf("before the pause: cursor %d", c)
	}
	at := t0.Add(10 * time.Second)
	if c := sess.cursorAt(at); c != 3 || sess.isPlaying(at) || !sess.held(at) {
		t.Errorf("at the pause: cursor %d, playing %v, held %v", c, sess.isPlaying(at), sess.held(at))
	}
	// Play again without answering: still held.
	sess.setCursor(sess.cursorAt(at), at)
	if c := sess.cursorAt(at.Add(5 * time.Second)); c != 3 {
		t.Errorf("play at the pause without an answer moved to %d", c)
	}
	// Answering lets it go on.
	sess.notePredicted(at)
	if c := sess.cursorAt(at.Add(2 * time.Second)); c != 5 || !sess.isPlaying(at.Add(2*time.Second)) {
		t.Errorf("after the answer: cursor %d", c)
	}
	// A step's other scenario has no pause.
	burst, err := s.Runs.Get(d.Inputs("safety"))
	if err != nil {
		t.Fatal(err)
	}
	other := newSession(webtest.Tab, d.Inputs("safety"), burst, tabstate.NewRunCache(4), t0)
	other.lesson = d
	other.rehold()
	if other.pb.Hold != 0 {
		t.Errorf("hold %d on the burst scenario", other.pb.Hold)
	}
}

// Until the prediction is answered no move goes past its time: not play,
// not a step, a scrub, a jump to the end, instant speed, a settings change
// or a session rebuilt from a tab's signals. The cursor stops at the last
// frame up to pause_at, held, so the log never shows the answer first;
// once answered, it moves on.
func TestPredictionPausesOnAnyMove(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	tab := `"tab":"` + webtest.Tab + `","lesson":"cap"`
	post := func(verb, rest string) {
		t.Helper()
		if res := webtest.Do(t, h, "POST", "/lab/cmd/"+verb, `{`+tab+rest+`}`, "Content-Type", "application/json"); res.StatusCode != 204 {
			t.Fatalf("%s: %d %s", verb, res.StatusCode, webtest.Body(t, res))
		}
	}
	at := func(want int, how string) {
		t.Helper()
		sess := s.Sessions.Get(webtest.Tab)
		sess.mu.Lock()
		defer sess.mu.Unlock()
		now := time.Now()
		if c := sess.cursorAt(now); c != want {
			t.Errorf("%s: cursor %d, want %d", how, c, want)
		}
		if held := sess.held(now); held != (want == 3 && !sess.predicted) {
			t.Errorf("%s: held %v at %d", how, held, want)
		}
	}
	post("pause", "")
	at(0, "open")
	for range 5 {
		post("step", "")
	}
	at(3, "five steps: the pause at 30 s")
	post("back", "")
	at(2, "back")
	post("scrub", `,"cursor":30`)
	at(3, "scrub to the end")
	post("scrub", `,"cursor":1`)
	post("speed", `,"speed":"instant"`)
	post("play", "")
	at(3, "play at instant speed")
	post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`)
	at(3, "a setting changed")

	// A tab whose session is gone comes back with its own cursor: held too.
	other := webtest.TabOf(strings.Repeat("d", 20))
	if res := webtest.Do(t, h, "POST", "/lab/cmd/step", `{"tab":"`+other+`","lesson":"cap","cursor":20}`, "Content-Type", "application/json"); res.StatusCode != 204 {
		t.Fatalf("rebuilt tab: %d", res.StatusCode)
	}
	if sess := s.Sessions.Get(other); sess.cursorAt(time.Now()) != 3 {
		t.Errorf("a rebuilt session at cursor 20 moved to %d, want the pause (3)", sess.cursorAt(time.Now()))
	}

	// On another scenario than the prediction's, nothing holds.
	post("lesson", `,"step":"safety"`)
	post("scrub", `,"cursor":8`)
	at(8, "the burst scenario")

	// Answered: the cursor moves on.
	post("lesson", `,"step":""`)
	post("scrub", `,"cursor":3`)
	post("answer", `,"predicted":true`)
	post("step", "")
	at(4, "a step after the answer")
	post("scrub", `,"cursor":30`)
	at(30, "scrub after the answer")
}

// The lesson commands: a step's button loads its scenario; bad steps and
// commands that do not fit the tab are 4xx naming the field.
func TestLessonCommands(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	post := func(verb, body string) (int, string) {
		res := webtest.Do(t, h, "POST", "/lab/cmd/"+verb, body, "Content-Type", "application/json")
		return res.StatusCode, webtest.Body(t, res)
	}
	lessonTab := `"tab":"` + webtest.Tab + `","lesson":"cap"`
	if st, body := post("lesson", `{`+lessonTab+`,"step":"safety"}`); st != 204 {
		t.Fatalf("load step: %d %s", st, body)
	}
	sess := s.Sessions.Get(webtest.Tab)
	if sess.preset != "burst" || sess.step != "safety" || sess.in.Base == nil {
		t.Errorf("after loading safety: preset %s, step %q", sess.preset, sess.step)
	}
	if st, body := post("lesson", `{`+lessonTab+`,"step":"nope"}`); st != 404 || !strings.HasPrefix(body, "step:") {
		t.Errorf("unknown step: %d %s", st, body)
	}
	if st, body := post("preset", `{`+lessonTab+`,"preset":"dead-host"}`); st != 409 || !strings.HasPrefix(body, "preset:") {
		t.Errorf("preset on a lesson tab: %d %s", st, body)
	}
	if st, _ := post("lesson", `{"tab":"`+webtest.Tab+`","lesson":"cap","step":""}`); st != 204 {
		t.Errorf("back to the start: %d", st)
	}
	if sess := s.Sessions.Get(webtest.Tab); sess.preset != "search-cache" || sess.runOf().Values["max_ejection_percent"] != 10 {
		t.Errorf("back to the start: preset %s, cap %v", sess.preset, sess.runOf().Values["max_ejection_percent"])
	}
	free := `"tab":"` + webtest.TabOf(strings.Repeat("f", 20)) + `"`
	if st, body := post("lesson", `{`+free+`,"step":""}`); st != 409 || !strings.HasPrefix(body, "lesson:") {
		t.Errorf("lesson command on a free-lab tab: %d %s", st, body)
	}
	if st, body := post("play", `{"tab":"`+webtest.TabOf(strings.Repeat("e", 20))+`","lesson":"nope"}`); st != 404 || !strings.HasPrefix(body, "lesson:") {
		t.Errorf("unknown lesson: %d %s", st, body)
	}
	// Reset on a lesson tab goes back to the lesson's settings, not the
	// preset's (the cap lesson starts at hosts 6, cap 10, as search-cache
	// does; the consecutive lesson changes the fault).
	tab := `"tab":"` + webtest.TabOf(strings.Repeat("c", 20)) + `","lesson":"consecutive"`
	if st, body := post("set", `{`+tab+`,"seq":1,"cfg":{"consecutive_5xx":7}}`); st != 204 {
		t.Fatalf("set: %d %s", st, body)
	}
	if st, _ := post("reset", `{`+tab+`}`); st != 204 {
		t.Fatal("reset")
	}
	r := s.Sessions.Get(webtest.TabOf(strings.Repeat("c", 20))).runOf()
	if r.Values["consecutive_5xx"] != 5 || r.Values["fault_kind"] != float64(slices.Index(tabstate.ControlByName["fault_kind"].Choices, "connect_failure")) {
		t.Errorf("reset on the consecutive lesson: consecutive_5xx %v, fault_kind %v", r.Values["consecutive_5xx"], r.Values["fault_kind"])
	}
}
