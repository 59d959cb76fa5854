package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outlierlab/engine/envoyconf"
	"outlierlab/web/internal/webtest"
	"outlierlab/web/tabstate"
)

// Each sample imports into the lab: the 303 leads to a permalink whose run
// uses exactly the imported config, and the lab's cluster YAML reads back
// to the same config.
func TestImportLoadsAndRoundTrips(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, file := range []string{"envoy-defaults.yaml", "aggressive-cluster.yaml", "destination-rule.yaml"} {
		t.Run(file, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("..", "testdata", "import", file))
			if err != nil {
				t.Fatal(err)
			}
			c, err := envoyconf.ParseCluster(doc)
			if err != nil {
				t.Fatal(err)
			}
			res := webtest.Do(t, h, http.MethodPost, "/lab/import?preset=search-cache", string(doc))
			loc := res.Header.Get("Location")
			if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/lab?preset=search-cache") {
				t.Fatalf("%d %q: %s", res.StatusCode, loc, webtest.Body(t, res))
			}
			if page := webtest.Do(t, h, http.MethodGet, loc, ""); page.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", loc, page.StatusCode)
			}
			run := locationRun(t, loc)
			cl := run.Scenario.Cluster
			if run.Config != c.Outlier || float64(cl.HealthyPanicThreshold) != c.PanicThreshold || cl.Retry.MaxRetries != c.MaxRetries || cl.LB.String() != c.LBPolicy {
				t.Errorf("the lab runs %+v (panic %d, max_retries %d, %s)\nimported %+v", run.Config, cl.HealthyPanicThreshold, cl.Retry.MaxRetries, cl.LB, c)
			}
			back, err := envoyconf.ParseCluster([]byte(run.YAML))
			if err != nil || back.Outlier != c.Outlier || back.PanicThreshold != c.PanicThreshold || back.MaxRetries != c.MaxRetries {
				t.Errorf("the lab's YAML does not read back:\n%s\n%+v, %v", run.YAML, back, err)
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	for _, tc := range []struct {
		name, target, body string
		status             int
		want               string
	}{
		{"a bad Envoy field", "/lab/import?preset=search-cache", "name: a\noutlier_detection:\n  max_ejection_percent: 101\n", 400, "max_ejection_percent: 101 is out of range (allowed 0–100)"},
		{"a typo in the cluster", "/lab/import", "name: a\nconect_timeout: 1s\noutlier_detection: {}\n", 400, `conect_timeout: unknown field, did you mean "connect_timeout"?`},
		{"a bad DestinationRule field", "/lab/import", "host: r\ntrafficPolicy:\n  outlierDetection: {interval: 10}\n", 400, "trafficPolicy.outlierDetection.interval: 10 is not a valid duration"},
		{"not YAML", "/lab/import", "outlier_detection: [1s", 400, "not valid YAML"},
		{"unknown preset", "/lab/import?preset=nope", "outlier_detection: {}", 404, `preset: "nope" is not a preset (allowed `},
		{"beyond a control's span", "/lab/import", "outlier_detection: {interval: 0.5s}", 422, "the lab cannot show this cluster:\ninterval"},
		{"too large", "/lab/import", "outlier_detection: {}\n" + strings.Repeat("# padding\n", 30000), 413, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := webtest.Do(t, h, http.MethodPost, tc.target, tc.body)
			body := webtest.Body(t, res)
			if res.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %q, want %d with %q", res.StatusCode, body, tc.status, tc.want)
			}
		})
	}
}

// TestImportMesh: a DestinationRule with the mesh's pods and traffic
// becomes the mesh run (each pod's proxy with the rule's config); a
// count out of range is a 400 naming it.
func TestImportMesh(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "import", "destination-rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := webtest.Do(t, h, http.MethodPost, "/lab/import?preset=search-cache&clients=20&rps=1000", string(doc))
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "clients=20") || !strings.Contains(loc, "rps=1000") {
		t.Fatalf("%d %q: %s", res.StatusCode, loc, webtest.Body(t, res))
	}
	run := locationRun(t, loc)
	if cl := run.Scenario.Cluster; cl.ClientCount() != 20 || cl.RPS != 1000 || run.Result.Summary.Mesh == nil {
		t.Errorf("the lab runs %d clients at %g req/s", cl.ClientCount(), cl.RPS)
	}
	// The lab's form: the same two numbers as fields beside the document.
	form := url.Values{"cluster": {string(doc)}, "preset": {"search-cache"}, "clients": {"20"}, "rps": {"1000"}}
	res = webtest.Do(t, h, http.MethodPost, "/lab/import", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || locationRun(t, loc).Scenario.Cluster.ClientCount() != 20 {
		t.Errorf("the form with clients=20: %d %q", res.StatusCode, loc)
	}
	for _, tc := range []struct{ query, want string }{
		{"clients=500", "clients: 500 is out of range (allowed 1–100 clients)"},
		{"clients=2.5", "clients: 2.5 is not a whole number (allowed 1–100 clients)"},
		{"rps=NaN", `rps: "NaN" is not a number (allowed 1–100000 req/s)`},
	} {
		res := webtest.Do(t, h, http.MethodPost, "/lab/import?preset=search-cache&"+tc.query, string(doc))
		if body := webtest.Body(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 %q", tc.query, res.StatusCode, body, tc.want)
		}
	}
}

// locationRun is the run of the lab permalink an import redirected to.
func locationRun(t *testing.T, loc string) *tabstate.Run {
	t.Helper()
	link, err := tabstate.ParseLabQuery(strings.TrimPrefix(loc, "/lab?"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := tabstate.BuildRun(link.Inputs())
	if err != nil {
		t.Fatal(err)
	}
	return run
}
