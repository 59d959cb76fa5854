package web

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Issue 25: /compare takes the projector view as the lab does, a bare
// /sweep is its form, and a bad view or a sweep without its setting is
// still a 400 naming the field.
func TestCompareViewAndBareSweep(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	runs := compareURL("preset=search-cache", "preset=search-cache&max_ejection_percent=34")
	for _, tc := range []struct {
		name, target string
		status       int
		want, not    string
	}{
		{"compare in the projector view", runs + "&view=projector", 200, `<section class="whatif compare projector">`, ""},
		{"compare in the page's own view", runs, 200, `<section class="whatif compare">`, "compare projector"},
		{"compare, view first", "/compare?view=projector&" + strings.TrimPrefix(runs, "/compare?"), 200, `<section class="whatif compare projector">`, ""},
		{"compare, another view", runs + "&view=wall", 400, `view: "wall" is not a view (allowed projector)`, ""},
		{"compare, view twice", runs + "&view=projector&view=projector", 400, "view: is given 2 times (allowed once)", ""},
		{"compare, a view and a bad side", "/compare?view=wall&a=seed%3D0", 400, "a: seed: ", ""},
		{"a bare sweep", "/sweep", 200, `<h1>Sweep a setting</h1>`, "is missing"},
		{"a sweep without its setting", "/sweep?preset=search-cache", 400, "param: is missing (allowed ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := getPage(t, h, tc.target)
			if status != tc.status || !strings.Contains(body, tc.want) || (tc.not != "" && strings.Contains(body, tc.not)) {
				t.Errorf("%d, want %d with %q and without %q:\n%s", status, tc.status, tc.want, tc.not, webtest.Head(body, 1500))
			}
		})
	}
	// The bare sweep's form asks for the cap of the default preset, its
	// range left empty (the setting's whole span).
	_, body := getPage(t, h, "/sweep")
	for _, want := range []string{`<form class="card row-form" method="get" action="/sweep">`, `<option value="max_ejection_percent" selected`, `<option value="` + tabstate.DefaultPreset + `" selected`, `id="sweep-from" name="from" value=""`} {
		if !strings.Contains(body, want) {
			t.Errorf("the bare sweep lacks %q", want)
		}
	}
	if status, _ := getPage(t, h, "/sweep?"); status != http.StatusOK {
		t.Errorf("/sweep? (an empty query): %d, want the form", status)
	}
}

// The README's compare link, each side's query encoded inside its
// parameter, opens the two runs it names (the cap at 10 against 34).
func TestReadmeCompareLink(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(/compare\\?a=preset[^`&]+&b=[^`]+)`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no /compare?a=…&b=… example")
	}
	status, body := getPage(t, newTestServer(t).Handler(), string(m[1]))
	if status != http.StatusOK || !strings.Contains(body, "<li>B sets max_ejection_percent to 34 (A: 10).</li>") {
		t.Errorf("%s: %d\n%s", m[1], status, webtest.Head(body, 800))
	}
}
