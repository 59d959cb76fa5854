package web

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outlierlab/web/internal/webtest"
)

// adminDoc reads a file of testdata/admin: Envoy's /config_dump and
// /clusters?format=json, written through go-control-plane's types.
func adminDoc(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "admin", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// manyClusters is a config dump of n static clusters c0…c(n-1), and
// /clusters of as many, c0 with hosts hosts.
func manyClusters(n, hosts int) (dump, clusters string) {
	var d, c []string
	for i := range n {
		d = append(d, fmt.Sprintf(`{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"c%d","outlier_detection":{"consecutive_5xx":%d}}}`, i, 1+i%9))
		var hs []string
		for j := range hosts * min(1, max(0, 1-i)) {
			hs = append(hs, fmt.Sprintf(`{"address":{"socket_address":{"address":"10.1.%d.%d","port_value":80}}}`, j/250, j%250))
		}
		c = append(c, fmt.Sprintf(`{"name":"c%d","host_statuses":[%s]}`, i, strings.Join(hs, ",")))
	}
	return `{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","static_clusters":[` + strings.Join(d, ",") + `]}]}`,
		`{"cluster_statuses":[` + strings.Join(c, ",") + `]}`
}

// Envoy's admin output loads into the lab: a /config_dump's cluster
// chosen by name (or its only one), /clusters' host count as the lab's
// hosts, alone or beside the config; every bad input is a 4xx naming the
// field and what it allows.
func TestImportAdmin(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	dump, clusters := adminDoc(t, "config_dump.json"), adminDoc(t, "clusters.json")
	const reviews = "outbound|9080||reviews.default.svc.cluster.local"
	oneCluster := `{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","dynamic_active_clusters":[{"version_info":"7","cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster","name":"only","outlier_detection":{"consecutive_5xx":3}}}]}]}`
	thousand, thousandStatuses := manyClusters(1000, 0)
	_, sixty := manyClusters(3, 60)
	_, four := manyClusters(2, 4)
	const both = "both the dump's and /clusters' names"
	const allowed = `(allowed "` + reviews + `", "search")`
	form := func(fields ...string) string {
		q := url.Values{"preset": {"search-cache"}}
		for i := 0; i+1 < len(fields); i += 2 {
			q.Set(fields[i], fields[i+1])
		}
		return q.Encode()
	}
	for _, tc := range []struct {
		name, target, body string
		form               bool
		status             int
		// want is the Location of a 303, else a line of the error.
		want string
	}{
		{"a dump's static cluster by name", "/lab/import?preset=search-cache&name=search", dump, false, 303,
			"/lab?preset=search-cache&max_ejection_percent=50&success_rate_request_volume=15"},
		{"a dump's dynamic cluster by name, not its warming successor", "/lab/import?preset=search-cache&name=" + url.QueryEscape(reviews), dump, false, 303,
			"/lab?preset=search-cache&consecutive_gateway_failure=0&enforcing_success_rate=0&healthy_panic_threshold=0&max_ejection_percent=100"},
		{"a dump of one cluster needs no name", "/lab/import?preset=search-cache", oneCluster, false, 303, "/lab?preset=search-cache&consecutive_5xx=3"},
		{"the form's name", "/lab/import", form("cluster", dump, "name", "search"), true, 303, "/lab?preset=search-cache&max_ejection_percent=50&success_rate_request_volume=15"},
		{"/clusters alone: its hosts", "/lab/import?preset=search-cache&name=search", clusters, false, 303, "/lab?preset=search-cache&hosts=10"},
		{"/clusters alone in the form's clusters", "/lab/import", form("clusters", clusters, "name", "search"), true, 303, "/lab?preset=search-cache&hosts=10"},
		{"/clusters alone in the form's cluster", "/lab/import", form("cluster", clusters, "name", "search"), true, 303, "/lab?preset=search-cache&hosts=10"},
		{"a dump and /clusters, one name for " + both, "/lab/import", form("cluster", dump, "name", "search", "clusters", clusters), true, 303,
			"/lab?preset=search-cache&hosts=10&max_ejection_percent=50&success_rate_request_volume=15"},
		{"a cluster and /clusters: the cluster's name chooses", "/lab/import", form("cluster", "name: search\noutlier_detection: {consecutive_5xx: 3}", "clusters", clusters), true, 303,
			"/lab?preset=search-cache&consecutive_5xx=3&hosts=10"},
		{"the hosts a preset already has change nothing", "/lab/import?preset=search-cache&name=c0", `{"cluster_statuses":[{"name":"c0","host_statuses":[` + strings.Repeat(`{"address":{"socket_address":{"address":"10.0.0.1","port_value":80}}},`, 5) + `{"address":{"socket_address":{"address":"10.0.0.1","port_value":80}}}]}]}`, false, 303,
			"/lab?preset=search-cache"},
		{"a thousand clusters, one chosen", "/lab/import?preset=search-cache&name=c999", thousand, false, 303, "/lab?preset=search-cache&consecutive_5xx=1"},

		{"a dump of several clusters, no name", "/lab/import", dump, false, 400, "name: the dump has 2 clusters; choose one by name " + allowed},
		{"a name the dump lacks", "/lab/import?name=payments", dump, false, 400, `name: "payments" is not a cluster of the dump ` + allowed},
		{"a thousand clusters, no name", "/lab/import", thousand, false, 400, `name: the dump has 1000 clusters; choose one by name (allowed "c0", "c1", "c10", "c100", "c101", "c102", "c103", "c104", "c105", "c106", "c107", "c108", …)`},
		{"a thousand /clusters, no name", "/lab/import", thousandStatuses, false, 400, `name: /clusters has 1000 clusters; choose one by name (allowed "c0", "c1",`},
		{"/clusters of several, no name", "/lab/import", form("clusters", clusters), true, 400, "name: /clusters has 2 clusters; choose one by name " + allowed},
		{"/clusters lacks the config's cluster", "/lab/import", form("cluster", "name: checkout\noutlier_detection: {}", "clusters", clusters), true, 400,
			`clusters: has no cluster named as the imported one (name chooses another): "checkout" is not a cluster of /clusters ` + allowed},
		{"/clusters lacks the name", "/lab/import", form("cluster", dump, "name", reviews+"x", "clusters", clusters), true, 400, `name: "` + reviews + `x" is not a cluster of the dump`},
		{"a name that is not the pasted cluster's", "/lab/import?name=other", "name: checkout\noutlier_detection: {}", false, 400, `name: "other" is not the pasted cluster's name (allowed "checkout", or nothing`},
		{"a name too long", "/lab/import?name=" + strings.Repeat("n", 600), dump, false, 400, "name: is longer than 512 bytes (allowed a cluster's name)"},
		{"a cluster in clusters", "/lab/import", form("cluster", dump, "name", "search", "clusters", "name: search\noutlier_detection: {}"), true, 400,
			"clusters: is a cluster, not Envoy's /clusters?format=json (the cluster's config goes in the cluster field)"},
		{"a dump in clusters", "/lab/import", form("clusters", dump), true, 400, "clusters: is Envoy's /config_dump, not Envoy's /clusters?format=json"},
		{"/clusters in both", "/lab/import", form("cluster", clusters, "clusters", clusters), true, 400, "cluster: is Envoy's /clusters?format=json, and so is clusters"},
		{"an empty form", "/lab/import", form("cluster", " ", "clusters", ""), true, 400, `cluster: is empty (allowed an Envoy cluster or its outlier_detection (YAML or JSON), an Istio DestinationRule, Envoy's /config_dump ("configs") or /clusters?format=json ("cluster_statuses"))`},
		{"an empty body", "/lab/import", "", false, 400, "the body: is empty (allowed an Envoy cluster"},
		{"a document of no known kind", "/lab/import", `{"foo": 1}`, false, 400, `cluster: is none of the documents the lab reads: no such document has its keys "foo" (allowed an Envoy cluster`},
		{"… with what ParseCluster says of it", "/lab/import", `{"consecutive_5x": 1}`, false, 400, `consecutive_5x: unknown field, did you mean "consecutive_5xx"?`},
		{"a list", "/lab/import", `[{"configs": []}]`, false, 400, "cluster: a list is not a mapping, so none of the documents the lab reads (allowed an Envoy cluster"},
		{"a string", "/lab/import", `"cluster_statuses"`, false, 400, `cluster: a string "cluster_statuses" is not a mapping`},
		{"configs of the wrong type", "/lab/import", `{"configs": {"a": 1}}`, false, 400, "configs: a mapping is not a list of configs"},
		{"a dump with no cluster", "/lab/import", `{"configs": []}`, false, 400, "configs: has no cluster: dump /config_dump whole"},
		{"a dump's bad cluster names its path", "/lab/import?name=search", strings.Replace(dump, `"max_ejection_percent": 50`, `"max_ejection_percent": 500`, 1), false, 400,
			"configs[1].static_clusters[0].cluster: max_ejection_percent: 500 is out of range (allowed 0–100)"},
		{"cluster_statuses of the wrong type", "/lab/import", `{"cluster_statuses": "x"}`, false, 400, `clusters: not Envoy's /clusters?format=json: syntax error`},
		{"a host with no address", "/lab/import?name=c0", `{"cluster_statuses":[{"name":"c0","host_statuses":[{}]}]}`, false, 400,
			`clusters: cluster_statuses["c0"].host_statuses[0].address: no socket_address, pipe or envoy_internal_address`},
		{"more hosts than the lab shows", "/lab/import?name=c0", sixty, false, 422, "the lab cannot show this cluster:\nhosts: 60"},
		{"no hosts", "/lab/import?name=c1", four, false, 422, "the lab cannot show this cluster:\nhosts: 0"},
		{"a huge dump", "/lab/import", dump + strings.Repeat(" ", 300<<10), false, 413, "the document is larger than 262144 bytes"},
		{"a huge clusters field", "/lab/import", form("cluster", dump, "clusters", clusters+strings.Repeat(" ", 260<<10)), true, 413, "clusters: the document is larger than 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := []string{"Content-Type", "application/json"}
			if tc.form {
				header = []string{"Content-Type", "application/x-www-form-urlencoded"}
			}
			res := webtest.Do(t, h, http.MethodPost, tc.target, tc.body, header...)
			body := html.UnescapeString(webtest.Body(t, res))
			if res.StatusCode != tc.status {
				t.Fatalf("%d, want %d: %s", res.StatusCode, tc.status, webtest.Head(body, 1500))
			}
			if tc.status == http.StatusSeeOther {
				if loc := res.Header.Get("Location"); loc != tc.want {
					t.Errorf("Location %q\nwant     %q", loc, tc.want)
				}
				return
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("the answer lacks %q:\n%s", tc.want, webtest.Head(body, 1500))
			}
		})
	}
}

