package web

import (
	"bytes"
	"encoding/json"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"outlierlab/web/chart"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tools"
)

// getPage GETs target and returns the status and the body, HTML unescaped.
func getPage(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	res := webtest.Do(t, h, http.MethodGet, target, "")
	return res.StatusCode, html.UnescapeString(webtest.Body(t, res))
}

// embedded is the JSON a page embeds under id (templ.JSONScript).
func embedded(t *testing.T, body, id string) map[string]any {
	t.Helper()
	m := regexp.MustCompile(`<script id="` + id + `" type="application/json">([^<]*)</script>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in the page", id)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(m[1]), &out); err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return out
}

// seriesData is the data of the named series of a chart's option.
func seriesData(t *testing.T, opt map[string]any, chart, name string) []any {
	t.Helper()
	for _, s := range opt[chart].(map[string]any)["series"].([]any) {
		if s := s.(map[string]any); s["name"] == name {
			d, _ := s["data"].([]any)
			return d
		}
	}
	t.Fatalf("%s has no series %q", chart, name)
	return nil
}

func compareURL(a, b string) string {
	return "/compare?a=" + url.QueryEscape(a) + "&b=" + url.QueryEscape(b)
}

// The cap at 10 (search-cache's 6 hosts: 16.7% > 10% refuses h5) against
// 34: the summary is sweep.Compare's, the same sentences as `run
// -compare`, and the lanes are interleaved with B's cells on h5's B lane.
func TestCompareSummary(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	status, body := getPage(t, h, compareURL("preset=search-cache&t=80", "preset=search-cache&max_ejection_percent=34"))
	if status != http.StatusOK {
		t.Fatalf("status %d\n%s", status, webtest.Head(body, 600))
	}
	for _, want := range []string{
		"<li>B sets max_ejection_percent to 34 (A: 10).</li><li>B ejects h5 4 times, A never.</li><li>Clients: 5.00% → 0.74% failures.</li>",
		`<tr><td><code>max_ejection_percent</code></td><td>10</td><td>34</td></tr>`,
		`href="/lab?preset=search-cache&max_ejection_percent=34"`, `value="preset=search-cache&max_ejection_percent=34"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	opt := embedded(t, body, "compare-options")
	lanes := opt[chart.CmpLanes].(map[string]any)["yAxis"].([]any)[0].(map[string]any)["data"].([]any)
	if len(lanes) != 12 || lanes[10] != "h5 A" || lanes[11] != "h5 B" {
		t.Errorf("lanes %v, want h0 A, h0 B, …, h5 A, h5 B", lanes)
	}
	if a := seriesData(t, opt, chart.CmpLanes, "A ejected"); len(a) != 0 {
		t.Errorf("A ejects: %v", a)
	}
	for _, c := range seriesData(t, opt, chart.CmpLanes, "B ejected") {
		if v := c.(map[string]any)["value"].([]any); v[1] != 11.0 || v[2] != 2.0 {
			t.Errorf("a B cell off h5's B lane: %v", v)
		}
	}
	// b left out is a: the same run twice.
	if _, body := getPage(t, h, "/compare?a="+url.QueryEscape("preset=burst")); !strings.Contains(body, "A and B run the same settings.") {
		t.Errorf("a alone: %s", webtest.Head(body, 400))
	}
	// Another seed on both sides compares here only: the lab runs seed 1.
	status, body = getPage(t, h, compareURL("preset=search-cache&seed=3", "preset=search-cache&seed=3&max_ejection_percent=34"))
	if status != http.StatusOK || !strings.Contains(body, "seed 3") || strings.Contains(body, `id="open-a"`) {
		t.Errorf("seed 3: %d %s", status, webtest.Head(body, 400))
	}
}

func TestCompareErrors(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, tc := range []struct {
		name, target string
		status       int
		want         string
	}{
		{"presets differ", compareURL("preset=search-cache", "preset=burst"), 400, `b: preset "burst" is not a's "search-cache" (allowed: the same preset and seed on both sides)`},
		{"seeds differ", compareURL("preset=search-cache&seed=2", "preset=search-cache"), 400, "b: seed 1 is not a's 2"},
		{"a bad value", compareURL("preset=search-cache", "max_ejection_percent=101"), 400, "b: max_ejection_percent: 101 is out of range (allowed 0–100 %)"},
		{"a bad seed", compareURL("seed=0", ""), 400, "a: seed: \"0\" is not a seed (allowed once, 1–4294967296)"},
		{"an unknown setting", compareURL("preset=search-cache&cap=3", ""), 400, "a: cap: is not a setting of the lab"},
		{"an unknown parameter", "/compare?c=1", 400, "c: is not a parameter of /compare (allowed a and b"},
		{"a given twice", "/compare?a=&a=", 400, "a: is given 2 times (allowed once)"},
		{"an unknown preset", compareURL("preset=nope", "preset=nope"), 404, `a: preset: "nope" is not a preset (allowed `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := getPage(t, h, tc.target)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d, want %d with %q:\n%s", status, tc.status, tc.want, webtest.Head(body, 1500))
			}
		})
	}
}

