package web

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"outlierlab/web/budget"
	"outlierlab/web/lab"
	"outlierlab/web/tabstate"
)

// The counters that code far from the Server bumps (the run cache, the
// engine's runs, streams) are the process's: one lab serves per process.
// Each Server registers them in its own registry, beside gauges read from
// its own sessions and rooms, so tests that build many Servers can.
var (
	metricCommands = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outlierlab_commands_total",
		Help: "Commands answered, by verb (unknown for a verb the lab does not have) and HTTP status.",
	}, []string{"verb", "code"})
	// Every request by its route (the chi pattern, "unmatched" for none),
	// method and status code, as client_golang's promhttp names them.
	metricRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outlierlab_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	metricRequestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "outlierlab_http_request_duration_seconds",
		Help:    "How long a request took to answer, by route pattern and method (a stream's whole life for the stream routes).",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method"})
)

// newMetrics is the server's registry: the build's, the process's, the
// requests', the lab's, the heavy work's and the rooms' metrics.
func newMetrics(s *Server, build BuildInfo) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	if build.Version == "" {
		build.Version = "(devel)"
	}
	reg.MustRegister(
		// 1, with the build in its labels: what a dashboard joins on to
		// say which version each replica runs.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "outlierlab_build_info",
			Help: "The build serving, in the labels (version: git describe; revision: the commit; go_version); always 1.",
			ConstLabels: prometheus.Labels{
				"version": build.Version, "revision": build.Revision, "go_version": runtime.Version(),
				"goos": runtime.GOOS, "goarch": runtime.GOARCH,
			},
		}, func() float64 { return 1 }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		metricCommands, budget.MetricHeavy, metricRequests, metricRequestSeconds,
		gaugeFunc("outlierlab_heavy_work_waiting", "Heavy requests waiting for a core now.", func() float64 { return float64(s.lab.Budget.Waiting.Load()) }),
		gaugeFunc("outlierlab_sessions", "Tab sessions held.", func() float64 { return float64(s.lab.Sessions.Count()) }),
		gaugeFunc("outlierlab_run_cache_bytes", "Estimated bytes of the runs the cache holds.", func() float64 { return float64(s.lab.Runs.HeldBytes()) }),
		gaugeFunc("outlierlab_rooms", "Workshops this replica serves now.", func() float64 { r, _ := s.rooms.Counts(); return float64(r) }),
		gaugeFunc("outlierlab_room_followers", "Attendee and projector streams of workshops on this replica.", func() float64 { _, f := s.rooms.Counts(); return float64(f) }),
	)
	reg.MustRegister(lab.Collectors()...)
	reg.MustRegister(tabstate.RunCollectors()...)
	zeroCommands()
	return reg
}

func gaugeFunc(name, help string, f func() float64) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
}

// zeroCommands makes every verb's series, at zero: an alert on a fresh
// replica sees "no commands yet", not no data.
func zeroCommands() {
	for _, verb := range lab.VerbNames() {
		metricCommands.WithLabelValues(verb, "204")
	}
}

// countRequest counts a request by its route pattern (known once chi has
// routed it; a refusal before routing is "unmatched").
func countRequest(r *http.Request, status int, took time.Duration) {
	route := "unmatched"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	metricRequests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
	metricRequestSeconds.WithLabelValues(route, r.Method).Observe(took.Seconds())
}

// countCommand counts an answered command by its route's verb.
func countCommand(r *http.Request, status int) {
	// The path, not the route: a request refused before routing (403 for
	// a cross-site post) is a command too.
	verb, ok := strings.CutPrefix(r.URL.Path, "/lab/cmd/")
	if !ok {
		return
	}
	if !lab.IsVerb(verb) {
		verb = "unknown" // the label's values stay the lab's verbs
	}
	metricCommands.WithLabelValues(verb, strconv.Itoa(status)).Inc()
}
