package challenges

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/challenge"
	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/budget"
	"outlierlab/web/httperr"
	"outlierlab/web/tabid"
)

// fragmentHeader asks for the result alone (the page's script swaps it
// in); without it the answer is the whole page with its result (a form
// posted without script, by keyboard or not).
const fragmentHeader = "X-Challenge-Fragment"

// grade handles POST /challenges/{id}/grade: the form's unlocked settings
// (form-encoded), checked (422 naming the setting and its range), one
// submission per browser every few seconds (429 naming the wait), the
// battery weighed against the budget (422 past it) and admitted on one
// core, then run on the hidden seeds and answered goal by goal.
func (h *Challenges) grade(w http.ResponseWriter, r *http.Request) {
	c, ok := h.find(w, r)
	if !ok {
		return
	}
	sub, err := submission(c, r)
	if err == nil {
		err = h.admit(r)
	}
	var res Result
	if err == nil {
		res, err = h.run(r, c, sub)
	}
	if err != nil {
		h.refuse(w, r, c, sub, err)
		return
	}
	h.Log.Info("challenge graded", "challenge", c.ID, "pass", res.Pass, "passed", res.Passed, "goals", res.Total, "runs", res.Runs)
	h.answer(w, r, c, sub, http.StatusOK, &res)
}

// answer writes a result: the fragment, or the page around it.
func (h *Challenges) answer(w http.ResponseWriter, r *http.Request, c *challenge.Challenge, sub challenge.Submission, status int, res *Result) {
	if r.Header.Get(fragmentHeader) != "" {
		h.Pages.Render(w, r, status, resultBox(*res))
		return
	}
	h.Pages.Render(w, r, status, challengePage(h.pageView(c, sub, res), h.scriptURL))
}

// refuse answers an error through the kinds table: its status, and its
// text in the result's place (the script shows it; a page posted without
// script shows it above the form).
func (h *Challenges) refuse(w http.ResponseWriter, r *http.Request, c *challenge.Challenge, sub challenge.Submission, err error) {
	if r.Context().Err() != nil {
		return // the visitor left
	}
	if b, ok := errors.AsType[*budget.Busy](err); ok {
		budget.WriteBusy(w, b)
		return
	}
	k := httperr.KindOf(err, httperr.KindBadValue)
	var wait *waitError
	if errors.As(err, &wait) {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.d.Seconds()))))
	}
	if r.Header.Get(fragmentHeader) != "" {
		httperr.Write(w, err, httperr.KindBadValue)
		return
	}
	h.answer(w, r, c, sub, httperr.Status[k], &Result{ID: c.ID, Problem: httperr.Text(err)})
}

// submission reads the form: each field an unlocked setting, once.
func submission(c *challenge.Challenge, r *http.Request) (challenge.Submission, error) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return nil, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("the body is %q; send the form (application/x-www-form-urlencoded) of the unlocked settings: %s", httperr.Truncate(ct, 60), strings.Join(c.Unlocked, ", ")))
	}
	if err := r.ParseForm(); err != nil {
		return nil, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("the form cannot be read: %v", err))
	}
	sub := challenge.Submission{}
	var errs []error
	for name, vs := range r.PostForm {
		switch {
		case !slices.Contains(c.Unlocked, name):
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(name, 40), Msg: "is not a setting this challenge unlocks (allowed " + strings.Join(c.Unlocked, ", ") + ")"})
		case len(vs) > 1:
			errs = append(errs, &httperr.FieldError{Field: name, Msg: fmt.Sprintf("is given %d times (allowed once)", len(vs))})
		default:
			sub[name] = strings.TrimSpace(vs[0])
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := c.Validate(sub); err != nil {
		return nil, fieldErrors(err)
	}
	return sub, nil
}

// fieldErrors turns the engine's refusals into the kinds table's
// FieldError: a 422 naming each setting and what it allows.
func fieldErrors(err error) error {
	var out []error
	// The engine joins its refusals one level deep, one a setting.
	all := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	}
	for _, e := range all {
		var fe *plan.FieldError
		if errors.As(e, &fe) {
			out = append(out, &httperr.FieldError{Field: fe.Field, Msg: fe.Problem})
		} else {
			out = append(out, httperr.WithKind(httperr.KindBadValue, e))
		}
	}
	return errors.Join(out...)
}

// waitError is a submission too soon after the last.
type waitError struct{ d, every time.Duration }

func (e *waitError) Error() string {
	return fmt.Sprintf("submission: one every %s from a browser (allowed); wait %s and submit again", fmtWait(e.every), fmtWait(e.d))
}

func fmtWait(d time.Duration) string {
	return strconv.FormatFloat(math.Ceil(d.Seconds()*10)/10, 'f', -1, 64) + " s"
}

