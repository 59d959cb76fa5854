// Package handout builds a workshop plan's printable handout (issue 23):
// each scene's charts at its moment, its question with the engine's
// answer (and, for a room that ran the plan, the room's histogram), and
// its settings as Envoy YAML. It is given the runs; the web package finds
// them (a scene's run is the one its room shows) and serves the page.
package handout

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Scene is one scene of the plan and the run its room shows.
type Scene struct {
	Scene *plan.Scene
	Run   *tabstate.Run
	// LabURL opens the run in the lab, or the lesson it is a step of
	// (Lesson set); "" for none.
	LabURL string
	Lesson bool
	// Board is the room's submissions to the scene's challenge (nil for
	// none).
	Board *view.RoomChallenge
}

// Reveal is a question a room revealed while it was on scene Scene (an
// index into the plan's scenes): its words, its moment, and the room's
// histogram with the engine's answer marked.
type Reveal struct {
	Scene int
	// Asked: the scene's own question, asked with its button (the room
	// then asks exactly the plan's question).
	Asked bool
	Text  string
	Host  string
	AtMs  int64
	// Answer is the engine's on the room's run as it was at the reveal
	// (the instructor may have moved a setting since the scene began).
	Answer string
	Bars   []view.RoomAnswerBar
	Total  int
}

// Charts are the charts a handout prints for each scene: the story of a
// run in three (success rate, ejections, what clients saw). The others
// (traffic share, counters, the Envoy/gRPC strip) add pages, not a point.
var Charts = pick(chart.ChartSuccessRate, chart.ChartLanes, chart.ChartClients)

func pick(ids ...string) []chart.Chart {
	var out []chart.Chart
	for _, c := range chart.List {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// Build is the handout of p: scenes are its scenes' runs, in order; room
// is the room's code and reveals its revealed questions, or "" and none
// for the plan's own handout.
func Build(p *plan.Plan, scenes []Scene, room string, reveals []Reveal) (view.Handout, error) {
	if len(scenes) != len(p.Scenes) {
		return view.Handout{}, fmt.Errorf("handout of %s: %d runs for %d scenes", p.ID, len(scenes), len(p.Scenes))
	}
	h := view.Handout{Title: p.Title, Summary: p.Summary, Minutes: p.Minutes, Room: room}
	if room != "" {
		h.PlanPath = "/plans/" + p.ID + "/handout"
	}
	options := map[string]json.RawMessage{}
	heights := map[string]int{}
	for i, s := range scenes {
		v, err := scene(i, s, room, reveals)
		if err != nil {
			return view.Handout{}, fmt.Errorf("handout of %s: %w", p.ID, err)
		}
		// Each scene's boxes have ids of their own on the page: the
		// chart's id after the scene's number.
		for id, o := range chart.OptionsOf(s.Run, frames(s.Scene, s.Run), Charts) {
			if o, err = plainLegend(o); err != nil {
				return view.Handout{}, fmt.Errorf("handout of %s: %s: %w", p.ID, id, err)
			}
			options[boxID(i, id)] = o
		}
		for _, c := range Charts {
			heights[boxID(i, c.ID)] = plotBox
			if c.Height != nil {
				heights[boxID(i, c.ID)] = c.Height(s.Run)
			}
		}
		h.Scenes = append(h.Scenes, v)
	}
	o, err := json.Marshal(options)
	if err != nil {
		return view.Handout{}, err
	}
	hb, _ := json.Marshal(heights)
	var boxes []view.Chart
	for _, s := range h.Scenes {
		boxes = append(boxes, s.Charts...)
	}
	h.Charts = view.StaticCharts{Boxes: boxes, Options: string(o), Heights: string(hb)}
	return h, nil
}

// plainLegend is a chart's option with its legend plain, every entry
// shown: the lab's legend scrolls by pages (fifty hosts fit a box), and
// paper shows only the first page of it. (The page lays it in a band
// above the plot: plotBox.)
func plainLegend(o json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	if l, ok := m["legend"].(map[string]any); ok {
		l["type"] = "plain"
	}
	return json.Marshal(m)
}

// plotBox is a handout chart's box without its legend, unless the chart
// sizes its box by the run (the lanes: one per host). The page lays each
// legend in a band above the plot, as many lines as it takes, and grows
// the box by them (js/fit.js bandLegend): a legend in a column beside the
// plot wrapped into a second column over it where the type's lines are
// taller (issue 33).
const plotBox = 200

func boxID(scene int, id string) string { return fmt.Sprintf("s%d-%s", scene+1, id) }

// scene is scene i's part of the handout.
func scene(i int, s Scene, room string, reveals []Reveal) (view.HandoutScene, error) {
	sc, run := s.Scene, s.Run
	n := frames(sc, run)
	v := view.HandoutScene{
		N: i + 1, ID: sc.ID, Title: sc.Title, Minutes: sc.Minutes,
		Where: where(sc), Changes: changes(sc), Seed: seedOf(run), LabURL: s.LabURL,
		Moment: tabstate.FormatMs(tabstate.CursorMs(run, n)), Challenge: s.Board,
	}
	if s.LabURL != "" {
		v.LabText = "open it in the lab"
		if s.Lesson {
			v.LabText = "open the lesson"
		}
	}
	for _, b := range chart.BoxesAt(run, n) {
		for _, c := range Charts {
			if c.ID == b.ID {
				b.ID = boxID(i, b.ID)
				v.Charts = append(v.Charts, b)
			}
		}
	}
	yaml, err := sc.ClusterYAML()
	if err != nil {
		return v, err
	}
	v.YAML = yaml
	if q := sc.Question; q != nil {
		v.Question = question(q, run, room, revealOf(i, q, reveals))
	}
	return v, nil
}

// frames is how many frames of the run the scene's charts show: up to
// the moment the scene ends on in the room — its cursor, or the end of
// its play range — and, when it asks a question, up to the frame its
// reveal shows (the room plays on to it), so the charts hold the answer.
func frames(sc *plan.Scene, run *tabstate.Run) int {
	at := sc.Cursor
	if sc.Play != nil {
		at = sc.Play.To
	}
	n := len(run.Frames)
	if at != course.End {
		n = tabstate.FramesAt(run, int64(at))
	}
	if q := sc.Question; q != nil {
		n = max(n, min(plan.Hold(run.Result, int64(q.At))+1, len(run.Frames)))
	}
	return n
}

// seedOf is the seed the run was made with (a lesson's own, or the
// lab's default).
func seedOf(run *tabstate.Run) uint64 {
	if run.Inputs.Seed == 0 {
		return tabstate.DefaultSeed
	}
	return run.Inputs.Seed
}

// where says what the room loaded at the scene.
func where(sc *plan.Scene) string {
	switch {
	case sc.Lesson != "" && sc.Step != "":
		return "lesson " + sc.Lesson + ", step " + sc.Step
	case sc.Lesson != "":
		return "lesson " + sc.Lesson + ", at its start"
	}
	return "preset " + sc.Preset
}

// changes are the scene's own settings and faults, over what it loads.
func changes(sc *plan.Scene) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(sc.Settings)) {
		out = append(out, name+" = "+sc.Settings[name])
	}
	if len(sc.Inject) > 0 {
		out = append(out, "faults injected: "+strings.Join(sc.Inject, ", "))
	}
	return out
}

