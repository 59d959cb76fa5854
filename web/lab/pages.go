package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"outlierlab/engine/scenario"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/csp"
	"outlierlab/web/httperr"
	"outlierlab/web/labview"
	"outlierlab/web/page"
	"outlierlab/web/tabid"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/tools"
	"outlierlab/web/view"
)

// labPage handles GET /lab?preset=NAME&field=value…&t=S: the free lab in
// a fresh tab, on a preset (the opening story by default) with the
// address's settings, paused at its cursor (tabstate/permalink.go). A bad address is
// a 400 page naming every bad field and its range, never a lab with some of
// the settings silently dropped: a room following the projector must see
// what the instructor sees, or be told why not.
func (s *Lab) labPage(w http.ResponseWriter, r *http.Request) {
	mode, query, err := page.SplitView(r.URL.RawQuery)
	if err != nil {
		s.Pages.BadRequest(w, r, httperr.Status[httperr.KindMalformed], "/lab", httperr.Text(err))
		return
	}
	link, err := tabstate.ParseLabQuery(query)
	release := func() {}
	if err == nil {
		// A run past the budget is the page's to name (a 422); a busy
		// lab is a 503.
		release, err = s.admitLabPage(r.Context(), link.Inputs())
		if _, over := errors.AsType[*budget.OverBudget](err); err != nil && !over {
			budget.Refuse(w, err)
			return
		}
	}
	if err == nil {
		defer release()
		var lab view.Lab
		lab, err = s.LabView(link, s.Browser(w, r))
		if err == nil {
			lab.View = mode
			// Only the free lab's own page models a cluster: a room's
			// page renders the lab (LabViewFor) without the box, and
			// the projector view, all charts, has no room for it.
			if run, err := s.Runs.Get(link.Inputs()); err == nil && mode != view.Projector {
				lab.Model = modelBox(run)
			}
			csp.AllowTabScripts(w, lab.Tab)
			l := s.Pages.Layout("Lab: "+link.Preset, "lab", true)
			l.Strip = s.startStrip(false)
			s.Pages.Render(w, r, http.StatusOK, templates.LabPage(l, lab))
			return
		}
	}
	switch k := linkErrorKind(err, link); k {
	case httperr.KindNotFound:
		s.Pages.NotFound(w, r, fmt.Sprintf("There is no scenario preset called %q.", httperr.Truncate(link.Preset, 60)))
	case httperr.KindInternal:
		httperr.Write(w, fmt.Errorf("cannot run the preset: %w", err), k)
	default:
		s.Pages.BadRequest(w, r, httperr.Status[k], "/lab", httperr.Text(err))
	}
}

// linkErrorKind is what a lab address that fails is: a bad value in it
// makes the link malformed (400), the address being the whole request. An
// error of no known kind is the server's when the address set
// nothing (the preset fails with its own settings), the address's
// otherwise.
func linkErrorKind(err error, link tabstate.LabLink) httperr.Kind {
	unknown := httperr.KindBadValue
	if len(link.Values) == 0 && link.TMs == 0 && link.Inject == "" {
		unknown = httperr.KindInternal
	}
	if k := httperr.KindOf(err, unknown); k != httperr.KindBadValue {
		return k
	}
	return httperr.KindMalformed
}

// LabView is a lab panel for a new tab at the link's settings and cursor:
// the page is complete and readable before the stream connects, and the
// stream's first redraw replaces its live parts. The tab's session is
// built from the page's signals (inputs and cursor) by its first request,
// as any session is rebuilt: a page view alone keeps nothing on the server.
// The tab's id is issued for browser (the page's request's, Browser).
func (s *Lab) LabView(link tabstate.LabLink, browser string) (view.Lab, error) {
	return s.LabViewFor(link, tabid.New(browser))
}

// LabViewFor is LabView for the tab with id tab (LessonViewFor).
func (s *Lab) LabViewFor(link tabstate.LabLink, tab string) (view.Lab, error) {
	run, err := s.Runs.Get(link.Inputs())
	if err != nil {
		return view.Lab{}, err
	}
	cursor, err := link.Cursor(run)
	if err != nil {
		return view.Lab{}, err
	}
	snap := snapshot{run: run, speed: tabstate.Speeds[0], cursor: cursor}
	return view.Lab{
		Tab:       tab,
		Title:     "Free lab",
		Signals:   pageSignals(tab, snap),
		StreamURL: "/lab/stream",
		Controls:  labview.Controls(run),
		Charts:    chart.BoxesAt(run, cursor),
		Speeds:    tabstate.SpeedButtons(),
		Status:    statusView(snap),
		Panels:    labview.Panels(run, cursor),
		Link:      true,
		Inject:    tabstate.InjectView(run),
		Lint:      lintOf(run),
	}, nil
}

// Browser is the browser identity a page's tab is issued for: the
// request's olab_browser cookie, or a new one set on w (web/tabid). Call
// it before the page's header is written.
func (s *Lab) Browser(w http.ResponseWriter, r *http.Request) string {
	return tabid.Ensure(w, r, s.Proxies.Secure(r))
}

// admitLabPage admits a lab page's run when it is heavy and not cached;
// release is a no-op otherwise (a bad link is the page's to name). A run
// past the budget is refused here, before it waits for a core.
func (s *Lab) admitLabPage(ctx context.Context, in tabstate.Inputs) (release func(), err error) {
	p, ok := scenario.Lookup(in.Preset)
	if !ok || s.Runs.Has(in) {
		return func() {}, nil
	}
	sc, cfg, err := tabstate.ApplyInputs(p, in.Canonical())
	if err != nil {
		return func() {}, nil
	}
	if err := s.Budget.CheckRun(sc, cfg); err != nil {
		return nil, err
	}
	if budget.RunWork(sc, cfg) <= budget.LightRun {
		return func() {}, nil
	}
	return s.Budget.Admit(ctx, 1)
}

// lintOf is lint's panel on run's settings (the lab page's tools).
func lintOf(run *tabstate.Run) view.LintPanel {
	p, ok := scenario.Lookup(run.Preset)
	if !ok {
		return view.LintPanel{}
	}
	return tools.LintOf(p, run.Inputs)
}

// home handles GET /: the course, the presets, and a workshop's start.
func (s *Lab) home(w http.ResponseWriter, r *http.Request) {
	h := view.Home{Layout: s.Pages.Layout("Lessons", "home", false), Presets: page.PresetLinks(""), Lessons: s.LessonLinks()}
	h.Layout.ProgressJS = s.Pages.AssetURL("progress.js")
	h.Layout.Strip = s.startStrip(true)
	s.Pages.Render(w, r, http.StatusOK, templates.Home(h))
}