// admit bounds submissions: one per browser (or client address, for a
// client without the lab's cookie) every Every.
func (h *Challenges) admit(r *http.Request) error {
	key := tabid.Browser(r)
	if key == "" {
		key = "addr " + h.Proxies.Client(r)
	}
	if ok, wait := h.limit.allow(key, h.Now()); !ok {
		return httperr.WithKind(httperr.KindTooMany, &waitError{wait, h.Every})
	}
	return nil
}

// Grade grades a room's submission to challenge id (web/room) as grade
// grades one alone: the request's form of unlocked settings checked, one
// submission per browser every Every, the battery weighed and run on the
// hidden seeds. Every error is the kinds table's (a *budget.Busy too).
func (h *Challenges) Grade(r *http.Request, id string) (*challenge.Challenge, challenge.Submission, *challenge.Grade, error) {
	c, ok := challenge.ByID(h.list, id)
	if !ok {
		return nil, nil, nil, httperr.WithKind(httperr.KindNotFound, &httperr.FieldError{Field: "challenge", Msg: fmt.Sprintf("%q is not a challenge here", httperr.Truncate(id, 40))})
	}
	sub, err := submission(c, r)
	if err == nil {
		err = h.admit(r)
	}
	if err != nil {
		return c, sub, nil, err
	}
	g, _, err := h.gradeOnSeeds(r, c, sub)
	return c, sub, g, err
}

// Challenge finds a challenge by id (a room's challenge scene).
func (h *Challenges) Challenge(id string) (*challenge.Challenge, bool) {
	return challenge.ByID(h.list, id)
}

// run grades a submission and makes its result.
func (h *Challenges) run(r *http.Request, c *challenge.Challenge, sub challenge.Submission) (Result, error) {
	g, seeds, err := h.gradeOnSeeds(r, c, sub)
	if err != nil {
		return Result{}, err
	}
	return resultOf(c, sub, g, seeds), nil
}

// gradeOnSeeds weighs the battery (each run within the one-run ceiling,
// all of them within one request's), waits for a core, and grades on the
// hidden seeds (how many: the second result).
func (h *Challenges) gradeOnSeeds(r *http.Request, c *challenge.Challenge, sub challenge.Submission) (*challenge.Grade, int, error) {
	seeds := h.seeds.seeds(c.ID, c.Seeds)
	var units int64
	for i := range c.Scenarios {
		s := &c.Scenarios[i]
		p, _ := scenario.Lookup(s.Preset)
		sc, cfg, err := settings.Apply(p, c.Layers(s, sub)...)
		if err != nil {
			return nil, 0, fieldErrors(err)
		}
		if err := h.Budget.CheckRun(sc, cfg); err != nil {
			return nil, 0, err
		}
		units += budget.Weigh(sc, cfg).Units * int64(len(seeds))
	}
	if err := h.Budget.CheckWork("settings", units, fmt.Sprintf("grading is %d runs", c.Runs()), "settings that make each run lighter"); err != nil {
		return nil, 0, err
	}
	release, err := h.Budget.Admit(r.Context(), 1)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	g, err := c.Grade(sub, seeds, challenge.Sequential)
	if err != nil {
		return nil, 0, httperr.WithKind(httperr.KindBadValue, err)
	}
	return &g, len(seeds), nil
}

// resultOf is a grade as the page shows it: each failed goal with the
// link to its first failing run (by index, never by seed).
func resultOf(c *challenge.Challenge, sub challenge.Submission, g *challenge.Grade, seeds int) Result {
	res := Result{ID: c.ID, Pass: g.Pass(), Runs: g.Runs, Seeds: seeds, Total: len(g.Goals)}
	for _, gr := range g.Goals {
		s, _, _ := c.Goal(gr.Ref())
		v := GoalView{Scenario: s.Title, Words: gr.Words, Passed: gr.Passed, Runs: gr.Runs, OK: gr.Passed == gr.Runs, Detail: gr.Detail}
		if v.OK {
			res.Passed++
		} else {
			v.Detail = gr.First.Detail
			v.FailAt = scenarioMs(gr.First.AtMs)
			v.FailURL = failURL(c, gr, sub)
		}
		res.Goals = append(res.Goals, v)
	}
	return res
}

func failURL(c *challenge.Challenge, gr challenge.GoalResult, sub challenge.Submission) string {
	q := url.Values{"goal": {gr.Ref()}, "run": {strconv.Itoa(gr.First.SeedIndex + 1)}}
	for k, v := range sub {
		q.Set(k, v)
	}
	return "/challenges/" + c.ID + "/failure?" + q.Encode()
}

func scenarioMs(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s" }
