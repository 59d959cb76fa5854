// Package lessonbook is the course as the web serves it.
//
// The lessons come from engine/course, which knows the files, the checks
// and the placeholders but renders no HTML. This package turns each lesson
// into what its page needs, once, when the server starts: its markdown as
// HTML (goldmark, CommonMark, raw HTML in a lesson is dropped, never passed
// through) with every live number left as a slot, the controls it shows,
// and the inputs of its runs.
package lessonbook

import (
	"bytes"
	"fmt"
	"html"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"

	"outlierlab/engine/course"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
	"outlierlab/web/view"
)

// Book is the course, in order.
type Book struct {
	List []*Doc
	ByID map[string]*Doc
}

// Load reads and compiles the lessons of fsys, in the course's order.
func Load(fsys fs.FS) (*Book, error) {
	ls, err := course.Load(fsys)
	if err != nil {
		return nil, err
	}
	b := &Book{ByID: map[string]*Doc{}}
	for i := range ls {
		d, err := compileLesson(ls[i], i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ls[i].File, err)
		}
		b.List = append(b.List, d)
		b.ByID[d.ID] = d
	}
	return b, nil
}

// Doc is a lesson ready to render.
type Doc struct {
	course.Lesson
	Index int // place in the course, from 0

	Body, Reveal, Question richText
	StepTexts              []richText
	PredictChoices         []richText
	QuizTexts              []quizText
	GoalTexts              []richText
	// RuleText and ExerciseText are the ending's (empty without one).
	RuleText, ExerciseText richText

	// Slots are the lesson's distinct placeholders; slot i is the signal
	// _ph.p{i} and every span showing it.
	Slots []course.Placeholder
	// ControlsShown are the lab controls the page shows: the lesson's own, then
	// any setting a step asks for that they miss (a step that says "set the
	// cap to 50" needs the cap; so does a setting check), in that order.
	ControlsShown []*tabstate.Control
}

type quizText struct {
	Question, Explain richText
	Choices           []richText
}

func compileLesson(l course.Lesson, index int) (*Doc, error) {
	d := &Doc{Lesson: l, Index: index}
	slotOf := map[string]int{}
	md := func(text string, inline bool) richText {
		return renderMarkdown(text, inline, func(p course.Placeholder) int {
			i, ok := slotOf[p.Raw]
			if !ok {
				i = len(d.Slots)
				slotOf[p.Raw] = i
				d.Slots = append(d.Slots, p)
			}
			return i
		})
	}
	for _, part := range l.BodyParts() {
		text := md(part.Markdown, false)
		if part.AfterPrediction {
			// Hidden, so neither shown nor read out, until the prediction
			// is answered (js/lesson.js lifts hidden), and the predicted
			// signal (set by the answer, or by a page whose learner answered
			// on an earlier visit) must be true too; the page's noscript
			// style shows it to a browser without scripts.
			text = slices.Concat(richText{{html: `<div class="after-prediction" hidden data-show="$predicted">`, slot: -1}}, text, richText{{html: `</div>`, slot: -1}})
		}
		d.Body = append(d.Body, text...)
	}
	for _, g := range l.Goals {
		d.GoalTexts = append(d.GoalTexts, md(g, true))
	}
	for _, s := range l.Steps {
		d.StepTexts = append(d.StepTexts, md(s.Text, true))
	}
	d.Question = md(l.Predict.Question, true)
	d.Reveal = md(l.Predict.Reveal, true)
	for _, c := range l.Predict.Choices {
		d.PredictChoices = append(d.PredictChoices, md(c, true))
	}
	for _, q := range l.Quiz {
		qt := quizText{Question: md(q.Question, true), Explain: md(q.Explain, true)}
		for _, c := range q.Choices {
			qt.Choices = append(qt.Choices, md(c, true))
		}
		d.QuizTexts = append(d.QuizTexts, qt)
	}
	if e := l.Ending; e != nil {
		d.RuleText, d.ExerciseText = md(e.Rule, true), md(e.Exercise.Text, true)
		for _, name := range e.Exercise.Settings {
			// The exercise opens the free lab: each setting it offers must
			// be a control of the lab, named in its address.
			if tabstate.LookupControl(name) == nil {
				return nil, fmt.Errorf("ending.exercise: the lab has no control for %q", name)
			}
		}
	}

	for _, name := range l.ControlNames() {
		c := tabstate.LookupControl(name)
		if c == nil {
			return nil, fmt.Errorf("the lab has no control for %q", name)
		}
		if !slices.Contains(d.ControlsShown, c) {
			d.ControlsShown = append(d.ControlsShown, c)
		}
	}
	return d, nil
}

// Inputs are what a step's button loads (step "": the lesson's start): the
// step's preset, or the lesson's, with course.StartSettings over it.
func (d *Doc) Inputs(step string) tabstate.Inputs {
	return tabstate.Inputs{Preset: d.PresetFor(step), Seed: d.SeedOrDefault(), Base: course.StartSettings(d.Lesson, step)}
}

// HasStep reports whether step is "" (the start) or one of the lesson's.
func (d *Doc) HasStep(step string) bool {
	if step == "" {
		return true
	}
	_, ok := d.StepByID(step)
	return ok
}

// Lesson is the lesson id names, for a tab or a room on its step (""
// is the lesson's own start). An unknown lesson or step is a 404 naming
// its field: the one text of it for a page's signals, a room's state and
// a step command.
func (b *Book) Lesson(id, step string) (*Doc, error) {
	d := b.ByID[id]
	if d == nil {
		return nil, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "lesson", Msg: fmt.Sprintf("%q is not a lesson", httperr.Truncate(id, 40))})
	}
	return d, d.CheckStep(step)
}

