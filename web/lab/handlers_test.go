package lab

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Every control is an input named after its Envoy field, with a label and
// a visible value.
func TestLabControlsNamedByField(t *testing.T) {
	t.Parallel()
	body := webtest.Body(t, webtest.Do(t, newTestServer(t).Handler(), "GET", "/lab", ""))
	for _, c := range tabstate.Controls {
		if c.Name == "fault_rate" || c.Name == "retry_budget_percent" {
			continue // not every preset has these; search-cache has fault_rate
		}
		if c.AddressOnly {
			continue // the address and the Model your cluster box set it
		}
		for _, s := range []string{`name="` + c.Name + `"`, `for="c-` + c.Name + `"`} {
			if !strings.Contains(body, s) {
				t.Errorf("lab page lacks %s", s)
			}
		}
	}
	for _, s := range []string{`k = 1.9`, `>10%<`, `>30 s<`, `id="btn-play"`, `id="btn-step"`, `id="btn-back"`, `id="scrub"`, `aria-keyshortcuts="Space"`} {
		if !strings.Contains(body, s) {
			t.Errorf("lab page lacks %s", s)
		}
	}
}

// Bad commands get a 4xx whose body names the field and what is allowed;
// the session survives them.
func TestCommandErrors(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	h := s.Handler()
	sig := func(rest string) string { return `{"tab":"` + webtest.Tab + `","preset":"search-cache"` + rest + `}` }
	tests := []struct {
		name, verb, body string
		status           int
		has              []string
	}{
		{"cap above 100", "set", sig(`,"cfg":{"max_ejection_percent":101}`), 422, []string{"max_ejection_percent", "101", "allowed 0–100 %"}},
		{"negative interval", "set", sig(`,"cfg":{"interval":-5}`), 422, []string{"interval", "allowed 1–60 s"}},
		{"fractional count", "set", sig(`,"cfg":{"consecutive_5xx":2.5}`), 422, []string{"consecutive_5xx", "whole number"}},
		{"not a number", "set", sig(`,"cfg":{"success_rate_stdev_factor":"lots"}`), 422, []string{"success_rate_stdev_factor", "not a number"}},
		{"not a bool", "set", sig(`,"cfg":{"always_eject_one_host":3}`), 422, []string{"always_eject_one_host", "true or false"}},
		{"unknown field", "set", sig(`,"cfg":{"max_ejection_percnet":10}`), 422, []string{"max_ejection_percnet", "not a setting"}},
		{"two bad fields", "set", sig(`,"cfg":{"interval":0,"max_ejection_percent":300}`), 422, []string{"interval", "max_ejection_percent"}},
		{"max below base (Envoy's rule)", "set", sig(`,"cfg":{"max_ejection_time":10}`), 422, []string{"max_ejection_time", "base_ejection_time"}},
		{"hosts above the lab's range", "set", sig(`,"cfg":{"hosts":500}`), 422, []string{"hosts", "allowed 1–50 hosts"}},
		{"max_retries past 2^32−1", "set", sig(`,"cfg":{"max_retries":4294967296}`), 422, []string{"max_retries", "4294967296", "out of range", "allowed 0–4294967295 retries"}},
		{"negative max_retries", "set", sig(`,"cfg":{"max_retries":-1}`), 422, []string{"max_retries", "allowed 0–4294967295 retries"}},
		{"fractional max_retries", "set", sig(`,"cfg":{"max_retries":2.5}`), 422, []string{"max_retries", "whole number"}},
		{"emptied max_retries field", "set", sig(`,"cfg":{"max_retries":""}`), 422, []string{"max_retries", `"" is not a number`, "allowed 0–4294967295 retries"}},
		{"fault_rate above 1", "set", sig(`,"cfg":{"fault_rate":1.5}`), 422, []string{"fault_rate", "allowed 0–1 (a fraction)"}},
		{"scrub past the end", "scrub", sig(`,"cursor":31`), 422, []string{"cursor", "allowed 0–30"}},
		{"scrub without a cursor", "scrub", sig(``), 422, []string{"cursor"}},
		{"bad speed", "speed", sig(`,"speed":"warp"`), 422, []string{"speed", "1, 4, 16, instant"}},
		{"unknown preset", "preset", sig(`,"preset":"nope"`), 404, []string{"preset", "nope", "search-cache"}},
		{"unknown verb", "jump", sig(``), 404, []string{"jump", "allowed answer, back, inject, lesson, pause, play, preset, rejoin, reset, scrub, set, speed, step, uninject"}},
		{"not JSON", "play", `{"tab":`, 400, []string{"JSON"}},
		{"bad tab", "play", `{"tab":"x"}`, 400, []string{"tab"}},
		{"no tab", "play", `{}`, 400, []string{"tab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := webtest.Do(t, h, "POST", "/lab/cmd/"+tt.verb, tt.body, "Content-Type", "application/json")
			body := webtest.Body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.status, body)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("body %q lacks %q", body, s)
				}
			}
		})
	}
	// The session is intact: it still scrubs and steps.
	if res := webtest.Do(t, h, "POST", "/lab/cmd/scrub", sig(`,"cursor":5`)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("scrub after errors: status %d", res.StatusCode)
	}
	if res := webtest.Do(t, h, "POST", "/lab/cmd/step", sig(``)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("step after errors: status %d", res.StatusCode)
	}
	sess := s.Sessions.Get(webtest.Tab)
	if sess == nil {
		t.Fatal("session lost")
	}
	if c := sess.snapshot(s.Now()).cursor; c != 6 {
		t.Errorf("cursor %d after scrub 5 and a step, want 6", c)
	}
	// The page shows the last rejected input (Datastar drops 4xx bodies).
	if n := sess.snapshot(s.Now()).notice; !strings.Contains(n, `preset: "nope" is not a preset`) {
		t.Errorf("notice = %q", n)
	}
}

