package challenges

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-chi/chi/v5"

	"outlierlab/challenges"
	"outlierlab/engine/challenge"
	"outlierlab/web/asset"
	"outlierlab/web/budget"
	"outlierlab/web/page"
	"outlierlab/web/tabid"
)

// clock is the tests' time: it moves when a test says.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

type fixture struct {
	h     http.Handler
	c     *Challenges
	clock *clock
	log   *bytes.Buffer
}

var testSecret = []byte("the tests' secret")

func newFixture(t *testing.T, b budget.BudgetOptions) *fixture {
	t.Helper()
	a, err := asset.LoadAssets(fstest.MapFS{
		"static/app.css": {Data: []byte("")}, "static/app.js": {Data: []byte("")},
		"static/favicon.svg": {Data: []byte("<svg/>")}, "static/vendor/datastar.js": {Data: []byte("")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cs, err := challenge.Load(challenges.FS)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	c, err := New(cs, Deps{Pages: page.New(a, log, nil), Budget: budget.New(b), Log: log, Now: clk.now, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	c.Routes(r)
	return &fixture{h: r, c: c, clock: clk, log: &logs}
}

// do sends a request as a browser (its cookie, unless browser is "").
func (f *fixture) do(t *testing.T, method, target, body, browser string, fragment bool) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" || method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if browser != "" {
		req.AddCookie(&http.Cookie{Name: tabid.Cookie, Value: browser})
	}
	if fragment {
		req.Header.Set(fragmentHeader, "1")
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	return w.Code, w.Body.String(), w.Header()
}

// Browsers' identities as the lab issues them.
func browser(n int) string { return strings.Repeat(strconv.Itoa(n%10), tabid.BrowserLen) }

var failLinkRE = regexp.MustCompile(`href="(/challenges/[^"]+/failure\?[^"]+)"`)

// The learner's path: the list, a challenge, the defaults graded (fail,
// naming the goal, with a link to the failing moment), the link opened
// (the moment, the log), the reference graded (pass).
func TestGradeAlone(t *testing.T) {
	f := newFixture(t, budget.BudgetOptions{})
	code, body, _ := f.do(t, "GET", "/challenges", "", "", false)
	if code != 200 || strings.Count(body, "data-challenge=") != 5 || !strings.Contains(body, "The six-host search cluster and its cap") {
		t.Fatalf("/challenges: %d %s", code, body)
	}
	// bad-deploy has one scenario: counted in words, not "1 scenarios".
	if !strings.Contains(body, "1 scenario, 2 goals, 5 hidden seeds") || strings.Contains(body, "1 scenarios") {
		t.Errorf("/challenges counts its challenges' parts wrongly: %s", body)
	}
	code, body, hdr := f.do(t, "GET", "/challenges/search-cap", "", "", false)
	if code != 200 || !strings.Contains(body, `name="max_ejection_percent" value="10"`) || !strings.Contains(body, "<code>interval</code> = 10s <small>locked") {
		t.Fatalf("/challenges/search-cap: %d %s", code, body)
	}
	if !strings.Contains(hdr.Get("Set-Cookie"), tabid.Cookie+"=") {
		t.Error("the page gives the browser no identity: its submissions could not be bounded by it")
	}
	code, body, _ = f.do(t, "POST", "/challenges/search-cap/grade", "max_ejection_percent=10", browser(1), true)
	if code != 200 || !strings.Contains(body, `data-pass="false"`) || !strings.Contains(body, "h5 ejected within 20 s of 30 s") || !strings.Contains(body, "passed in 0 of 5 runs") {
		t.Fatalf("the defaults: %d %s", code, body)
	}
	m := failLinkRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no link to a failing run: %s", body)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	code, page, _ := f.do(t, "GET", link, "", "", false)
	if code != 200 || !strings.Contains(page, `<b id="failure-at">50 s</b>`) || !strings.Contains(page, "h5 never ejected after 30 s") || !strings.Contains(page, "max_ejection_percent") {
		t.Fatalf("the failing run (%s): %d %s", link, code, page)
	}
	if !strings.Contains(page, `class="entry overflow`) {
		t.Errorf("the failing moment's log does not show the cap's refusal: %s", page)
	}
	f.clock.t = f.clock.t.Add(3 * time.Second)
	code, body, _ = f.do(t, "POST", "/challenges/search-cap/grade", "max_ejection_percent=17&base_ejection_time=30s", browser(1), true)
	if code != 200 || !strings.Contains(body, `data-pass="true"`) || !strings.Contains(body, "Passed: every goal on every run") || failLinkRE.MatchString(body) {
		t.Fatalf("the reference: %d %s", code, body)
	}
	// Without script: the whole page, its form holding the values posted.
	f.clock.t = f.clock.t.Add(3 * time.Second)
	code, body, _ = f.do(t, "POST", "/challenges/search-cap/grade", "max_ejection_percent=17", browser(1), false)
	if code != 200 || !strings.Contains(body, "<h1>The six-host search cluster and its cap</h1>") || !strings.Contains(body, `value="17"`) || !strings.Contains(body, `data-pass="true"`) {
		t.Fatalf("a form posted without script: %d %s", code, body)
	}
}

// Every bad input is a 4xx naming the field and what it allows.
func TestBadInput(t *testing.T) {
	f := newFixture(t, budget.BudgetOptions{})
	for i, tc := range []struct {
		method, target, body string
		code                 int
		want                 []string
	}{
		{"POST", "/challenges/search-cap/grade", "max_ejection_percent=101", 422, []string{"max_ejection_percent:", "0–100"}},
		{"POST", "/challenges/search-cap/grade", "interval=1s", 422, []string{"interval:", "allowed max_ejection_percent, success_rate_stdev_factor"}},
		{"POST", "/challenges/search-cap/grade", "consecutive_5xx=lots", 422, []string{"consecutive_5xx:", "not allowed"}},
		{"POST", "/challenges/search-cap/grade", "max_ejection_percent=17&max_ejection_percent=18", 422, []string{"max_ejection_percent:", "allowed once"}},
		{"POST", "/challenges/nope/grade", "", 404, []string{"challenge"}},
		{"GET", "/challenges/nope", "", 404, []string{"challenge"}},
		{"GET", "/challenges/search-cap?x=1", "", 400, []string{"takes no parameters"}},
		{"GET", "/challenges/search-cap/failure?goal=one-bad-host/eject-h5&run=9", "", 422, []string{"run:", "1–5"}},
		{"GET", "/challenges/search-cap/failure?goal=nope&run=1", "", 422, []string{"goal:", "one-bad-host/eject-h5"}},
		{"GET", "/challenges/search-cap/failure?goal=one-bad-host/eject-h5&run=1&interval=1s", "", 422, []string{"interval:", "allowed goal, run, max_ejection_percent"}},
		{"GET", "/challenges/search-cap/failure?goal=one-bad-host/eject-h5&run=1&max_ejection_percent=-1", "", 422, []string{"max_ejection_percent:", "0–100"}},
	} {
		code, body, _ := f.do(t, tc.method, tc.target, tc.body, browser(i), true)
		if code != tc.code {
			t.Errorf("%s %s %s: %d %s; want %d", tc.method, tc.target, tc.body, code, body, tc.code)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s %s: %q does not say %q", tc.method, tc.target, tc.body, body, w)
			}
		}
	}
	req := httptest.NewRequest("POST", "/challenges/search-cap/grade", strings.NewReader(`{"max_ejection_percent": 17}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "application/x-www-form-urlencoded") {
		t.Errorf("a JSON body: %d %s; want 400 naming the form it takes", w.Code, w.Body.String())
	}
}

// One submission per browser every few seconds: the second is a 429
// naming the wait, with Retry-After; another browser is not held up; the
// same browser is admitted once the wait has passed.
func TestOneSubmissionPerFewSeconds(t *testing.T) {
	f := newFixture(t, budget.BudgetOptions{})
	post := func(who string) (int, string, http.Header) {
		return f.do(t, "POST", "/challenges/burst/grade", "max_ejection_percent=20", who, true)
	}
	if code, body, _ := post(browser(1)); code != 200 {
		t.Fatalf("the first: %d %s", code, body)
	}
	f.clock.t = f.clock.t.Add(1200 * time.Millisecond)
	code, body, hdr := post(browser(1))
	if code != 429 || !strings.Contains(body, "wait 1.8 s") || !strings.Contains(body, "one every 3 s") || hdr.Get("Retry-After") != "2" {
		t.Errorf("the second, 1.2 s later: %d %q Retry-After %q; want 429 naming the 1.8 s wait", code, body, hdr.Get("Retry-After"))
	}
	if code, body, _ := post(browser(2)); code != 200 {
		t.Errorf("another browser: %d %s", code, body)
	}
	f.clock.t = f.clock.t.Add(1800 * time.Millisecond)
	if code, body, _ := post(browser(1)); code != 200 {
		t.Errorf("after the wait: %d %s", code, body)
	}
}

// The battery is weighed before it runs: past the budget, a 422 naming
// what to change, and nothing runs.
func TestGradeOverBudget(t *testing.T) {
	f := newFixture(t, budget.BudgetOptions{MaxWork: 1_000_000})
	code, body, _ := f.do(t, "POST", "/challenges/search-cap/grade", "max_ejection_percent=17", browser(1), true)
	if code != 422 || !strings.Contains(body, "settings: grading is 10 runs") {
		t.Errorf("%d %s; want 422 naming the battery's runs", code, body)
	}
}

// The hidden seeds never leave the server: no page, answer, link, script
// or log line holds one, in decimal or hex.
func TestSeedsStayHidden(t *testing.T) {
	f := newFixture(t, budget.BudgetOptions{})
	var seen strings.Builder
	add := func(code int, body string, hdr http.Header) {
		seen.WriteString(body)
		for k, vs := range hdr {
			seen.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
		}
	}
	add(f.do(t, "GET", "/challenges", "", "", false))
	add(f.do(t, "GET", f.c.scriptURL, "", "", false))
	for i, c := range f.c.list {
		add(f.do(t, "GET", "/challenges/"+c.ID, "", "", false))
		f.clock.t = f.clock.t.Add(time.Minute)
		code, body, hdr := f.do(t, "POST", "/challenges/"+c.ID+"/grade", "", browser(i), true)
		add(code, body, hdr)
		for _, m := range failLinkRE.FindAllStringSubmatch(body, -1) {
			u, _ := url.QueryUnescape(strings.ReplaceAll(m[1], "&amp;", "&"))
			seen.WriteString(u)
			add(f.do(t, "GET", strings.ReplaceAll(m[1], "&amp;", "&"), "", "", false))
		}
	}
	seen.WriteString(f.log.String())
	all := seen.String()
	if !strings.Contains(all, "challenge graded") || !strings.Contains(all, "Open the first failing run") {
		t.Fatal("the test saw no grading and no failure link")
	}
	for _, c := range f.c.list {
		for _, s := range f.c.seeds.seeds(c.ID, c.Seeds) {
			for _, form := range []string{strconv.FormatUint(s, 10), strconv.FormatUint(s, 16), strconv.FormatUint(s, 36)} {
				if strings.Contains(all, form) {
					t.Errorf("%s's seed %d is in what the learner can read (as %s)", c.ID, s, form)
				}
			}
		}
	}
}

// Seeds are the secret's: another secret, other seeds; each non-zero.
func TestSeedSource(t *testing.T) {
	a, _ := newSeedSource([]byte("a"))
	b, _ := newSeedSource([]byte("b"))
	sa, sb := a.seeds("x", 5), b.seeds("x", 5)
	for i := range sa {
		if sa[i] == 0 || sa[i] == sb[i] || sa[i] != a.seeds("x", 5)[i] {
			t.Errorf("seed %d: %d, %d", i, sa[i], sb[i])
		}
	}
	if r, _ := newSeedSource(nil); r.seeds("x", 1)[0] == sa[0] {
		t.Error("a random secret made the test secret's seed")
	}
}
