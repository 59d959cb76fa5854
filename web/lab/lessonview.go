package lab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"outlierlab/engine/course"
	"outlierlab/web/chart"
	"outlierlab/web/csp"
	"outlierlab/web/glossary"
	"outlierlab/web/httperr"
	"outlierlab/web/labview"
	"outlierlab/web/lessonbook"
	"outlierlab/web/page"
	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// lessonIndex handles GET /lessons: the course list is the home page.
func (s *Lab) lessonIndex(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/", http.StatusFound)
}

// lessonPage handles GET /lessons/{id}: the lesson's prose beside a lab
// on its preset and start settings, in a fresh tab session.
func (s *Lab) lessonPage(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	d := s.Lessons.ByID[id]
	if d == nil {
		s.Pages.NotFound(w, r, "There is no lesson "+quoteShort(id)+".")
		return
	}
	mode, rest, err := page.SplitView(r.URL.RawQuery)
	if err == nil {
		err = page.OnlyParams(rest, "a lesson page", "view")
	}
	if err != nil {
		s.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], r.URL.Path, httperr.Text(err))
		return
	}
	v, err := s.LessonView(d, s.Browser(w, r))
	if err != nil {
		httperr.Write(w, fmt.Errorf("cannot run the lesson: %w", err), httperr.KindInternal)
		return
	}
	v.Lab.View = mode
	csp.AllowTabScripts(w, v.Lab.Tab)
	v.Layout.Strip = s.startStrip(false)
	s.Pages.Render(w, r, http.StatusOK, templates.LessonPage(v))
}

// glossaryPage handles GET /glossary: the course's words, which the
// lessons link to.
func (s *Lab) glossaryPage(w http.ResponseWriter, r *http.Request) {
	if err := page.OnlyParams(r.URL.RawQuery, "the glossary"); err != nil {
		s.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], r.URL.Path, httperr.Text(err))
		return
	}
	s.Pages.Render(w, r, http.StatusOK, templates.GlossaryPage(glossary.View(s.Pages.Layout("Glossary", "lessons", false))))
}

func quoteShort(s string) string {
	b, _ := json.Marshal(httperr.Truncate(s, 60))
	return string(b)
}

// LessonLinks is the course in order.
func (s *Lab) LessonLinks() []view.LessonLink {
	out := make([]view.LessonLink, len(s.Lessons.List))
	for i, d := range s.Lessons.List {
		out[i] = lessonLink(d)
	}
	return out
}

func lessonLink(d *lessonbook.Doc) view.LessonLink {
	l := view.LessonLink{
		ID: d.ID, Title: d.Title, Summary: d.Summary, URL: "/lessons/" + d.ID,
		Number: d.Index + 1, Minutes: d.Minutes, Quiz: len(d.Quiz),
	}
	for _, st := range d.Steps {
		l.StepIDs = append(l.StepIDs, st.ID)
	}
	return l
}

// LessonView is a lesson page for a new tab, at t = 0 on the lesson's
// start: complete and readable before the stream connects; its tab's id
// is issued for browser (the page's request's, Lab.Browser), and its
// answers are shuffled for that browser, so a learner sees one order on
// every visit.
func (s *Lab) LessonView(d *lessonbook.Doc, browser string) (view.Lesson, error) {
	return s.LessonViewFor(d, tabid.New(browser), browser)
}

// LessonViewFor is LessonView for the tab with id tab: a room's page
// that changes lesson in place keeps its tab. order seeds the shuffle of
// the answers (course.ChoiceOrder): a room passes its code, so everyone
// in it sees "B" as the same answer.
func (s *Lab) LessonViewFor(d *lessonbook.Doc, tab, order string) (view.Lesson, error) {
	run, err := s.Runs.Get(d.Inputs(""))
	if err != nil {
		return view.Lesson{}, err
	}
	snap := snapshot{run: run, speed: tabstate.Speeds[0], lesson: d}
	vals := d.Values(run, 0)
	v := view.Lesson{
		Layout: s.Pages.Layout(d.Title, "lessons", true),
		ID:     d.ID, Title: d.Title, Summary: d.Summary,
		Number: d.Index + 1, Total: len(s.Lessons.List), Minutes: d.Minutes,
		Body:     view.HTML(d.Body.HTML(vals)),
		Scenario: d.Preset,
		Lab: view.Lab{
			Tab:       tab,
			Title:     d.Title,
			Signals:   lessonSignals(tab, snap, vals),
			StreamURL: "/lab/stream",
			Controls:  controlsFor(run, d),
			Charts:    lessonBoxes(run, d),
			Speeds:    tabstate.SpeedButtons(),
			Status:    statusView(snap),
			Panels:    labview.Panels(run, 0),
		},
	}
	v.Streaks = streaksFor(d, run, 0)
	for _, g := range d.GoalTexts {
		v.Goals = append(v.Goals, view.HTML(g.HTML(vals)))
	}
	statuses := d.Statuses(run, 0, 0)
	for i, st := range d.Steps {
		v.Steps = append(v.Steps, view.Step{
			ID: st.ID, Number: i + 1, Text: view.HTML(d.StepTexts[i].HTML(vals)),
			Preset: st.Preset, Status: statuses[i],
			PredictFirst: d.Predict.Question != "" && d.Predict.BeforeStep == st.ID,
			Key:          st.Charts[0], Now: i == 0,
		})
	}
	if p := d.Predict; p.Question != "" {
		v.Predict = &view.Predict{
			BeforeStep: p.BeforeStep, Question: view.HTML(d.Question.HTML(vals)),
			Answer: p.Answer, Reveal: view.HTML(d.Reveal.HTML(vals)),
		}
		perm := course.ChoiceOrder(order, course.ChoiceKey(d.ID, -1), len(d.PredictChoices))
		for _, i := range perm {
			v.Predict.Choices = append(v.Predict.Choices, view.Choice{Index: i, Text: view.HTML(d.PredictChoices[i].HTML(vals))})
		}
		v.Predict.Answer = slices.Index(perm, p.Answer)
		if p.PauseAt > 0 {
			v.Predict.PauseAt = p.PauseAt.String()
		}
		v.Predict.Preset = d.PresetFor(p.BeforeStep)
		v.Predict.Loaded = v.Predict.Preset == run.Preset
		for i, st := range d.Steps {
			if st.ID == p.BeforeStep {
				v.Predict.Step = i + 1
			}
		}
	}
	for i, q := range d.Quiz {
		qv := view.Question{
			Number: i + 1, Question: view.HTML(d.QuizTexts[i].Question.HTML(vals)),
			Answer: q.Answer, Explain: view.HTML(d.QuizTexts[i].Explain.HTML(vals)),
		}
		cs := d.QuizTexts[i].Choices
		perm := course.ChoiceOrder(order, course.ChoiceKey(d.ID, i), len(cs))
		for _, j := range perm {
			qv.Choices = append(qv.Choices, view.Choice{Index: j, Text: view.HTML(cs[j].HTML(vals))})
		}
		qv.Answer = slices.Index(perm, q.Answer)
		v.Quiz = append(v.Quiz, qv)
	}
	v.Ending = endingView(d, run, vals)
	if d.Index > 0 {
		p := lessonLink(s.Lessons.List[d.Index-1])
		v.Prev = &p
	}
	if d.Index+1 < len(s.Lessons.List) {
		n := lessonLink(s.Lessons.List[d.Index+1])
		v.Next = &n
	}
	return v, nil
}

