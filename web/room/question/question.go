// Package question makes a room's questions and answers them on the
// room's run: predict, then reveal (workshops.md: every poll tool shows a
// histogram; only a lab that runs the system can mark the true answer).
// A question asks about a moment of the run (is a host ejected then, how
// many hosts are out), the room's lesson's prediction, or a plan scene's
// question; its answer is read off the frame at that moment, or the
// lesson's or the plan's, which engine/course and engine/plan check
// against the engine. The rooms (web/room) hold the question on the
// room's state, take the answers and reveal.
package question

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/web/httperr"
	"outlierlab/web/lab"
	"outlierlab/web/room/record"
	"outlierlab/web/room/scenes"
)

// Maker makes the questions of rooms on the lab's runs and plans.
type Maker struct {
	lab   *lab.Lab
	plans *scenes.Book
}

// NewMaker is a Maker on l's runs and lessons and the plans.
func NewMaker(l *lab.Lab, plans *scenes.Book) Maker { return Maker{lab: l, plans: plans} }

// Request opens a question: kind ejected (is qhost ejected at
// qat seconds?), out (how many hosts are out at qat?), lesson (the
// room's lesson's prediction), or a plan scene's (Scene).
type Request struct {
	Tab  string          `json:"tab"` // the instructor's tab (a page's request), which then holds too
	Kind string          `json:"qkind"`
	Host string          `json:"qhost"`
	At   json.RawMessage `json:"qat"` // a number, or a number in a string (a page's input)
	// Scene asks the room's plan scene's question instead (?scene=N, or
	// in the body): its kind, host and moment are the plan's.
	Scene *int `json:"scene"`
}

// moment is the span of qat: a moment of the run, in seconds.
var moment = httperr.Span{Lo: 1, Hi: record.MaxMomentS, Unit: "s"}

// Make builds the question q asks about room code's run. A lesson's
// prediction and a plan's choice come in the room's order: shuffled by
// the code (course.ChoiceOrder), as the room's lesson pages order the
// prediction, so the room sees one order and the right answer's place
// in the file tells nothing (issue 38). Answers are the choices' texts,
// so the order changes no grading.
func (m Maker) Make(code string, st *record.State, q Request) (*record.Question, error) {
	in, d, err := st.Inputs(m.lab.Lessons)
	if err != nil {
		return nil, err
	}
	run, err := m.lab.Runs.Get(in)
	if err != nil {
		return nil, err
	}
	pq, err := m.sceneQuestion(st, &q)
	if err != nil {
		return nil, err
	}
	rq := &record.Question{ID: newQuestionID(), Kind: q.Kind, Host: q.Host, Scene: q.Scene}
	switch q.Kind {
	case "ejected", "out":
		at, err := httperr.NumberJSON("qat", q.At, moment)
		if err != nil {
			return nil, err
		}
		rq.AtMs = int64(at * 1000)
		if q.Kind == "out" {
			rq.Text = fmt.Sprintf("How many hosts are ejected at %s s?", ftoa(at))
			break
		}
		if !slices.Contains(run.Hosts, q.Host) {
			return nil, &httperr.FieldError{Field: "qhost", Msg: fmt.Sprintf("%q is not a host of this run (allowed %s)", httperr.Truncate(q.Host, 20), strings.Join(run.Hosts, ", "))}
		}
		rq.Text = fmt.Sprintf("Is %s ejected at %s s?", q.Host, ftoa(at))
		rq.Choices = []string{"yes", "no"}
	case "lesson":
		if d == nil || d.Predict.Question == "" {
			return nil, &httperr.FieldError{Field: "qkind", Msg: "the room shows no lesson with a prediction (allowed ejected, out)"}
		}
		rq.Text, rq.AtMs = d.Predict.Question, int64(d.Predict.PauseAt)+1
		rq.Choices = inOrder(d.Predict.Choices, course.ChoiceOrder(code, course.ChoiceKey(d.ID, -1), len(d.Predict.Choices)))
	case plan.KindChoice:
		if pq == nil { // only a plan's question has checks to answer it
			return nil, &httperr.FieldError{Field: "qkind", Msg: "choice is asked from a plan's scene (?scene=N)"}
		}
		cs := pq.ChoiceTexts()
		rq.Text, rq.AtMs = pq.Words(), int64(pq.At)
		rq.Choices = inOrder(cs, course.ChoiceOrder(code, PlanChoiceKey(st.Plan, *q.Scene), len(cs)))
	default:
		return nil, &httperr.FieldError{Field: "qkind", Msg: fmt.Sprintf("%q is not a kind of question (allowed ejected, out, lesson)", httperr.Truncate(q.Kind, 20))}
	}
	for _, f := range run.Frames {
		if f.TMs >= rq.AtMs {
			break
		}
		rq.Hold++
	}
	if rq.Hold >= len(run.Frames) {
		return nil, &httperr.FieldError{Field: "qat", Msg: fmt.Sprintf("the run ends at %d ms, before the moment asked about", run.Frames[len(run.Frames)-1].TMs)}
	}
	return rq, nil
}

