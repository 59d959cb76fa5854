package scenes

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"

	"outlierlab/plans"
	"outlierlab/web/internal/roomtest"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
)

// shippedBook is the shipped plans on a lab of the course.
func shippedBook(t *testing.T) *Book {
	t.Helper()
	b, err := Load(plans.FS, roomtest.Lab(t, lab.LabOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serve is b's handout route on a test server.
func serve(t *testing.T, b *Book) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	r.Get("/plans/{id}/handout", b.Handout)
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return ts
}

// get is a GET of u: its status and body.
func get(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// A plan whose scene sets what the room cannot carry (a knob the lab has
// no control for) is refused when the server starts, naming the scene,
// not when the instructor reaches it in class. The shipped plans load.
func TestLoadRefuses(t *testing.T) {
	l := roomtest.Lab(t, lab.LabOptions{})
	b, err := Load(plans.FS, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.list) != 2 || b.Plan("production") == nil || b.Plan("lightning") == nil {
		t.Errorf("the shipped plans: %v", b.Links())
	}
	drill, err := os.ReadFile("testdata/drill.md")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(drill), `settings: {max_ejection_percent: "34"}`, `settings: {duration: "120s"}`, 1)
	_, err = Load(fstest.MapFS{"drill.md": {Data: []byte(bad)}}, l)
	if err == nil || !strings.Contains(err.Error(), "drill.md: scenes[0] (preset).settings: setting duration: the lab has no control for it") {
		t.Errorf("a scene the room cannot show: %v", err)
	}
}

// The board's line of a scene whose question the engine answered
// otherwise on the room's run (the instructor changed a setting): the
// answers are counted against the plan, and the board says what the
// engine said. A question asked again starts its counts afresh.
func TestMarks(t *testing.T) {
	b := shippedBook(t)
	st := record.State{Plan: "lightning"}
	st.MarkVisited(0)
	st.MarkVisited(2)
	st.Scene = 2
	two := 2
	q := &record.Question{Kind: "out", Scene: &two, Total: 4, Answer: "0", Hist: []record.HistBar{{Answer: "0", N: 1, Right: true}, {Answer: "1", N: 3}}}
	st.MarkAsked(q)
	b.MarkRevealed(&st, q)
	rows := b.Board(&st)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want lightning's 6", len(rows))
	}
	if r := rows[2]; !r.Current || !r.Shown || !r.Revealed || r.Answered != 4 || r.Right != 3 || r.Wrong != 1 || r.Engine != "0" || r.Expect != "1" {
		t.Errorf("scene 3's line: %+v", r)
	}
	if r := rows[1]; r.Shown || r.Asked || r.Question != "" {
		t.Errorf("scene 2 (never shown, no question): %+v", r)
	}
	if r := rows[0]; !r.Shown || r.Asked || r.Question != "Is h5 ejected at 40 s?" || r.Expect != "no" {
		t.Errorf("scene 1 (shown, not asked): %+v", r)
	}
	st.MarkAsked(q)
	if r := b.Board(&st)[2]; !r.Asked || r.Revealed || r.Answered != 0 || r.Engine != "" {
		t.Errorf("asked again: %+v", r)
	}
	own := &record.Question{Kind: "out", Total: 2}
	st.MarkAsked(own)
	b.MarkRevealed(&st, own)
	if got := webtest.JSON(t, st.Progress); got != `[{"scene":0},{"scene":2,"asked":true}]` {
		t.Errorf("the instructor's own question marked a scene: %s", got)
	}
}

// A plan's handout has every scene: its title, three charts drawn in SVG
// (their options in the page), its question with the engine's answer,
// which for the shipped plans is the one the plan expects (plan -check
// holds it on seeds 1–50), and its settings as Envoy YAML, the same
// cluster as the room's own "Copy as Envoy YAML" but named after the
// scene; never the instructor's notes. A plan that is not there is a 404
// naming it and the plans there are; a query a 400 naming it.
func TestPlanHandout(t *testing.T) {
	b := shippedBook(t)
	ts := serve(t, b)
	for _, id := range []string{"lightning", "production"} {
		p := b.Plan(id)
		status, body := get(t, ts.URL+"/plans/"+id+"/handout")
		if status != http.StatusOK {
			t.Fatalf("%s: status %d", id, status)
		}
		if n := strings.Count(body, `class="chart-box handout-fig"`); n != 3*len(p.Scenes) {
			t.Errorf("%s: %d figures for %d scenes", id, n, len(p.Scenes))
		}
		if n := strings.Count(body, `data-renderer="svg"`); n != 3*len(p.Scenes) {
			t.Errorf("%s: %d SVG charts", id, n)
		}
		for i, sc := range p.Scenes {
			for _, want := range []string{html.EscapeString(sc.Title), "name: " + sc.ID + "\n", `"s` + strconv.Itoa(i+1) + `-chart-lanes"`} {
				if !strings.Contains(body, want) {
					t.Errorf("%s scene %s: no %q", id, sc.ID, want)
				}
			}
			if strings.TrimSpace(sc.Notes) != "" && strings.Contains(body, html.EscapeString(firstLine(sc.Notes))) {
				t.Errorf("%s scene %s: the instructor's notes are on the handout", id, sc.ID)
			}
			if q := sc.Question; q != nil {
				if !strings.Contains(body, html.EscapeString(q.Words())) || !strings.Contains(body, `<b class="handout-answer">`+html.EscapeString(q.Answer)+`</b>`) {
					t.Errorf("%s scene %s: the question %q or the engine's answer %q is missing", id, sc.ID, q.Words(), q.Answer)
				}
			}
			hs, err := b.handoutScene(p, i)
			if err != nil {
				t.Fatal(err)
			}
			yaml, err := sc.ClusterYAML()
			if err != nil {
				t.Fatal(err)
			}
			if afterName(yaml) != afterName(hs.Run.YAML) {
				t.Errorf("%s scene %s: the handout's YAML is not the room's:\n%s\nthe room's:\n%s", id, sc.ID, yaml, hs.Run.YAML)
			}
		}
		// A lesson's scene links to its lesson, a preset's to the lab at
		// its cursor (production's health-check scene).
		if !strings.Contains(body, `<a href="/lessons/cap">open the lesson</a>`) {
			t.Errorf("%s: no link to the cap lesson", id)
		}
		if id == "production" && !strings.Contains(body, `<a href="/lab?preset=active-hc-undo`) {
			t.Errorf("%s: no lab link for the preset's scene", id)
		}
		if strings.Contains(body, `class="handout-warn"`) {
			t.Errorf("%s: a warning on a plan that passes plan -check", id)
		}
	}
	for _, tt := range []struct {
		path   string
		status int
		has    string
	}{
		{"/plans/nope/handout", 404, "There is no workshop plan &#34;nope&#34; here (plans: lightning, production)."},
		{"/plans/lightning/handout?t=30", 400, "t: is not a parameter of a handout (it takes none)"},
	} {
		status, body := get(t, ts.URL+tt.path)
		if status != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("GET %s: %d, want %d with %q", tt.path, status, tt.status, tt.has)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// afterName is a cluster's YAML without its first line, the name.
func afterName(yaml string) string {
	_, rest, _ := strings.Cut(yaml, "\n")
	return rest
}