// question is a scene's question with the engine's answer on the run's
// seed and the room's histogram (nil: not revealed there).
func question(q *plan.Question, run *tabstate.Run, room string, rv *Reveal) *view.HandoutQuestion {
	v := &view.HandoutQuestion{Text: q.Words(), Choices: q.ChoiceTexts(), Expected: q.Answer}
	got, detail, err := q.EngineAnswer(run.Result)
	if err != nil {
		v.Problem = err.Error()
	} else {
		v.Engine, v.Detail, v.Differs = got, detail, got != q.Answer
	}
	if room != "" && rv != nil {
		v.Room = &view.HandoutRoomAnswers{Hist: rv.Bars, Total: rv.Total}
		if rv.Answer != v.Engine {
			v.Room.Answer = rv.Answer
		}
	}
	return v
}

// revealOf is the room's last reveal of scene i's question: one revealed
// while the room was on that scene, asking the same (asked with the
// scene's button, or made by hand with its words, or its moment and
// host: the room writes a moment its own way). A question the
// instructor made up in the scene is another question, not shown.
func revealOf(i int, q *plan.Question, reveals []Reveal) *Reveal {
	var out *Reveal
	for k := range reveals {
		r := &reveals[k]
		if r.Scene == i && (r.Asked || r.Text == q.Words() || (q.Kind != plan.KindChoice && r.AtMs == int64(q.At) && r.Host == q.Host)) {
			out = r
		}
	}
	return out
}

// Heavy reports whether some scene of p makes a run the budget weighs
// as heavy (web/budget: a lab page's rule), so that building the
// handout must be admitted first. The shipped plans' runs are light; an
// instructor's own (serve -plans DIR) may not be.
func Heavy(p *plan.Plan) bool {
	for i := range p.Scenes {
		st := &p.Scenes[i].State
		pr, ok := scenario.Lookup(st.Preset)
		if !ok {
			continue
		}
		sc, cfg, err := settings.Apply(pr, st.Settings)
		if err == nil && budget.RunWork(sc, cfg) > budget.LightRun {
			return true
		}
	}
	return false
}