// PlanChoiceKey names a plan scene's question for course.ChoiceOrder, as
// course.ChoiceKey names a lesson's.
func PlanChoiceKey(plan string, scene int) string {
	return "plan/" + plan + "/" + strconv.Itoa(scene)
}

// inOrder is choices in order (a permutation of their indices).
func inOrder(choices []string, order []int) []string {
	out := make([]string, 0, len(choices))
	for _, i := range order {
		out = append(out, choices[i])
	}
	return out
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Answer is the run's answer to q: read off the frame at q's moment
// (the first at or after it), or the lesson's answer (engine/course
// checks it against the engine), or for a plan's choice the one choice
// whose check holds on the run (scenes.Book.ChoiceAnswer).
func (m Maker) Answer(st *record.State, q *record.Question) (string, error) {
	in, d, err := st.Inputs(m.lab.Lessons)
	if err != nil {
		return "", err
	}
	run, err := m.lab.Runs.Get(in)
	if err != nil {
		return "", err
	}
	f := run.Frames[min(q.Hold, len(run.Frames)-1)]
	switch q.Kind {
	case "ejected":
		for _, h := range f.Hosts {
			if h.Name == q.Host && h.Ejected {
				return "yes", nil
			}
		}
		return "no", nil
	case "out":
		n := 0
		for _, h := range f.Hosts {
			if h.Ejected {
				n++
			}
		}
		return strconv.Itoa(n), nil
	case plan.KindChoice:
		return m.plans.ChoiceAnswer(st, q, run)
	}
	if d == nil || d.Predict.Answer < 0 || d.Predict.Answer >= len(d.Predict.Choices) {
		return "", errors.New("the room's lesson has no answer to its prediction")
	}
	return d.Predict.Choices[d.Predict.Answer], nil
}

// A plan scene's question, asked with one click (issue 23): the present
// page's scene panel posts /r/{code}/questions?scene=N, the room's one
// ask path (openQuestion), which takes the scene's kind, host and moment
// instead of the form's. The answer the plan expects never rides on the
// room's state (anyone with the code reads that, and the recording): the
// instructor's scene panel and board look it up in the plan, and the
// histogram marks the engine's answer on the room's run, as for any
// question. The room's state keeps, per scene, whether it was shown and
// asked and how the room answered (Progress), for the board.

// sceneQuestion is the plan question q asks for (?scene=N; nil when it
// asks the instructor's own), with q's kind, host and moment set from
// it. Only the room's current scene can be asked: its run is the one on
// screen, the one the plan's answer was checked on.
func (m Maker) sceneQuestion(st *record.State, q *Request) (*plan.Question, error) {
	if q.Scene == nil {
		return nil, nil
	}
	p := m.plans.Plan(st.Plan)
	if p == nil {
		return nil, httperr.WithKind(httperr.KindConflict, &httperr.FieldError{Field: "scene", Msg: "this room was not started from a plan: it has no scenes"})
	}
	if err := scenes.InRange(p, q.Scene); err != nil {
		return nil, err
	}
	n := *q.Scene
	if err := scenes.OnScene(p, st, n); err != nil {
		return nil, err
	}
	pq := p.Scenes[n].Question
	if pq == nil {
		return nil, scenes.Lacks(p, n, "question", func(sc *plan.Scene) bool { return sc.Question != nil })
	}
	q.Kind, q.Host = pq.Kind, pq.Host
	q.At = json.RawMessage(ftoa(float64(pq.At) / 1000))
	return pq, nil
}

// newQuestionID is a question's id: 8 random hex digits, new at each
// question (a poll's answers are keyed by it on the bus).
func newQuestionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