// Through the lab's form with Datastar, a dump and /clusters set the
// tab's controls (hosts among them) and the result says, in words, which
// hosts Envoy reported ejected with their success rates, and that the run
// starts fresh; without JavaScript, a bad import keeps every field.
func TestImportAdminForm(t *testing.T) {
	t.Parallel()
	h := newTestServer(t).Handler()
	const urlenc = "application/x-www-form-urlencoded"
	dump, clusters := adminDoc(t, "config_dump.json"), adminDoc(t, "clusters.json")
	f := url.Values{"cluster": {dump}, "name": {"search"}, "clusters": {clusters}, "preset": {"search-cache"}}
	stream := func(what string, form url.Values, wants ...string) string {
		t.Helper()
		body := html.UnescapeString(webtest.Body(t, webtest.Do(t, h, http.MethodPost, "/lab/import", form.Encode(), "Content-Type", urlenc, "Datastar-Request", "true")))
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the stream lacks %q:\n%s", what, want, webtest.Head(body, 4000))
			}
		}
		return body
	}
	body := stream("a dump and /clusters", f,
		"event: datastar-patch-signals", `"hosts":10`, `"max_ejection_percent":50`,
		"Loaded the /config_dump's cluster", "<code>search</code>: 3 settings differ", "<code>hosts = 10</code>", "<code>max_ejection_percent = 50</code>",
		`Envoy's /clusters lists 10 hosts in "search"; 1 was ejected (failed_outlier_check) when it was asked; its success-rate ejection threshold at the last interval was 79.88%.`,
		"The lab runs that many hosts, starting fresh with every host in rotation: it does not resume Envoy's ejections.",
		"<li><code>10.0.0.5:8080: no success rate at Envoy's last interval (too few requests, or none)</code></li>",
		"read from the config dump's static_clusters",
		"document.getElementById('btn-import-apply').click()")
	// Only the ejected host is listed: 10.0.0.3's rate of 76.19% is below
	// the threshold, but Envoy had not ejected it.
	if strings.Contains(body, "10.0.0.3:8080") {
		t.Errorf("a host in rotation is listed as ejected:\n%s", webtest.Head(body, 4000))
	}

	// What the lab leaves out of /clusters' hosts is said, not dropped.
	odd := `{"cluster_statuses":[{"name":"c","host_statuses":[
		{"address":{"socket_address":{"address":"10.0.0.1","port_value":80}},"weight":1,"health_status":{"failed_active_health_check":true}},
		{"address":{"socket_address":{"address":"10.0.0.2","port_value":80}},"weight":3,"priority":1,"health_status":{"failed_degraded_outlier_detection":true}},
		{"address":{"pipe":{"path":"/run/c.sock"}},"weight":1,"success_rate":{"value":41.5},"health_status":{"failed_outlier_check":true}}]}]}`
	stream("/clusters alone", url.Values{"cluster": {""}, "clusters": {odd}, "preset": {"search-cache"}},
		"Loaded Envoy's /clusters <code>c</code>: 1 setting differs", "<code>hosts = 3</code>",
		`Envoy's /clusters lists 3 hosts in "c"; 1 was ejected (failed_outlier_check) when it was asked. The lab runs`,
		"<li><code>/run/c.sock: success rate 41.5% at Envoy's last interval</code></li>",
		"/clusters: 1 of the 3 hosts is at a priority above 0 (failover); the lab runs every host at one priority",
		"/clusters: the hosts' weights differ (1 to 3); the lab weighs every host the same",
		"/clusters: 1 host had failed Envoy's active health check; the lab starts it healthy",
		"/clusters: 1 host was degraded by outlier detection (failed_degraded_outlier_detection); the lab starts it in rotation")

	f.Set("name", "")
	res := webtest.Do(t, h, http.MethodPost, "/lab/import", f.Encode(), "Content-Type", urlenc)
	body = html.UnescapeString(webtest.Body(t, res))
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "<li><code>name: the dump has 2 clusters; choose one by name") ||
		!strings.Contains(body, `"cluster_statuses": [`) || !strings.Contains(body, `id="import-name" name="name" value=""`) {
		t.Errorf("no name, without JavaScript: %d\n%s", res.StatusCode, webtest.Head(body, 3000))
	}
	f.Set("name", "payments")
	body = html.UnescapeString(webtest.Body(t, webtest.Do(t, h, http.MethodPost, "/lab/import", f.Encode(), "Content-Type", urlenc)))
	if !strings.Contains(body, `id="import-name" name="name" value="payments"`) {
		t.Errorf("the form lost the name:\n%s", webtest.Head(body, 3000))
	}
}