// A sweep of the cap over 0–100 by 10: 11 points, each the median of seeds
// 1–5 in a band that is not flat (seeds differ in client failures), each
// linking to the lab's run at its value.
func TestSweepPage(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	status, body := getPage(t, h, "/sweep?preset=search-cache&param=max_ejection_percent&from=0&to=100&step=10&consecutive_5xx=5")
	if status != http.StatusOK {
		t.Fatalf("status %d\n%s", status, webtest.Head(body, 800))
	}
	opt := embedded(t, body, "sweep-options")
	median := seriesData(t, opt, "sweep-failure", "median")
	if len(median) != 11 {
		t.Fatalf("%d points, want 11", len(median))
	}
	band := seriesData(t, opt, "sweep-failure", "seeds 1-5")
	low := seriesData(t, opt, "sweep-failure", "lowest seed")
	wide := false
	for i := range band {
		m := median[i].(map[string]any)["value"].(float64)
		lo, w := low[i].(float64), band[i].(float64)
		if m < lo-0.01 || m > lo+w+0.01 {
			t.Errorf("point %d: median %v outside the band %v–%v", i, m, lo, lo+w)
		}
		wide = wide || w > 0
	}
	if !wide {
		t.Errorf("the band is flat: %v", band)
	}
	// 0–10 refuse h5 (5.00%); from 20 the cap admits it (0.74%).
	if m0, m2 := median[0].(map[string]any), median[2].(map[string]any); m0["value"] != 5.0 || m2["value"] != 0.74 {
		t.Errorf("medians at 0%% and 20%%: %v, %v", m0["value"], m2["value"])
	}
	for _, want := range []string{
		`"url":"/lab?preset=search-cache\u0026max_ejection_percent=40"`,
		`<a href="/lab?preset=search-cache&max_ejection_percent=40">40%</a>`,
		`<a href="/lab?preset=search-cache">10%</a>`,
		"11 values × 5 seeds",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Another setting every run shares is in each point's link.
	_, body = getPage(t, h, "/sweep?preset=search-cache&param=max_ejection_percent&from=30&to=40&step=10&consecutive_5xx=3&seeds=1")
	if !strings.Contains(body, `<a href="/lab?preset=search-cache&max_ejection_percent=40&consecutive_5xx=3">40%</a>`) {
		t.Errorf("the shared setting is not in the links: %s", webtest.Head(body, 400))
	}
}

func TestSweepErrors(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	const p = "/sweep?preset=search-cache&"
	for _, tc := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"no param", "", 400, "param: is missing (allowed success_rate_stdev_factor, "},
		{"a switch", "param=always_eject_one_host", 400, `param: "always_eject_one_host" is not a setting a sweep can vary (allowed `},
		{"from out of range", "param=max_ejection_percent&from=-5", 400, "from: -5 is out of range (allowed 0–100 %) for max_ejection_percent"},
		{"to below from", "param=interval&from=30&to=10", 400, "to: 10 is below from (30) (allowed from–60)"},
		{"not a number", "param=interval&to=x", 400, `to: "x" is not a number (allowed 1–60 s for interval)`},
		{"a fractional step", "param=interval&step=0.5", 400, "step: 0.5 is not a step of interval (allowed 1 and up"},
		{"too many points", "param=base_ejection_time&from=1&to=600&step=1", 400, "step: 1–600 by 1 is 600 points (allowed at most 201: a larger step or a narrower range)"},
		{"too many seeds", "param=interval&seeds=1-7", 400, `seeds: "1-7" is not a list of seeds (allowed 1 to 5 seeds from 1`},
		{"a seed list too long", "param=interval&seeds=1,2,3,4,5,6", 400, `seeds: "1,2,3,4,5,6" is 6 seeds (allowed 1–5 seeds)`},
		{"a bad shared setting", "param=interval&max_ejection_percent=300", 400, "max_ejection_percent: 300 is out of range (allowed 0–100 %)"},
		{"a param twice", "param=interval&param=interval", 400, "param: is given 2 times (allowed once)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := getPage(t, h, p+tc.query)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d, want %d with %q:\n%s", status, tc.status, tc.want, webtest.Head(body, 1500))
			}
		})
	}
	if status, _ := getPage(t, h, "/sweep?preset=nope&param=interval"); status != http.StatusNotFound {
		t.Errorf("unknown preset: %d, want 404", status)
	}
	// Left out, the range is the control's span, at most 101 points
	// (0–4294967295 by 42949673: 100).
	status, body := getPage(t, h, "/sweep?preset=search-cache&param=max_retries&seeds=1")
	if status != http.StatusOK || !strings.Contains(body, "100 values × 1 seeds") {
		t.Errorf("max_retries' default range: %d %s", status, webtest.Head(body, 400))
	}
}

