// Package glossary is the course's words, one meaning each, with the
// Envoy fields and stats behind them: the /glossary page, which the
// lessons link to (/glossary#tick). Defaults are read from the settings
// catalog (engine/settings), never written here, so they stay Envoy's.
package glossary

import (
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark"

	"outlierlab/engine/settings"
	"outlierlab/web/view"
)

// Term is one word of the course.
type Term struct {
	// ID is the page's anchor: /glossary#ID.
	ID   string
	Name string
	// Text is the meaning, in markdown (no raw HTML).
	Text string
	// Fields are the settings it is about, by their catalog names.
	Fields []string
	// Stats are the counters to watch, by Envoy's names.
	Stats []string
	// Envoy is the function of Envoy's code the meaning rests on.
	Envoy string
}

// Terms are the course's words, in the order a learner meets them.
func Terms() []Term {
	return []Term{
		{ID: "tick", Name: "tick",
			Text:   "The moment the detector runs, once every `interval`: Envoy's interval timer fires, ejections whose time is up end, then success rate and failure percentage judge every host. The lab's charts draw one point per tick, the decision log dates tick decisions at it, and the status line counts ticks. The consecutive-error detectors do not wait for a tick: they act on the response that completes a streak.",
			Fields: []string{"interval"}, Envoy: "DetectorImpl::onIntervalTimer (outlier_detection_impl.cc)"},
		{ID: "interval", Name: "interval",
			Text:   "The setting: the time from one tick to the next. It is also the window success rate and failure percentage count requests over.",
			Fields: []string{"interval"}, Envoy: "DetectorImpl::armIntervalTimer"},
		{ID: "consecutive-5xx", Name: "consecutive 5xx",
			Text:   "A host's count of 5xx responses in a row; any other response sets it to 0. The host is detected when the count *equals* the threshold.",
			Fields: []string{"consecutive_5xx", "enforcing_consecutive_5xx"}, Stats: []string{"ejections_detected_consecutive_5xx", "ejections_enforced_consecutive_5xx"},
			Envoy: "DetectorHostMonitorImpl::putHttpResponseCode"},
		{ID: "gateway-failure", Name: "gateway failure",
			Text:   "A 502, 503 or 504, or in the default mode a refused connection or a timeout (reported as 503 and 504). A 500 is a 5xx but not a gateway failure, and resets this count.",
			Fields: []string{"consecutive_gateway_failure", "enforcing_consecutive_gateway_failure"}, Stats: []string{"ejections_detected_consecutive_gateway_failure", "ejections_enforced_consecutive_gateway_failure"},
			Envoy: "DetectorHostMonitorImpl::putHttpResponseCode"},
		{ID: "detected", Name: "detected, enforced",
			Text:  "A detector *detects* a host; the host is *ejected* only if the detector's enforcing percentage says so (a dice roll against `enforcing_…`) and the cap admits it. A detection that is not enforced is logged with `enforced: false` and counted, nothing more.",
			Stats: []string{"ejections_detected_consecutive_5xx", "ejections_enforced_total"}, Envoy: "DetectorImpl::ejectHost"},
		{ID: "success-rate", Name: "success rate",
			Text:   "At each tick, among hosts with enough requests, a host is an outlier when its success rate is below mean − factor × σ of all of them (factor = stdev_factor / 1000). It compares hosts with each other, so it needs several.",
			Fields: []string{"success_rate_minimum_hosts", "success_rate_request_volume", "success_rate_stdev_factor", "enforcing_success_rate"},
			Stats:  []string{"ejections_detected_success_rate", "ejections_enforced_success_rate"}, Envoy: "DetectorImpl::processSuccessRateEjections"},
		{ID: "failure-percentage", Name: "failure percentage",
			Text:   "At each tick, a host with enough requests whose failures reach the threshold is detected: an absolute line, not a comparison.",
			Fields: []string{"failure_percentage_threshold", "failure_percentage_minimum_hosts", "failure_percentage_request_volume", "enforcing_failure_percentage"},
			Stats:  []string{"ejections_detected_failure_percentage", "ejections_enforced_failure_percentage"}, Envoy: "DetectorImpl::processFailurePercentageEjections"},
		{ID: "ejection", Name: "ejection",
			Text:   "The host is taken out of load balancing for base_ejection_time × its multiplier (at most max_ejection_time, plus jitter); it returns at the first tick after that.",
			Fields: []string{"base_ejection_time", "max_ejection_time", "max_ejection_time_jitter"}, Stats: []string{"ejections_active", "ejections_enforced_total"},
			Envoy: "DetectorImpl::checkHostForUneject"},
		{ID: "multiplier", Name: "multiplier",
			Text:   "A host's count that each ejection raises by one and each tick it spends back in service lowers by one: why a host that keeps failing stays out longer each time.",
			Fields: []string{"base_ejection_time", "max_ejection_time"}, Envoy: "DetectorImpl::onIntervalTimer, DetectorImpl::ejectHost"},
		{ID: "cap", Name: "cap",
			Text:   "An ejection is allowed only if 100 · (ejected + 1) / hosts ≤ max_ejection_percent: with the default 10%, clusters of fewer than ten hosts eject nothing, unless always_eject_one_host is set.",
			Fields: []string{"max_ejection_percent", "always_eject_one_host"}, Stats: []string{"ejections_overflow"}, Envoy: "DetectorImpl::ejectHost"},
		{ID: "overflow", Name: "overflow",
			Text:  "A detection the cap refused. Rising overflows with nothing ejected: the cap is too low for the cluster, or the failure is everywhere.",
			Stats: []string{"ejections_overflow"}, Envoy: "DetectorImpl::ejectHost"},
		{ID: "panic", Name: "panic",
			Text:   "When the healthy share of a priority falls below the threshold, the load balancer picks from every host, ejected or not: ejection no longer decides routing.",
			Fields: []string{"panic_threshold"}, Stats: []string{"lb_healthy_panic"}, Envoy: "LoadBalancerBase::recalculatePerPriorityPanic (load_balancer_impl.cc)"},
		{ID: "uneject", Name: "uneject by health check",
			Text:   "A passing active health check returns an ejected host at once, whatever is left of its ejection time, unless the setting is turned off.",
			Fields: []string{"successful_active_health_check_uneject_host"}, Envoy: "DetectorImpl::onActiveHealthCheckSuccess"},
		{ID: "local-origin", Name: "local-origin errors (split mode)",
			Text:   "Failures Envoy saw itself (refused connections, resets, timeouts). In split mode they go to their own counter and success rate instead of being reported as 503 and 504.",
			Fields: []string{"split_external_local_origin_errors", "consecutive_local_origin_failure"}, Stats: []string{"ejections_detected_consecutive_local_origin_failure"},
			Envoy: "DetectorHostMonitorImpl::putResult"},
	}
}