// lessonSignals is a lesson page's initial data-signals: the lab's, plus
// the lesson, the loaded step, the prediction and the live numbers.
func lessonSignals(tab string, snap snapshot, vals []string) string {
	r, d := snap.run, snap.lesson
	sig := map[string]any{
		"tab":       tab,
		"preset":    r.Preset,
		"lesson":    d.ID,
		"step":      "",
		"predicted": false,
		"held":      false,
		"cursor":    0,
		"frames":    len(r.Frames),
		"playing":   false,
		"speed":     tabstate.Speeds[0].Name,
		"seq":       0,
		"cfg":       controlSignals(r, d),
		"_ph":       slotSignals(vals, nil),
		"drawn":     drawnOf(snap).String(),
		// The current step and the two toggles (stepfocus.go).
		"_now":       d.Steps[0].ID,
		"_allset":    false,
		"_allcharts": false,
	}
	b, _ := json.Marshal(sig)
	return string(b)
}

// slotSignals is the _ph signal object for vals: every slot, or with prev
// (what the page has) only the slots whose value changed.
func slotSignals(vals, prev []string) map[string]string {
	out := map[string]string{}
	for i, v := range vals {
		if prev != nil && i < len(prev) && prev[i] == v {
			continue
		}
		out["p"+tabstate.Itoa(i)] = v
	}
	return out
}

// controlsFor is the settings panel of a tab: the free lab's, or a
// lesson's own controls with no preset menu.
func controlsFor(r *tabstate.Run, d *lessonbook.Doc) view.Controls {
	if d == nil {
		return labview.Controls(r)
	}
	g := view.ControlGroup{Title: "Settings in this lesson", Open: true}
	f := focusOf(d)
	for _, c := range d.ControlsShown {
		if _, ok := r.Values[c.Name]; ok {
			v := labview.Control(c, r.Values[c.Name])
			f.control(&v, c.Name)
			if c.Group == tabstate.GroupEnforcing {
				// Out of its group, "Gateway failures" needs saying what.
				v.Label = "Enforce " + strings.ToLower(v.Label[:1]) + v.Label[1:]
			}
			g.Controls = append(g.Controls, v)
		}
	}
	return view.Controls{Preset: r.Preset, Description: r.Description, Fixed: true, Focus: true, Groups: []view.ControlGroup{g}}
}

// lessonBoxes are the lesson page's chart boxes. A box shown only for
// some runs follows its control's signal (data-show) only where the
// lesson shows that control: reading a signal the page does not have
// makes Datastar create it, and the page's next setting posted it empty
// and was refused, so no slider of a lesson moved its run (the mesh
// charts' $cfg.clients on /lessons/cap). Elsewhere the server's state
// for the lesson's run stands, as the learner cannot change it.
func lessonBoxes(run *tabstate.Run, d *lessonbook.Doc) []view.Chart {
	boxes := chart.BoxesAt(run, 0)
	shown := map[string]bool{}
	for _, c := range d.ControlsShown {
		shown[c.Name] = true
	}
	f := focusOf(d)
	for i := range boxes {
		if boxes[i].ShowIf != "" && !shown[boxes[i].ShowControl] {
			boxes[i].ShowIf = ""
		}
		boxes[i].Hidden = boxes[i].ID == chart.ChartCompare && !d.CompareStrip
		f.box(&boxes[i])
	}
	return boxes
}
