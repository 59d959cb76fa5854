// Package page is what every page of the lab shares: the layout (its
// assets' URLs), rendering (gzipped when the browser takes it), the error
// pages, a query's one rule (no parameter the page does not take) and
// the progress page of heavy work.
package page

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"outlierlab/engine/scenario"
	"outlierlab/web/asset"
	"outlierlab/web/gzipstream"
	"outlierlab/web/httperr"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// Pages renders the lab's pages. Lessons are the links a 404 page offers.
type Pages struct {
	assets  *asset.Assets
	log     *slog.Logger
	lessons []view.LessonLink
}

// New is the pages over the assets; lessons are listed on the 404 page.
func New(a *asset.Assets, log *slog.Logger, lessons []view.LessonLink) *Pages {
	return &Pages{assets: a, log: log, lessons: lessons}
}

// AssetURL is an embedded static file's address, with its content hash
// ("progress.js"): a page that loads a script of its own.
func (p *Pages) AssetURL(name string) string { return p.assets.URL(name) }

// Layout is a page's frame: its title, the nav item it is, and whether it
// draws charts (ECharts is loaded only then).
func (p *Pages) Layout(title, nav string, charts bool) view.Layout {
	l := view.Layout{
		Title: title, Nav: nav,
		CSS:   []string{p.assets.URL("css/base.css"), p.assets.URL("css/lesson.css"), p.assets.URL("css/room.css"), p.assets.URL("css/tools.css")},
		AppJS: p.assets.URL("js/main.js"), Modules: p.assets.Modules("js/main.js"),
		Datastar: p.assets.URL("vendor/datastar.js"), Icon: p.assets.URL("favicon.svg"),
	}
	if charts {
		l.ECharts = p.assets.URL("vendor/echarts.min.js")
	}
	return l
}

// Render writes a full page. Pages are small; rendering into the response
// directly is fine, and a render error after the first byte can only be
// logged.
func (p *Pages) Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
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
		p.log.Error("render", "path", r.URL.Path, "err", err)
	}
}

func PresetLinks(selected string) []view.PresetLink {
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

// SplitView takes the page's view out of a query (?view=projector): it is
// how the page is laid out, not one of the lab's inputs, so a permalink
// never carries it (js/page.js keeps it in the address while the stream
// rewrites the rest). A view other than "" or projector is refused,
// named.
func SplitView(raw string) (mode, rest string, err error) {
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

// OnlyParams is the one rule for a page's query: a parameter the page does
// not take is refused, named, never silently dropped (a link that seems to
// set something must not be believed to).
func OnlyParams(rawQuery, page string, allowed ...string) error {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Msg: "the query is not valid: " + err.Error()})
	}
	var errs []error
	takes := "allowed " + strings.Join(allowed, ", ")
	if len(allowed) == 0 {
		takes = "it takes none"
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(allowed, k) {
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(k, 40), Msg: fmt.Sprintf("is not a parameter of %s (%s)", page, takes)})
		}
	}
	return errors.Join(errs...)
}

// NotFoundHandler handles every unknown path.
func (p *Pages) NotFoundHandler(w http.ResponseWriter, r *http.Request) {
	p.NotFound(w, r, fmt.Sprintf("Nothing lives at %s.", httperr.Truncate(r.URL.Path, 80)))
}

// BadRequest says what is wrong with an address, one line per field
// with its allowed range, and links to the plain page (plain) instead.
func (p *Pages) BadRequest(w http.ResponseWriter, r *http.Request, status int, plain, problems string) {
	p.Render(w, r, status, templates.BadRequest(view.BadRequest{
		Layout: p.Layout("Bad link", "", false), Problems: strings.Split(problems, "\n"), Plain: plain,
	}))
}

// NotFound is the 404 page saying what is not there.
func (p *Pages) NotFound(w http.ResponseWriter, r *http.Request, what string) {
	p.Render(w, r, httperr.Status[httperr.KindNotFound], templates.NotFound(view.NotFound{Layout: p.Layout("Not found", "", false), What: what, Lessons: p.lessons}))
}