// multipartBody is a form with fields and, if log is not nil, a log file.
func multipartBody(t *testing.T, fields map[string]string, log []byte) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if log != nil {
		fw, err := mw.CreateFormFile("log", "access.log")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(log)
	}
	_ = mw.Close()
	return &b, mw.FormDataContentType()
}

func postForm(t *testing.T, h http.Handler, body *bytes.Buffer, ctype string) (int, string) {
	t.Helper()
	res := webtest.Do(t, h, http.MethodPost, "/whatif", body.String(), "Content-Type", ctype)
	return res.StatusCode, html.UnescapeString(webtest.Body(t, res))
}

// The sample log with its config: 10.0.0.5's five 503 in second 20 eject
// it at the fifth's answer (20.902 s) and it returns at the first sweep
// 30 s later (60 s); the two lines that do not parse are named.
func TestWhatifReplay(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	log, err := os.ReadFile(filepath.Join("..", "testdata", "whatif", "envoy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join("..", "testdata", "whatif", "cluster.yaml"))
	body, ctype := multipartBody(t, map[string]string{"config": string(cfg)}, log)
	status, page := postForm(t, h, body, ctype)
	if status != http.StatusOK {
		t.Fatalf("status %d\n%s", status, webtest.Head(page, 800))
	}
	for _, want := range []string{
		"<tr><td>02:00:20.902</td><td class=\"num\">20.9</td><td>eject</td><td>10.0.0.5:8080</td><td>consecutive_5xx</td></tr>",
		"<tr><td>02:01:00.000</td><td class=\"num\">60</td><td>uneject</td><td>10.0.0.5:8080</td><td></td></tr>",
		"<li><code>line 35: ", "<li><code>line 66: ",
		`"at_ms": 20902`, `"event": "eject"`,
		`Config: the Envoy cluster "search"`,
		`id="chart-lanes"`, `id="chart-clients"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the replay lacks %q", want)
		}
	}
	opt := embedded(t, page, "whatif-options")
	if n := len(seriesData(t, opt, chart.ChartLanes, "ejected")); n != 3 {
		t.Errorf("%d ejected cells, want 3 (after the sweeps at 30, 40 and 50 s)", n)
	}
	if _, ok := opt[chart.ChartCompare]; ok {
		t.Errorf("the replay draws the dialect strip, which needs a scenario")
	}
	// Pasted lines, url-encoded, Envoy's defaults: the cap (10% of 6)
	// refuses the ejection.
	form := url.Values{"log_text": {string(log)}}
	res := webtest.Do(t, h, http.MethodPost, "/whatif", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if page := html.UnescapeString(webtest.Body(t, res)); res.StatusCode != 200 || !strings.Contains(page, "<td>overflow</td>") || !strings.Contains(page, "Envoy's defaults") {
		t.Errorf("pasted: %d %s", res.StatusCode, webtest.Head(page, 600))
	}
}

func TestWhatifErrors(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	line := `[2026-05-01T02:00:00.000Z] "GET / HTTP/1.1" 503 - 0 0 4 3 "-" "ua" "id" "a" "10.0.0.1:80"` + "\n"
	later := `[2026-05-02T02:00:00.000Z] "GET / HTTP/1.1" 200 - 0 0 4 3 "-" "ua" "id" "a" "10.0.0.2:80"` + "\n"
	for _, tc := range []struct {
		name   string
		fields map[string]string
		log    []byte
		status int
		want   string
	}{
		{"no log", nil, nil, 400, "log: is empty (upload an access log, or paste its lines)"},
		{"a bad config", map[string]string{"config": "outlier_detection: {max_ejection_percent: 101}"}, []byte(line), 400, "config: max_ejection_percent: 101 is out of range (allowed 0–100)"},
		{"nothing parses", nil, []byte("garbage\n"), 400, "log: the log has no request to replay (1 line, 1 did not parse)"},
		{"a day long", nil, []byte(line + later), 400, "log: it spans 24h0m0s, 8641 intervals of 10 s (allowed up to 3600 intervals"},
		{"a bad seed", map[string]string{"seed": "x"}, []byte(line), 400, `seed: "x" is not a seed (allowed a whole number from 1)`},
		{"too large", nil, bytes.Repeat([]byte(line), tools.MaxWhatifBytes/len(line)+10), 413, "log: the upload is larger than 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, ctype := multipartBody(t, tc.fields, tc.log)
			status, page := postForm(t, h, body, ctype)
			if status != tc.status || !strings.Contains(page, tc.want) {
				t.Errorf("%d, want %d with %q:\n%s", status, tc.status, tc.want, webtest.Head(page, 1500))
			}
		})
	}
}

// The lint panel: lint.Check over the page's settings on the preset's
// cluster, sent as a patch of #lint-body.
func TestLabLint(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, tc := range []struct {
		name, body string
		status     int
		want, not  string
	}{
		{"the defaults", `{"preset":"search-cache","cfg":{"max_ejection_percent":10}}`, 200,
			"On 6 hosts, 600 requests/s, panic below 50% healthy", ""},
		{"the cap refuses", `{"preset":"search-cache","cfg":{"max_ejection_percent":10}}`, 200,
			`<span class="sev problem">problem</span> <code>max_ejection_percent</code> the cap refuses every ejection`, ""},
		{"the cap admits", `{"preset":"search-cache","cfg":{"max_ejection_percent":34}}`, 200, "On 6 hosts", "the cap refuses every ejection"},
		{"a bad value", `{"preset":"search-cache","cfg":{"max_ejection_percent":101}}`, 200, "max_ejection_percent: 101 is out of range (allowed 0–100 %)", ""},
		// Under gRPC the block is grpc-go's: a max_ejection_time below
		// base_ejection_time is taken (envoyconf.GRPCNotes says what Envoy
		// would do), and Envoy's lint arithmetic is not shown.
		{"grpc: max below base", `{"preset":"search-cache","cfg":{"dialect":"grpc","base_ejection_time":30,"max_ejection_time":10}}`, 200,
			`<span class="sev warning">warning</span> <code>max_ejection_time</code> 10s is below base_ejection_time 30s (allowed ≥ base_ejection_time); Envoy refuses the cluster; grpc-go accepts it and ejects for at most base_ejection_time`,
			"the cap refuses every ejection"},
		{"envoy: max below base", `{"preset":"search-cache","cfg":{"base_ejection_time":30,"max_ejection_time":10}}`, 200,
			"max_ejection_time: 10s is below base_ejection_time 30s", "grpc-go"},
		{"not JSON", `{`, 400, "body: not a JSON object of signals", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := webtest.Do(t, h, http.MethodPost, "/lab/lint", tc.body, "Content-Type", "application/json", "Datastar-Request", "true")
			body := html.UnescapeString(webtest.Body(t, res))
			if res.StatusCode != tc.status || !strings.Contains(body, tc.want) || (tc.not != "" && strings.Contains(body, tc.not)) {
				t.Errorf("%d, want %d with %q without %q:\n%s", res.StatusCode, tc.status, tc.want, tc.not, webtest.Head(body, 1500))
			}
			if tc.status == 200 && !strings.Contains(body, `id="lint-body"`) {
				t.Errorf("not a patch of #lint-body:\n%s", webtest.Head(body, 400))
			}
		})
	}
}

// The lab's paste form: without JavaScript a good cluster is the 303 and
// a bad one a page naming the field above the form; through Datastar a
// good one sets the page's controls, lists the import's notes and presses
// the apply button; curl's --data-binary (a form type, no cluster field)
// is the document itself.
func TestImportForm(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	form := func(doc string) string {
		return url.Values{"cluster": {doc}, "preset": {"search-cache"}}.Encode()
	}
	const urlenc = "application/x-www-form-urlencoded"
	res := webtest.Do(t, h, http.MethodPost, "/lab/import", form("outlier_detection: {max_ejection_percent: 34}"), "Content-Type", urlenc)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/lab?preset=search-cache&max_ejection_percent=34" {
		t.Errorf("form: %d %q", res.StatusCode, loc)
	}
	res = webtest.Do(t, h, http.MethodPost, "/lab/import", form("outlier_detection: {max_ejection_percent: 101}"), "Content-Type", urlenc)
	body := html.UnescapeString(webtest.Body(t, res))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "<li><code>max_ejection_percent: 101 is out of range (allowed 0–100)</code></li>") ||
		!strings.Contains(body, "outlier_detection: {max_ejection_percent: 101}</textarea>") {
		t.Errorf("bad form: %d\n%s", res.StatusCode, webtest.Head(body, 1500))
	}
	res = webtest.Do(t, h, http.MethodPost, "/lab/import?preset=search-cache", "outlier_detection: {max_ejection_percent: 34}", "Content-Type", urlenc)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/lab?preset=search-cache&max_ejection_percent=34" {
		t.Errorf("--data-binary: %d %q", res.StatusCode, loc)
	}

	doc, err := os.ReadFile(filepath.Join("..", "testdata", "import", "aggressive-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res = webtest.Do(t, h, http.MethodPost, "/lab/import", form(string(doc)), "Content-Type", urlenc, "Datastar-Request", "true")
	body = html.UnescapeString(webtest.Body(t, res))
	for _, want := range []string{
		"event: datastar-patch-signals", `"consecutive_5xx":3`, `"healthy_panic_threshold":0`,
		`id="import-result"`, "Loaded an Envoy cluster", "<code>checkout</code>", "<code>consecutive_5xx = 3</code>", "<code>interval = 5s</code>", "<code>checkout</code>: 16 settings differ",
		"circuit_breakers.thresholds[0]: not read: it is for priority HIGH",
		"document.getElementById('btn-import-apply').click()",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the stream lacks %q:\n%s", want, webtest.Head(body, 3000))
		}
	}
	res = webtest.Do(t, h, http.MethodPost, "/lab/import", form("interval: 5"), "Content-Type", urlenc, "Datastar-Request", "true")
	body = html.UnescapeString(webtest.Body(t, res))
	if !strings.Contains(body, "Not loaded:") || strings.Contains(body, "btn-import-apply") || strings.Contains(body, "patch-signals") {
		t.Errorf("a bad paste through Datastar:\n%s", webtest.Head(body, 1500))
	}
}

// The free lab carries the what-if panel and "Compare with…"; a lesson's
// lab does not.
func TestLabToolsOnLabOnly(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	_, lab := getPage(t, h, "/lab?preset=burst")
	for _, want := range []string{`id="lab-tools"`, `id="btn-compare-pin"`, `<input type="hidden" name="preset" value="burst"`, `id="lint-panel"`, `href="/whatif"`} {
		if !strings.Contains(lab, want) {
			t.Errorf("the lab lacks %q", want)
		}
	}
	_, lesson := getPage(t, h, "/lessons/"+newTestServer(t).lab.Lessons.List[0].ID)
	if strings.Contains(lesson, `id="lab-tools"`) || strings.Contains(lesson, "btn-compare-pin") {
		t.Errorf("a lesson page has the free lab's tools")
	}
}
