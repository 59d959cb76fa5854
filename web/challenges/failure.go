package challenges

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/challenge"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
)

// logIntervals is how many intervals of the decision log the failure page
// shows, up to the failing moment: the tick that decided it and the ones
// that led to it.
const logIntervals = 3

// failurePage handles GET /challenges/{id}/failure?goal=S/G&run=K&<the
// submission>: the goal's scenario run again on the K-th hidden seed with
// the submission, shown at the moment the goal failed: what the run did,
// the hosts then, and the decision log up to that tick. The seed stays on
// the server; the page names the run by K alone.
func (h *Challenges) failurePage(w http.ResponseWriter, r *http.Request) {
	c, ok := h.find(w, r)
	if !ok {
		return
	}
	v, err := h.failure(r, c)
	if err != nil {
		status := httperr.Status[httperr.KindOf(err, httperr.KindBadValue)]
		h.Pages.BadRequest(w, r, status, httperr.Text(err), "")
		return
	}
	h.Pages.Render(w, r, http.StatusOK, failurePage(v))
}

func (h *Challenges) failure(r *http.Request, c *challenge.Challenge) (Failure, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return Failure{}, httperr.WithKind(httperr.KindMalformed, fmt.Errorf("the address's query cannot be read: %v", err))
	}
	one := func(k string) string {
		if vs := q[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	s, g, ok := c.Goal(one("goal"))
	if !ok {
		var refs []string
		for _, sc := range c.Scenarios {
			for _, gl := range sc.Goals {
				refs = append(refs, sc.ID+"/"+gl.ID)
			}
		}
		return Failure{}, &httperr.FieldError{Field: "goal", Msg: fmt.Sprintf("%q is not a goal of %s (allowed %s)", httperr.Truncate(one("goal"), 60), c.ID, strings.Join(refs, ", "))}
	}
	k, err := strconv.Atoi(one("run"))
	if err != nil || k < 1 || k > c.Seeds {
		return Failure{}, &httperr.FieldError{Field: "run", Msg: fmt.Sprintf("%q is not a run of the battery (allowed 1–%d)", httperr.Truncate(one("run"), 20), c.Seeds)}
	}
	sub := challenge.Submission{}
	var errs []error
	for name, vs := range q {
		switch {
		case name == "goal" || name == "run":
		case !slices.Contains(c.Unlocked, name):
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(name, 40), Msg: "is not a setting this challenge unlocks (allowed goal, run, " + strings.Join(c.Unlocked, ", ") + ")"})
		case len(vs) > 1:
			errs = append(errs, &httperr.FieldError{Field: name, Msg: fmt.Sprintf("is given %d times (allowed once)", len(vs))})
		default:
			sub[name] = vs[0]
		}
	}
	if len(errs) > 0 {
		return Failure{}, errors.Join(errs...)
	}
	if err := c.Validate(sub); err != nil {
		return Failure{}, fieldErrors(err)
	}
	p, _ := scenario.Lookup(s.Preset)
	sc, cfg, err := settings.Apply(p, c.Layers(s, sub)...)
	if err != nil {
		return Failure{}, fieldErrors(err)
	}
	if err := h.Budget.CheckRun(sc, cfg); err != nil {
		return Failure{}, err
	}
	seed := h.seeds.seeds(c.ID, c.Seeds)[k-1]
	run, err := scenario.Run(sc, cfg, seed)
	if err != nil {
		return Failure{}, httperr.WithKind(httperr.KindBadValue, err)
	}
	o := g.Measure(&run)
	v := Failure{Layout: h.Pages.Layout(c.Title+": a failed goal", "challenges", false), ID: c.ID, Title: c.Title, ChallengeURL: "/challenges/" + c.ID,
		Scenario: s.Title, Goal: g.Words(), Run: k, Runs: c.Seeds, Detail: o.Detail}
	if o.Pass { // a link to a run where it held: say so, show its end
		v.Detail = "This goal held on this run: " + o.Detail
		o.AtMs = run.Summary.EndMs
	}
	v.At = scenarioMs(o.AtMs)
	v.LabURL = labURL(c, s, sub, o.AtMs)
	for _, name := range slices.Sorted(maps.Keys(sub)) {
		v.Settings = append(v.Settings, name+" = "+sub[name])
	}
	at := -1
	for i := range run.Frames {
		if run.Frames[i].TMs <= o.AtMs {
			at = i
		}
	}
	if at >= 0 {
		for _, hf := range run.Frames[at].Hosts {
			sr := "—"
			if hf.SuccessRate >= 0 {
				sr = strconv.FormatFloat(hf.SuccessRate, 'f', 1, 64) + "%"
			}
			v.Hosts = append(v.Hosts, HostView{Name: hf.Name, Ejected: hf.Ejected, SuccessRate: sr, Requests: hf.Requests})
		}
		// Newest first, as the lab's log reads.
		for i := at; i >= max(0, at-logIntervals+1); i-- {
			entries := tabstate.DecisionsOf(&run.Frames[i], cfg)
			slices.Reverse(entries)
			v.Log = append(v.Log, entries...)
		}
	}
	return v, nil
}
