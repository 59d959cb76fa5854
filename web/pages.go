package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/a-h/templ"

	"outlierlab/engine/scenario"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// defaultPreset is the lab's opening story (design.md, presets 1).
const defaultPreset = "search-cache"

func (s *Server) layout(title, nav string, charts bool) view.Layout {
	l := view.Layout{
		Title: title, Nav: nav,
		CSS: s.assets.URL("app.css"), AppJS: s.assets.URL("app.js"),
		Datastar: s.assets.URL("vendor/datastar.js"),
	}
	if charts {
		l.ECharts = s.assets.URL("vendor/echarts.min.js")
	}
	return l
}

// render writes a full page. Pages are small; rendering into the response
// directly is fine, and a render error after the first byte can only be
// logged.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
	}
}

// home handles GET /.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	h := view.Home{Layout: s.layout("Lessons", "home", false), Presets: presetLinks(""), Lessons: s.lessonLinks()}
	s.render(w, r, http.StatusOK, templates.Home(h))
}

func presetLinks(selected string) []view.PresetLink {
	var out []view.PresetLink
	for _, p := range scenario.Presets() {
		out = append(out, view.PresetLink{
			Name: p.Name, Description: p.Description,
			URL:      "/lab?preset=" + url.QueryEscape(p.Name),
			Selected: p.Name == selected,
		})
	}
	return out
}

// labPage handles GET /lab?preset=NAME: the free lab on a preset (the
// opening story by default), in a fresh tab session.
func (s *Server) labPage(w http.ResponseWriter, r *http.Request) {
	preset := r.URL.Query().Get("preset")
	if preset == "" {
		preset = defaultPreset
	}
	lab, err := s.labView(preset)
	if errors.Is(err, errUnknownPreset) {
		s.notFoundPage(w, r, fmt.Sprintf("There is no scenario preset called %q.", truncate(preset, 60)))
		return
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "cannot run the preset: "+err.Error())
		return
	}
	s.render(w, r, http.StatusOK, templates.LabPage(s.layout("Lab: "+preset, "lab", true), lab))
}

// labView is a lab panel at t = 0 for a new tab: the page is complete and
// readable before the stream connects, and the stream's first redraw
// replaces its live parts.
func (s *Server) labView(preset string) (view.Lab, error) {
	run, err := s.runs.get(Inputs{Preset: preset})
	if err != nil {
		return view.Lab{}, err
	}
	tab := newTabID()
	snap := snapshot{run: run, speed: speeds[0]}
	return view.Lab{
		Tab:       tab,
		Signals:   pageSignals(tab, run),
		StreamURL: "/lab/stream",
		Controls:  controlsView(run),
		Charts:    chartBoxes(),
		Speeds:    speedButtons(),
		Status:    statusView(snap),
		Panels:    panelsView(run, 0),
	}, nil
}

func chartBoxes() []view.Chart {
	return []view.Chart{
		{ID: chartSuccessRate, Size: "wide", Title: "Success rate per host", Caption: "at each sweep, for hosts with enough requests; below the dashed threshold is an outlier"},
		{ID: chartLanes, Size: "wide", Title: "Ejections", Caption: "filled: ejected after that sweep · ▲ refused by the cap (overflow) · ◆ detected, not enforced · shaded: panic"},
		{ID: chartClients, Size: "wide", Title: "What clients saw", Caption: "requests that failed after retries, and retries sent · shaded: panic"},
		{ID: chartShare, Size: "half", Title: "Traffic share", Caption: "attempts each host served"},
		{ID: chartCounters, Size: "half", Title: "Detector counters", Caption: "cumulative; active is a gauge"},
	}
}

func speedButtons() []view.Speed {
	out := make([]view.Speed, len(speeds))
	for i, sp := range speeds {
		out[i] = view.Speed{Value: sp.Name, Label: speedLabel(sp, true), Title: speedLabel(sp, false)}
	}
	return out
}

// speedLabel is a speed on a button ("4×") or in words ("4 intervals/s").
func speedLabel(sp speed, short bool) string {
	switch {
	case sp.FPS == 0:
		return "instant"
	case short:
		return sp.Name + "×"
	case sp.FPS == 1:
		return "1 interval/s"
	}
	return sp.Name + " intervals/s"
}

// notFound handles every unknown path.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.notFoundPage(w, r, fmt.Sprintf("Nothing lives at %s.", truncate(r.URL.Path, 80)))
}

func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request, what string) {
	s.render(w, r, http.StatusNotFound, templates.NotFound(view.NotFound{Layout: s.layout("Not found", "", false), What: what, Lessons: s.lessonLinks()}))
}