func TestCommandBodyLimit(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	big := `{"tab":"` + webtest.Tab + `","pad":"` + strings.Repeat("x", 70<<10) + `"}`
	res := webtest.Do(t, h, "POST", "/lab/cmd/play", big)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", res.StatusCode)
	}
	if body := webtest.Body(t, res); !strings.Contains(body, "larger than") {
		t.Errorf("body %q", body)
	}
	if res := webtest.Do(t, h, "GET", "/lab/cmd/play", ""); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET on a command: status %d, want 405", res.StatusCode)
	}
}

// Commands move the cursor as the transport says.
func TestCommandsMoveCursor(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	post, clock := frozenTab(t, s, `"preset":"search-cache"`)
	cursor := func() snapshot { return s.Sessions.Get(webtest.Tab).snapshot(*clock) }
	post("step", "")
	post("step", "")
	post("back", "")
	if c := cursor(); c.cursor != 1 || c.playing {
		t.Fatalf("after step, step, back: cursor %d playing %v", c.cursor, c.playing)
	}
	post("speed", `,"speed":"4"`)
	post("play", "")
	*clock = clock.Add(1500 * time.Millisecond) // 4 intervals a second: 6 more frames
	if c := cursor(); c.cursor != 7 || !c.playing {
		t.Fatalf("1.5 s at 4×: cursor %d playing %v, want 7 and playing", c.cursor, c.playing)
	}
	post("pause", "")
	*clock = clock.Add(10 * time.Second)
	if c := cursor(); c.cursor != 7 || c.playing {
		t.Fatalf("paused: cursor %d playing %v", c.cursor, c.playing)
	}
	post("scrub", `,"cursor":25`)
	post("set", `,"cfg":{"max_ejection_percent":34}`)
	if c := cursor(); c.cursor != 25 || c.run.Config.MaxEjectionPercent != 34 {
		t.Fatalf("set keeps the cursor: cursor %d cap %d", c.cursor, c.run.Config.MaxEjectionPercent)
	}
	post("speed", `,"speed":"instant"`)
	post("play", "")
	if c := cursor(); c.cursor != 30 || c.playing {
		t.Fatalf("instant play: cursor %d playing %v, want the end", c.cursor, c.playing)
	}
	post("reset", "")
	if c := cursor(); c.cursor != 0 || c.run.Config.MaxEjectionPercent != 10 {
		t.Fatalf("reset: cursor %d cap %d", c.cursor, c.run.Config.MaxEjectionPercent)
	}
	post("preset", `,"preset":"dead-host"`)
	if c := cursor(); c.run.Preset != "dead-host" || c.cursor != 0 {
		t.Fatalf("preset: %s at %d", c.run.Preset, c.cursor)
	}
}