// CheckStep is nil for a step of the lesson ("" included), else a 404
// naming the step field.
func (d *Doc) CheckStep(step string) error {
	if d.HasStep(step) {
		return nil
	}
	return httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "step", Msg: fmt.Sprintf("%q is not a step of lesson %s", httperr.Truncate(step, 40), d.ID)})
}

// Shows reports whether the page shows a control.
func (d *Doc) Shows(c *tabstate.Control) bool { return slices.Contains(d.ControlsShown, c) }

// Values are the slots' values in a run at a cursor.
func (d *Doc) Values(r *tabstate.Run, cursor int) []string {
	ms := tabstate.CursorMs(r, cursor)
	out := make([]string, len(d.Slots))
	for i, p := range d.Slots {
		v, err := p.Resolve(r.Result, ms)
		if err != nil || v == "" {
			v = course.Dash
		}
		out[i] = v
	}
	return out
}

// richText is rendered HTML with slots for live numbers.
type richText []richPart

// richPart is literal HTML, or (slot ≥ 0) a live number.
type richPart struct {
	html string
	slot int
}

// slotSignal is the Datastar signal that holds a slot's value. Its name
// starts with "_" so the page never sends it back with a command.
func slotSignal(i int) string { return "_ph.p" + strconv.Itoa(i) }

// HTML fills the slots with vals: each becomes a span whose text follows
// its signal, so the stream can update it as the cursor moves.
func (rt richText) HTML(vals []string) string {
	var b strings.Builder
	for _, p := range rt {
		if p.slot < 0 {
			b.WriteString(p.html)
			continue
		}
		v := course.Dash
		if p.slot < len(vals) {
			v = vals[p.slot]
		}
		fmt.Fprintf(&b, `<span class="live" data-text="$%s">%s</span>`, slotSignal(p.slot), html.EscapeString(v))
	}
	return b.String()
}

// Slot markers survive markdown rendering untouched: private-use
// characters that no lesson contains and goldmark does not escape.
const slotOpen, slotClose = "\uE000", "\uE001"

var Markdown = goldmark.New() // CommonMark; raw HTML is omitted (no WithUnsafe)

// renderMarkdown renders text (inline: one paragraph, without its <p>),
// with each placeholder as a slot numbered by slot.
func renderMarkdown(text string, inline bool, slot func(course.Placeholder) int) richText {
	marked := course.ExpandFunc(text, func(p course.Placeholder) string {
		return slotOpen + strconv.Itoa(slot(p)) + slotClose
	})
	var buf bytes.Buffer
	if err := Markdown.Convert([]byte(marked), &buf); err != nil {
		// goldmark fails only on a failing writer; keep the text readable.
		buf.Reset()
		buf.WriteString(html.EscapeString(marked))
	}
	out := strings.TrimSpace(buf.String())
	if inline && strings.Count(out, "<p>") == 1 && strings.HasPrefix(out, "<p>") && strings.HasSuffix(out, "</p>") {
		out = strings.TrimSuffix(strings.TrimPrefix(out, "<p>"), "</p>")
	}
	var rt richText
	for {
		i := strings.Index(out, slotOpen)
		if i < 0 {
			break
		}
		j := strings.Index(out[i:], slotClose)
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(out[i+len(slotOpen) : i+j])
		if err != nil {
			break
		}
		if i > 0 {
			rt = append(rt, richPart{html: out[:i], slot: -1})
		}
		rt = append(rt, richPart{slot: n})
		out = out[i+j+len(slotClose):]
	}
	if out != "" {
		rt = append(rt, richPart{html: out, slot: -1})
	}
	return rt
}

// Statuses evaluates every step's check against the run as the learner
// has watched it: from watchFrom, the earliest the cursor has stood since
// the run's settings last changed, to cursor (course.EvaluateWatched). A
// step is done, or not yet and says what is missing: a step to take, or,
// for one that held when the settings changed, to play through it. A step
// about another scenario than the one loaded is not yet, and says which
// to load.
func (d *Doc) Statuses(r *tabstate.Run, watchFrom, cursor int) []view.StepStatus {
	ms := tabstate.CursorMs(r, cursor)
	w := course.Watch{FromMs: tabstate.CursorMs(r, watchFrom), ToMs: ms}
	last := int64(0)
	if n := len(r.Frames); n > 0 {
		last = r.Frames[n-1].TMs
	}
	out := make([]view.StepStatus, len(d.Steps))
	for i := range d.Steps {
		st := &d.Steps[i]
		out[i] = view.StepStatus{ID: st.ID}
		if want := d.PresetFor(st.ID); r.Preset != want {
			out[i].Hint = "on the " + want + " scenario"
			if st.Preset == "" {
				out[i].Back = want
			}
			continue
		}
		res := course.EvaluateWatched(st.Check, r.Result, w)
		out[i].Done, out[i].Detail = res.Pass, res.Detail
		switch {
		case res.Pass:
		case res.Unwatched:
			out[i].Hint = "play it: step back before " + course.Ms(res.NeedsCursorMs).String() + " and play through"
		case !res.Decided && res.NeedsCursorMs >= last:
			out[i].Hint = "play to the end"
		case !res.Decided:
			out[i].Hint = "step to " + course.Ms(res.NeedsCursorMs).String()
		default:
			out[i].Hint = "not with these settings"
		}
	}
	return out
}
