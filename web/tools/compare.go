package tools

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/a-h/templ"

	"outlierlab/engine/scenario"
	"outlierlab/web/budget"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// comparePage handles GET /compare: two runs the cache holds are shown
// at once; otherwise the runs to make are weighed (past the budget, a
// 422 naming the heavier side), admitted (a 503 when the lab is busy)
// and made on a streamed page with its progress.
func (s *Tools) comparePage(w http.ResponseWriter, r *http.Request) {
	// ?view=projector lays the page out for a room's screen, as on the
	// lab (SplitView); it is not part of either run.
	mode, rest, viewErr := page.SplitView(r.URL.RawQuery)
	a, b, err := parseCompareQuery(rest)
	if viewErr != nil {
		err = errors.Join(httperr.WithKind(httperr.KindMalformed, viewErr), err)
	}
	var todo []compareSide
	var names []string
	if err == nil {
		todo, names, err = s.compareWork(a, b)
	}
	if err != nil {
		switch k := httperr.KindOf(err, httperr.KindMalformed); k {
		case httperr.KindInternal, httperr.KindURITooLong:
			httperr.Write(w, err, k)
		default:
			s.pages.BadRequest(w, r, httperr.Status[k], "/compare", httperr.Text(err))
		}
		return
	}
	if len(todo) == 0 {
		v, err := s.compareOf(a, b)
		if err != nil {
			httperr.Write(w, err, httperr.KindInternal)
			return
		}
		v.Layout = s.pages.Layout("Compare: "+a.link.Preset, "lab", true)
		v.Projector = mode == view.Projector
		s.pages.Render(w, r, http.StatusOK, templates.ComparePage(v))
		return
	}
	s.heavy(w, r, 1, s.pages.Layout("Compare: "+a.link.Preset, "lab", true), "Comparing A and B", func(p *page.Progress) (templ.Component, error) {
		for i, side := range todo {
			p.Step(i, len(todo), "runs ("+names[i]+" next)")
			if _, err := s.runs.Get(side.inputs()); err != nil {
				return nil, err
			}
		}
		p.Phase("drawing the charts")
		v, err := s.compareOf(a, b)
		if err != nil {
			return nil, err
		}
		v.Projector = mode == view.Projector
		return templates.CompareContent(v), nil
	})
}

// compareOf is the view of both sides' runs (from the cache, or made).
func (s *Tools) compareOf(a, b compareSide) (view.Compare, error) {
	runA, err := s.runs.Get(a.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	runB, err := s.runs.Get(b.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	return compareView(runA, runB, a, b), nil
}

// compareWork is the runs a compare has to make (the cache has the
// others) and their names (A, B), weighed against the budget: past it,
// the heavier side is the field named.
func (s *Tools) compareWork(a, b compareSide) ([]compareSide, []string, error) {
	var todo []compareSide
	var names []string
	var units, heaviest int64
	field := "a"
	for i, side := range []compareSide{a, b} {
		in := side.inputs()
		if (i == 1 && in.Canonical().Key() == a.inputs().Canonical().Key()) || s.runs.Has(in) {
			continue
		}
		p, ok := scenario.Lookup(in.Preset)
		if !ok {
			return nil, nil, tabstate.ErrUnknownPreset
		}
		sc, cfg, err := tabstate.ApplyInputs(p, in.Canonical())
		if err != nil {
			return nil, nil, err // as the run would fail
		}
		// Each side as any run, before the lab is busy with it; the
		// refusal says which side.
		if err := s.budget.CheckRun(sc, cfg); err != nil {
			return nil, nil, httperr.WithKind(httperr.KindOverBudget, &httperr.FieldError{Field: []string{"a", "b"}[i], Msg: httperr.Text(err)})
		}
		w := budget.RunWork(sc, cfg)
		if w > heaviest {
			heaviest, field = w, []string{"a", "b"}[i]
		}
		units += w
		todo, names = append(todo, side), append(names, []string{"A", "B"}[i])
	}
	err := s.budget.CheckWork(field, units, fmt.Sprintf("%d runs of up to %s units each", len(todo), budget.Millions(heaviest)),
		"fewer hosts, a lower rps or a longer interval")
	return todo, names, err
}