// No body, however odd, makes a command fail with a 5xx or a panic.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		`{"tab":"` + webtest.Tab + `","cfg":{"max_ejection_percent":34}}`,
		`{"tab":"` + webtest.Tab + `","cursor":1e300}`,
		`{"tab":"` + webtest.Tab + `","cursor":-1,"speed":"16"}`,
		`{"tab":"` + webtest.Tab + `","preset":"burst","cfg":{"hosts":50,"rps":3000}}`,
		`{"tab":"` + webtest.Tab + `","cfg":{"interval":1,"base_ejection_time":600}}`,
		`[]`, `null`, `{"cfg":null}`,
	} {
		f.Add("set", seed)
		f.Add("scrub", seed)
	}
	s := newTestServer(f)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, verb, body string) {
		req := httptest.NewRequest("POST", "/lab/cmd/"+url.PathEscape(verb), strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %q: status %d: %s", verb, body, w.Code, w.Body.String())
		}
	})
}

// A slider moved and Play (or Step, Back, a scrub) pressed before the
// slider's throttled post: the command carries the page's newer seq and
// settings, and plays the new run; the slider's post, after, changes
// nothing, so what the learner watched of the new run still counts.
func TestPlayCarriesPendingSlider(t *testing.T) {
	t.Parallel()
	for _, verb := range []string{"play", "step", "back", "scrub"} {
		t.Run(verb, func(t *testing.T) {
			s := newTestServer(t)
			post, clock := frozenTab(t, s, `"preset":"search-cache"`)
			sess := func() snapshot { return s.Sessions.Get(webtest.Tab).snapshot(*clock) }
			post("scrub", `,"cursor":2`)
			post(verb, `,"seq":1,"cursor":2,"cfg":{"max_ejection_percent":34}`)
			c := sess()
			if c.run.Config.MaxEjectionPercent != 34 {
				t.Fatalf("%s with a pending slider: cap %d, want the page's 34", verb, c.run.Config.MaxEjectionPercent)
			}
			if verb == "play" && !c.playing {
				t.Fatalf("play with a pending slider: not playing")
			}
			from := c.watchFrom
			*clock = clock.Add(300 * time.Millisecond)
			post("set", `,"seq":1,"cfg":{"max_ejection_percent":34}`)
			if c := sess(); c.watchFrom != from || c.run.Config.MaxEjectionPercent != 34 {
				t.Errorf("the slider's own post after %s: watched from %d (was %d), cap %d", verb, c.watchFrom, from, c.run.Config.MaxEjectionPercent)
			}
			// An older page (seq not ahead) changes nothing by playing.
			post(verb, `,"seq":1,"cursor":2,"cfg":{"max_ejection_percent":50}`)
			if c := sess(); c.run.Config.MaxEjectionPercent != 34 {
				t.Errorf("%s with no pending slider took its settings: cap %d", verb, c.run.Config.MaxEjectionPercent)
			}
			// A page ahead with a value the lab refuses (typed out of
			// range; its own post was refused): the command still moves
			// the run the tab has.
			post("scrub", `,"cursor":2`)
			post(verb, `,"seq":2,"cursor":3,"cfg":{"max_ejection_percent":500}`)
			moved := map[string]func(snapshot) bool{
				"play":  func(c snapshot) bool { return c.playing },
				"step":  func(c snapshot) bool { return c.cursor == 3 },
				"back":  func(c snapshot) bool { return c.cursor == 1 },
				"scrub": func(c snapshot) bool { return c.cursor == 3 },
			}[verb]
			if c := sess(); c.run.Config.MaxEjectionPercent != 34 || !moved(c) {
				t.Errorf("%s with a refused pending value: cap %d, cursor %d, playing %v", verb, c.run.Config.MaxEjectionPercent, c.cursor, c.playing)
			}
		})
	}
}
