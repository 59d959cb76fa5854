package page

import (
	"compress/gzip"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"outlierlab/web/asset"
	"outlierlab/web/httperr"
	"outlierlab/web/view"
)

// testPages is the pages over the repository's static files.
func testPages(t *testing.T) *Pages {
	t.Helper()
	a, err := asset.LoadAssets(os.DirFS("..")) // web/static
	if err != nil {
		t.Fatal(err)
	}
	return New(a, slog.New(slog.NewTextHandler(io.Discard, nil)), []view.LessonLink{{ID: "cap", Title: "The cap", URL: "/lessons/cap"}})
}

// A query's one rule: a parameter the page does not take is refused,
// named with what the page takes; a query that is not one is malformed.
func TestOnlyParams(t *testing.T) {
	for _, tt := range []struct {
		query   string
		allowed []string
		want    string // "" for none
		kind    httperr.Kind
	}{
		{"", nil, "", 0},
		{"preset=a&t=60", []string{"preset", "t"}, "", 0},
		{"preset=a&zoom=2", []string{"preset", "t"}, "zoom: is not a parameter of /lab (allowed preset, t)", httperr.KindBadValue},
		{"b=1&a=2", nil, "a: is not a parameter of /lab (it takes none)\nb: is not a parameter of /lab (it takes none)", httperr.KindBadValue},
		{"a=%zz", []string{"a"}, "the query is not valid", httperr.KindMalformed},
	} {
		err := OnlyParams(tt.query, "/lab", tt.allowed...)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v, want none", tt.query, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.query, err, tt.want)
			continue
		}
		if k := httperr.KindOf(err, httperr.KindBadValue); k != tt.kind {
			t.Errorf("%q: kind %v, want %v", tt.query, k, tt.kind)
		}
	}
}

// The page's view is taken out of its query, never carried in the rest;
// a view but the projector's, or two, is refused, named.
func TestSplitView(t *testing.T) {
	for _, tt := range []struct {
		raw, mode, rest, err string
	}{
		{"preset=a", "", "preset=a", ""},
		{"preset=a&view=projector", "projector", "preset=a", ""},
		{"view=", "", "", ""},
		{"view=wall&t=6", "wall", "t=6", `view: "wall" is not a view (allowed projector)`},
		{"view=projector&view=projector", "projector", "", "view: is given 2 times (allowed once)"},
		{"a=%zz&view=x", "", "a=%zz&view=x", ""}, // the page's own parser names it
	} {
		mode, rest, err := SplitView(tt.raw)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if mode != tt.mode || rest != tt.rest || got != tt.err {
			t.Errorf("SplitView(%q) = %q, %q, %q; want %q, %q, %q", tt.raw, mode, rest, got, tt.mode, tt.rest, tt.err)
		}
	}
}

// A page goes out with its status, never cached, gzipped when the browser
// takes it (and not for HEAD); the 404 page says what is not there and
// offers the lessons.
func TestRender(t *testing.T) {
	p := testPages(t)
	for _, tt := range []struct {
		method, accept string
		gzipped        bool
	}{
		{"GET", "gzip, br", true},
		{"GET", "", false},
		{"GET", "br", false},
		{"HEAD", "gzip", false},
	} {
		req := httptest.NewRequest(tt.method, "/nowhere/<x>", nil)
		req.Header.Set("Accept-Encoding", tt.accept)
		w := httptest.NewRecorder()
		p.NotFoundHandler(w, req)
		res := w.Result()
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s %q: status %d, headers %v", tt.method, tt.accept, res.StatusCode, res.Header)
		}
		if got := res.Header.Get("Content-Encoding") == "gzip"; got != tt.gzipped {
			t.Errorf("%s %q: gzipped %v, want %v", tt.method, tt.accept, got, tt.gzipped)
		}
		if tt.method == "HEAD" {
			continue
		}
		body := io.Reader(res.Body)
		if tt.gzipped {
			zr, err := gzip.NewReader(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Nothing lives at /nowhere/&lt;x&gt;.", `href="/lessons/cap"`, p.AssetURL("css/base.css")} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s %q: the page lacks %s", tt.method, tt.accept, want)
			}
		}
	}
}

// Every preset is linked once, the selected one marked, its name escaped
// in its address.
func TestPresetLinks(t *testing.T) {
	links := PresetLinks("burst")
	selected := 0
	for _, l := range links {
		if l.URL != "/lab?preset="+l.Name || l.Name == "" {
			t.Errorf("%s: address %q", l.Name, l.URL)
		}
		if l.Selected {
			selected++
			if l.Name != "burst" {
				t.Errorf("%s is selected, not burst", l.Name)
			}
		}
	}
	if selected != 1 || len(links) < 5 {
		t.Errorf("%d presets, %d selected; want every preset, one selected", len(links), selected)
	}
}

// A work page: the frame and the bar first, a step per report (close
// ones dropped but the last, none after the end), then the content; an
// error of the work is shown in the page, its internal text never.
func TestWork(t *testing.T) {
	p := testPages(t)
	for _, tt := range []struct {
		name       string
		work       func(pr *Progress) (templ.Component, error)
		has, lacks []string
	}{
		{"done", func(pr *Progress) (templ.Component, error) {
			pr.every = time.Hour // every step but the last is too close to the one before
			pr.Step(1, 3, "runs")
			pr.Step(2, 3, "runs")
			pr.Step(3, 3, "runs")
			pr.Phase("drawing <the> charts")
			return templ.Raw("<p>THE CONTENT</p>"), nil
		}, []string{"<h1>A sweep</h1>", "starting…", `<progress max="3" value="3">100%</progress> 3 of 3 runs`, "drawing &lt;the&gt; charts", "<p>THE CONTENT</p>"},
			[]string{"1 of 3", "2 of 3"}},
		{"every step", func(pr *Progress) (templ.Component, error) {
			pr.every = 0
			pr.Step(1, 2, "seeds")
			pr.Step(2, 2, "seeds")
			return templ.Raw("ok"), nil
		}, []string{"1 of 2 seeds", "2 of 2 seeds"}, nil},
		{"failed", func(pr *Progress) (templ.Component, error) {
			return nil, httperr.WithKind(httperr.KindBadValue, errors.New("rps: 0 is too few (allowed 1–5000)"))
		}, []string{"rps: 0 is too few (allowed 1–5000)"}, nil},
		{"internal", func(pr *Progress) (templ.Component, error) {
			return nil, errors.New("open /secret/path: denied")
		}, []string{html.EscapeString(httperr.InternalText)}, []string{"/secret/path"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			var done *Progress
			p.Work(w, httptest.NewRequest("GET", "/sweep", nil), p.Layout("Sweep", "sweep", false), "A sweep", func(pr *Progress) (templ.Component, error) {
				done = pr
				return tt.work(pr)
			})
			done.Step(9, 9, "late") // a straggling worker, after the end
			body := w.Body.String()
			if w.Code != http.StatusOK {
				t.Errorf("status %d", w.Code)
			}
			for _, want := range tt.has {
				if !strings.Contains(body, want) {
					t.Errorf("the page lacks %s", want)
				}
			}
			for _, bad := range append(tt.lacks, "9 of 9") {
				if strings.Contains(body, bad) {
					t.Errorf("the page has %s", bad)
				}
			}
		})
	}
}