// IDs are the anchors the page has.
func IDs() map[string]bool {
	out := map[string]bool{}
	for _, t := range Terms() {
		out[t.ID] = true
	}
	return out
}

// View is the page's model: each term's text as HTML, its fields with
// Envoy's defaults from the settings catalog.
func View(layout view.Layout) view.Glossary {
	md := goldmark.New() // CommonMark; raw HTML is dropped
	g := view.Glossary{Layout: layout}
	for _, t := range Terms() {
		var b bytes.Buffer
		if err := md.Convert([]byte(t.Text), &b); err != nil {
			b.Reset()
			b.WriteString(html.EscapeString(t.Text))
		}
		e := view.GlossaryEntry{ID: t.ID, Name: t.Name, Text: view.HTML(b.String()), Stats: t.Stats, Envoy: t.Envoy}
		for _, f := range t.Fields {
			s, ok := settings.Lookup(f)
			d := view.GlossaryField{Name: f}
			if ok {
				if s.Alias != "" {
					d.Name = s.Alias
				}
				d.Default = s.Default // durations are typed with their unit ("10s")
				switch {
				case d.Default == "" || s.Unit == "" || strings.HasSuffix(d.Default, s.Unit):
				case s.Unit == "%":
					d.Default += "%"
				default:
					d.Default += " " + s.Unit
				}
				d.Where = s.Envoy
			}
			e.Fields = append(e.Fields, d)
		}
		g.Terms = append(g.Terms, e)
	}
	return g
}
