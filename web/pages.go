package web

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"outlierlab/engine/scenario"
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/csp"
	"outlierlab/web/gzipstream"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// defaultPreset is the lab's opening story (design.md, presets 1).

func (s *Server) layout(title, nav string, charts bool) view.Layout {
	l := view.Layout{
		Title: title, Nav: nav,
		CSS: s.assets.URL("app.css"), AppJS: s.assets.URL("app.js"),
		Datastar: s.assets.URL("vendor/datastar.js"), Icon: s.assets.URL("favicon.svg"),
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
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Encoding")
	var out io.Writer = w
	// A lab page is ~70 KB of HTML and ~13 KB gzipped: on a room's Wi-Fi
	// that is most of a first chart's wait after the scripts.
	if r.Method != http.MethodHead && gzipstream.Accepts(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer func() { _ = zw.Close() }()
		out = zw
	}
	w.WriteHeader(status)
	if err := c.Render(r.Context(), out); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
	}
}

// home handles GET /.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	h := view.Home{Layout: s.layout("Lessons", "home", false), Presets: presetLinks(""), Lessons: s.lessonLinks()}
	s.render(w, r, http.StatusOK, s.withRoomStart(templates.Home(h), true))
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

// labPage handles GET /lab?preset=NAME&field=value…&t=S: the free lab in
// a fresh tab, on a preset (the opening story by default) with the
// address's settings, paused at its cursor (permalink.go). A bad address is
// a 400 page naming every bad field and its range, never a lab with some of
// the settings silently dropped: a room following the projector must see
// what the instructor sees, or be told why not.
func (s *Server) labPage(w http.ResponseWriter, r *http.Request) {
	mode, query, err := splitView(r.URL.RawQuery)
	if err != nil {
		s.badRequestPage(w, r, http.StatusBadRequest, "/lab", httperr.Text(err))
		return
	}
	link, err := tabstate.ParseLabQuery(query)
	if err == nil {
		release, berr := s.admitLabPage(r.Context(), link.Inputs())
		if berr != nil {
			s.refuseHeavy(w, berr)
			return
		}
		defer release()
		var lab view.Lab
		lab, err = s.labView(link)
		if err == nil {
			lab.View = mode
			csp.AllowTabScripts(w, lab.Tab)
			s.render(w, r, http.StatusOK, s.withRoomStart(templates.LabPage(s.layout("Lab: "+link.Preset, "lab", true), lab), false))
			return
		}
	}
	switch k := linkErrorKind(err, link); k {
	case httperr.KindNotFound:
		s.notFoundPage(w, r, fmt.Sprintf("There is no scenario preset called %q.", httperr.Truncate(link.Preset, 60)))
	case httperr.KindInternal:
		httperr.Plain(w, httperr.Status[k], "cannot run the preset: "+err.Error())
	default:
		s.badRequestPage(w, r, httperr.Status[k], "/lab", httperr.Text(err))
	}
}

// splitView takes the page's view out of a query (?view=projector): it is
// how the page is laid out, not one of the lab's inputs, so a permalink
// never carries it (app.js keeps it in the address while the stream
// rewrites the rest). A view other than "" or projector is refused,
// named.
func splitView(raw string) (mode, rest string, err error) {
	q, perr := url.ParseQuery(raw)
	if perr != nil || !q.Has("view") {
		return "", raw, nil // the lab's own parser names a bad query
	}
	vs := q["view"]
	q.Del("view")
	switch {
	case len(vs) > 1:
		err = &httperr.FieldError{Field: "view", Msg: fmt.Sprintf("is given %d times (allowed once)", len(vs))}
	case vs[0] != "" && vs[0] != view.Projector:
		err = &httperr.FieldError{Field: "view", Msg: fmt.Sprintf("%q is not a view (allowed %s)", httperr.Truncate(vs[0], 40), view.Projector)}
	}
	return vs[0], q.Encode(), err
}

// onlyParams is the one rule for a page's query: a parameter the page does
// not take is refused, named, never silently dropped (a link that seems to
// set something must not be believed to).
func onlyParams(rawQuery, page string, allowed ...string) error {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Msg: "the query is not valid: " + err.Error()})
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(allowed, k) {
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(k, 40), Msg: fmt.Sprintf("is not a parameter of %s (allowed %s)", page, strings.Join(allowed, ", "))})
		}
	}
	return errors.Join(errs...)
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

// labView is a lab panel for a new tab at the link's settings and cursor:
// the page is complete and readable before the stream connects, and the
// stream's first redraw replaces its live parts. The tab's session is
// built from the page's signals (inputs and cursor) by its first request,
// as any session is rebuilt: a page view alone keeps nothing on the server.
func (s *Server) labView(link tabstate.LabLink) (view.Lab, error) {
	run, err := s.runs.Get(link.Inputs())
	if err != nil {
		return view.Lab{}, err
	}
	cursor, err := link.Cursor(run)
	if err != nil {
		return view.Lab{}, err
	}
	tab := newTabID()
	snap := snapshot{run: run, speed: speeds[0], cursor: cursor}
	return view.Lab{
		Tab:       tab,
		Title:     "Free lab",
		Signals:   pageSignals(tab, run, cursor),
		StreamURL: "/lab/stream",
		Controls:  controlsView(run),
		Charts:    chart.BoxesAt(run, cursor),
		Speeds:    speedButtons(),
		Status:    statusView(snap),
		Panels:    panelsView(run, cursor),
		Link:      true,
		Inject:    tabstate.InjectView(run),
	}, nil
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
	s.notFoundPage(w, r, fmt.Sprintf("Nothing lives at %s.", httperr.Truncate(r.URL.Path, 80)))
}

// badRequestPage says what is wrong with an address, one line per field
// with its allowed range, and links to the plain page (plain) instead.
func (s *Server) badRequestPage(w http.ResponseWriter, r *http.Request, status int, plain, problems string) {
	s.render(w, r, status, templates.BadRequest(view.BadRequest{
		Layout: s.layout("Bad link", "", false), Problems: strings.Split(problems, "\n"), Plain: plain,
	}))
}

func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request, what string) {
	s.render(w, r, httperr.Status[httperr.KindNotFound], templates.NotFound(view.NotFound{Layout: s.layout("Not found", "", false), What: what, Lessons: s.lessonLinks()}))
}

// admitLabPage admits a lab page's run when it is heavy and not cached;
// release is a no-op otherwise (a bad link is the page's to name).
func (s *Server) admitLabPage(ctx context.Context, in tabstate.Inputs) (release func(), err error) {
	p, ok := scenario.Lookup(in.Preset)
	if !ok || s.runs.Has(in) {
		return func() {}, nil
	}
	sc, cfg, err := tabstate.ApplyInputs(p, in.Canonical())
	if err != nil || budget.RunWork(sc, cfg) <= budget.LightRun {
		return func() {}, nil
	}
	return s.budget.Admit(ctx, 1)
}
