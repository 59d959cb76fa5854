package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
)

// controlKind is how a control's number maps to what Envoy reads.
type controlKind uint8

const (
	// kindCount is a whole number written as is (consecutive_5xx: 5).
	kindCount controlKind = iota
	// kindPercent is a whole percentage 0–100 (max_ejection_percent: 34).
	kindPercent
	// kindSeconds is a duration the slider holds in whole seconds and Envoy
	// reads as "30s".
	kindSeconds
	// kindFactor is success_rate_stdev_factor: Envoy stores k × 1000, the
	// slider holds the same integer and the label shows k.
	kindFactor
	// kindToggle is a bool.
	kindToggle
	// kindShare is a fraction 0–1 shown as a percentage (fault_rate).
	kindShare
	// kindChoice is one of Choices (lb_policy, fault_kind): the number is
	// the choice's index, the page's select and the signal hold its name.
	kindChoice
)

// controlTarget says where a control's value goes.
type controlTarget uint8

const (
	// targetOutlier: a field of the cluster's outlier_detection block,
	// applied with envoyconf.ApplyFields (Envoy's own validation).
	targetOutlier controlTarget = iota
	// targetScenario: a scenario knob (hosts, rate, the fault's share) or a
	// cluster or route setting the simulator reads (healthy_panic_threshold,
	// num_retries, lb_policy), applied with scenario.ApplyKnobs.
	targetScenario
)

// control is one input of the lab. Name is the Envoy field name; it is the
// input's name attribute, its signal key and the field an error names.
// Min/Max are the lab's range: inside what Envoy accepts, and narrow enough
// that a run stays a few milliseconds (an interval of 1 ms over a 10-minute
// run would be 600 000 frames).
type control struct {
	Name   string
	Label  string
	Group  string
	Unit   string
	Kind   controlKind
	Target controlTarget
	Min    float64
	Max    float64
	Step   float64
	Help   string
	// outlier reads the control's value from a detector config
	// (targetOutlier).
	outlier func(engine.Config) float64
	// Knob is the scenario knob a targetScenario control sets; its name is
	// the knob's unless the knob stands for an Envoy field. Lessons name
	// such controls by their knob (panic_threshold, retries):
	// lookupControl accepts both.
	Knob string
	// Choices are a kindChoice control's values, as the knob reads them.
	Choices []string
	// Entry is how the page takes the value (inputAuto: decided by the
	// range, see inputOf).
	Entry inputKind
	// NumStep is the number field's step when it must be finer than the
	// slider's: fault_rate's slider moves by 0.01, a typed 0.333 ("one in
	// three") must be accepted. 0: the slider's step.
	NumStep float64
	// Field is the Envoy path the page prints under the control when it is
	// not Name itself (circuit_breakers.thresholds.max_retries).
	Field string
}

// inputKind is the kind of input a numeric control gets on the page.
type inputKind uint8

const (
	// inputAuto: a slider, with a number field beside it when the range
	// has more steps than a slider can set one by one (see sliderSteps).
	inputAuto inputKind = iota
	// inputSliderNumber: a slider and a number field bound to one value.
	inputSliderNumber
	// inputNumber: a number field alone, for a range no slider can hold
	// (max_retries: 0–4294967295).
	inputNumber
)

// sliderSteps is the most steps a slider alone may have: a sidebar slider
// is some 300 px wide, and past about one step per 1.25 px a learner can
// no longer land on a value with the mouse (max_ejection_time's 1800 steps
// were ≈ 5 s a pixel).
const sliderSteps = 240

// inputOf is the input the page gives c.
func (c *control) inputOf() inputKind {
	if c.Entry != inputAuto || c.Kind == kindToggle || c.Kind == kindChoice {
		return c.Entry
	}
	if c.Step > 0 && (c.Max-c.Min)/c.Step > sliderSteps {
		return inputSliderNumber
	}
	return inputAuto
}

// Control groups, in page order.
const (
	groupSuccessRate = "Success rate"
	groupEjection    = "Ejection"
	groupConsecutive = "Consecutive errors"
	groupEnforcing   = "Enforcement (% of detections that eject)"
	groupFailurePct  = "Failure percentage"
	groupToggles     = "Switches"
	groupCluster     = "Cluster and clients"
	groupScenario    = "Scenario"
)

func ms(d int64) float64 { return float64(d) / 1000 }
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// controls lists every input of the lab, in page order.
var controls = []control{
	{Name: "success_rate_stdev_factor", Label: "Stdev factor", Group: groupSuccessRate, Kind: kindFactor, Min: 100, Max: 5000, Step: 100,
		Help:    "k in the threshold mean − k·σ (Envoy stores k × 1000)",
		outlier: func(c engine.Config) float64 { return float64(c.SuccessRateStdevFactor) }},
	{Name: "success_rate_request_volume", Label: "Request volume", Group: groupSuccessRate, Unit: "req", Kind: kindCount, Min: 0, Max: 2000, Step: 10,
		Help:    "requests a host needs in one interval to be counted",
		outlier: func(c engine.Config) float64 { return float64(c.SuccessRateRequestVolume) }},
	{Name: "success_rate_minimum_hosts", Label: "Minimum hosts", Group: groupSuccessRate, Unit: "hosts", Kind: kindCount, Min: 0, Max: 50, Step: 1,
		Help:    "hosts with enough volume before success rate runs at all",
		outlier: func(c engine.Config) float64 { return float64(c.SuccessRateMinimumHosts) }},

	{Name: "max_ejection_percent", Label: "Ejection cap", Group: groupEjection, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "most hosts that may be ejected at once, as % of all hosts",
		outlier: func(c engine.Config) float64 { return float64(c.MaxEjectionPercent) }},
	{Name: "base_ejection_time", Label: "Base ejection time", Group: groupEjection, Unit: "s", Kind: kindSeconds, Min: 1, Max: 600, Step: 1,
		Help:    "an ejection lasts base × the host's multiplier (+1 per ejection, −1 per tick back in service), at most max",
		outlier: func(c engine.Config) float64 { return ms(c.BaseEjectionTimeMs) }},
	{Name: "max_ejection_time", Label: "Max ejection time", Group: groupEjection, Unit: "s", Kind: kindSeconds, Min: 1, Max: 1800, Step: 1,
		Help:    "longest single ejection (≥ base ejection time)",
		outlier: func(c engine.Config) float64 { return ms(c.MaxEjectionTimeMs) }},
	{Name: "interval", Label: "Interval", Group: groupEjection, Unit: "s", Kind: kindSeconds, Min: 1, Max: 60, Step: 1,
		Help:    "time between sweeps: success rate runs and hosts return only then",
		outlier: func(c engine.Config) float64 { return ms(c.IntervalMs) }},
	{Name: "max_ejection_time_jitter", Label: "Ejection time jitter", Group: groupEjection, Unit: "s", Kind: kindSeconds, Min: 0, Max: 60, Step: 1,
		Help:    "a random extra of up to this much is added to each ejection",
		outlier: func(c engine.Config) float64 { return ms(c.MaxEjectionTimeJitterMs) }},

	{Name: "consecutive_5xx", Label: "Consecutive 5xx", Group: groupConsecutive, Unit: "errors", Kind: kindCount, Min: 0, Max: 100, Step: 1,
		Help:    "5xx in a row that detect a host (0: off)",
		outlier: func(c engine.Config) float64 { return float64(c.Consecutive5xx) }},
	{Name: "consecutive_gateway_failure", Label: "Consecutive gateway failures", Group: groupConsecutive, Unit: "errors", Kind: kindCount, Min: 0, Max: 100, Step: 1,
		Help:    "502/503/504 in a row that detect a host (0: off)",
		outlier: func(c engine.Config) float64 { return float64(c.ConsecutiveGatewayFailure) }},
	{Name: "consecutive_local_origin_failure", Label: "Consecutive local-origin failures", Group: groupConsecutive, Unit: "errors", Kind: kindCount, Min: 0, Max: 100, Step: 1,
		Help:    "connect failures, resets and timeouts in a row that detect a host (with split local-origin errors)",
		outlier: func(c engine.Config) float64 { return float64(c.ConsecutiveLocalOriginFailure) }},

	{Name: "failure_percentage_threshold", Label: "Failure threshold", Group: groupFailurePct, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "a host failing at least this % is detected; enforcing_failure_percentage decides whether it is ejected",
		outlier: func(c engine.Config) float64 { return float64(c.FailurePercentageThreshold) }},
	{Name: "failure_percentage_request_volume", Label: "Request volume", Group: groupFailurePct, Unit: "req", Kind: kindCount, Min: 0, Max: 2000, Step: 10,
		Help:    "requests a host needs in one interval to be judged",
		outlier: func(c engine.Config) float64 { return float64(c.FailurePercentageRequestVolume) }},
	{Name: "failure_percentage_minimum_hosts", Label: "Minimum hosts", Group: groupFailurePct, Unit: "hosts", Kind: kindCount, Min: 0, Max: 50, Step: 1,
		Help:    "hosts with enough volume before failure percentage runs at all",
		outlier: func(c engine.Config) float64 { return float64(c.FailurePercentageMinimumHosts) }},

	{Name: "enforcing_success_rate", Label: "Success rate", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of success-rate detections that eject (0: detect and count only)",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingSuccessRate) }},
	{Name: "enforcing_consecutive_5xx", Label: "Consecutive 5xx", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of consecutive-5xx detections that eject (0: detect and count only)",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingConsecutive5xx) }},
	{Name: "enforcing_consecutive_gateway_failure", Label: "Gateway failures", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of gateway-failure detections that eject (Envoy's default 0: detect only)",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingConsecutiveGatewayFailure) }},
	{Name: "enforcing_failure_percentage", Label: "Failure percentage", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of failure-percentage detections that eject (Envoy's default 0: detect only)",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingFailurePercentage) }},
	{Name: "enforcing_consecutive_local_origin_failure", Label: "Local-origin consecutive", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of local-origin consecutive detections that eject",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingConsecutiveLocalOriginFailure) }},
	{Name: "enforcing_local_origin_success_rate", Label: "Local-origin success rate", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of local-origin success-rate detections that eject",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingLocalOriginSuccessRate) }},
	{Name: "enforcing_failure_percentage_local_origin", Label: "Local-origin failure %", Group: groupEnforcing, Unit: "%", Kind: kindPercent, Min: 0, Max: 100, Step: 1,
		Help:    "% of local-origin failure-percentage detections that eject (default 0)",
		outlier: func(c engine.Config) float64 { return float64(c.EnforcingFailurePercentageLocalOrigin) }},

	{Name: "always_eject_one_host", Label: "Always eject one host", Group: groupToggles, Kind: kindToggle, Min: 0, Max: 1, Step: 1,
		Help:    "an ejection is allowed whenever no host is ejected, whatever the cap says",
		outlier: func(c engine.Config) float64 { return b2f(c.AlwaysEjectOneHost) }},
	{Name: "split_external_local_origin_errors", Label: "Split local-origin errors", Group: groupToggles, Kind: kindToggle, Min: 0, Max: 1, Step: 1,
		Help:    "count connect failures and timeouts apart from upstream 5xx",
		outlier: func(c engine.Config) float64 { return b2f(c.SplitExternalLocalOriginErrors) }},
	{Name: "successful_active_health_check_uneject_host", Label: "Health check unejects", Group: groupToggles, Kind: kindToggle, Min: 0, Max: 1, Step: 1,
		Help:    "a passing active health check returns an ejected host at once",
		outlier: func(c engine.Config) float64 { return b2f(c.SuccessfulActiveHealthCheckUnejectHost) }},

	{Name: "healthy_panic_threshold", Knob: "panic_threshold", Label: "Panic threshold", Group: groupCluster, Unit: "%", Kind: kindPercent, Target: targetScenario, Min: 0, Max: 100, Step: 1,
		Help: "common_lb_config: below this share of healthy hosts the balancer ignores health (0: never)"},
	{Name: "lb_policy", Knob: "lb", Label: "Load balancer", Group: groupCluster, Kind: kindChoice, Target: targetScenario, Min: 0, Max: 2, Step: 1,
		Choices: []string{"round_robin", "least_request", "random"},
		Help:    "how the cluster picks a host for each attempt"},
	{Name: "num_retries", Knob: "retries", Label: "Retries", Group: groupCluster, Unit: "per request", Kind: kindCount, Target: targetScenario, Min: 0, Max: 5, Step: 1,
		Help: "retry_policy.num_retries of the route"},
	{Name: "retry_on", Knob: "retry_on", Label: "Retry on", Group: groupCluster, Kind: kindChoice, Target: targetScenario, Min: 0, Max: 5, Step: 1,
		Choices: []string{"5xx", "gateway-error", "connect-failure", "reset", "connect-failure,reset", "5xx,connect-failure,reset"},
		Help:    "retry_policy.retry_on: which failed attempts are retried"},
	{Name: "previous_hosts", Knob: "previous_hosts", Label: "Retry elsewhere", Group: groupCluster, Kind: kindToggle, Target: targetScenario, Min: 0, Max: 1, Step: 1,
		Help: "retry_host_predicate previous_hosts: a retry avoids the hosts already tried (one re-pick)"},
	{Name: "per_try_timeout", Knob: "per_try_timeout", Label: "Per-try timeout", Group: groupCluster, Unit: "s", Kind: kindSeconds, Target: targetScenario, Min: 0, Max: 5, Step: 0.05,
		Help: "retry_policy.per_try_timeout: a slower attempt becomes a local-origin timeout (0: none)"},
	{Name: "retry_budget_percent", Knob: "retry_budget_percent", Label: "Retry budget", Group: groupCluster, Unit: "%", Kind: kindPercent, Target: targetScenario, Min: 0, Max: 100, Step: 1,
		Help: "retry_budget.budget_percent: retries as a share of active requests (0: no budget, the max_retries breaker applies)"},
	{Name: "max_retries", Knob: "max_retries", Label: "Max concurrent retries", Group: groupCluster, Unit: "retries", Kind: kindCount, Target: targetScenario, Min: 0, Max: 4294967295, Step: 1,
		Entry: inputNumber, Field: "circuit_breakers.thresholds.max_retries",
		Help: "the cluster's retry circuit breaker: retries in flight at once, all requests together (Envoy's default 3; Istio sets 4294967295). A retry past it is not sent; it counts in upstream_rq_retry_overflow and the client gets the failure. A retry budget replaces it"},
	{Name: "active_hc", Knob: "active_hc", Label: "Active health checks", Group: groupCluster, Kind: kindToggle, Target: targetScenario, Min: 0, Max: 1, Step: 1,
		Help: "an active HTTP health checker on the cluster"},
	{Name: "hc_interval", Knob: "hc_interval", Label: "Health check interval", Group: groupCluster, Unit: "s", Kind: kindSeconds, Target: targetScenario, Min: 1, Max: 60, Step: 1,
		Help: "health_checks[0].interval: time between two checks of a host"},
	{Name: "hc_shares_fault", Knob: "hc_shares_fault", Label: "Health check sees the fault", Group: groupCluster, Kind: kindToggle, Target: targetScenario, Min: 0, Max: 1, Step: 1,
		Help: "whether the health endpoint fails with the faulty host (off: /healthz passes while requests fail)"},

	// The scenario's own knobs. The lab's ranges keep a run to a few
	// milliseconds; the CLI accepts the knobs' full ranges.
	{Name: "hosts", Knob: "hosts", Label: "Hosts", Group: groupScenario, Unit: "hosts", Kind: kindCount, Target: targetScenario, Min: 1, Max: 50, Step: 1,
		Help: "upstream hosts in the cluster"},
	{Name: "rps", Knob: "rps", Label: "Request rate", Group: groupScenario, Unit: "req/s", Kind: kindCount, Target: targetScenario, Min: 10, Max: 3000, Step: 10,
		Help: "mean downstream requests per second"},
	{Name: "capacity_rps", Knob: "capacity_rps", Label: "Host capacity", Group: groupScenario, Unit: "req/s", Kind: kindCount, Target: targetScenario, Min: 0, Max: 2000, Step: 10,
		Help: "what one host serves per second; beyond it requests queue and are shed with 503 (0: unlimited)"},
	{Name: "fault_rate", Knob: "fault_rate", Label: "Faulty host's failures", Group: groupScenario, Kind: kindShare, Target: targetScenario, Min: 0, Max: 1, Step: 0.01,
		Entry: inputSliderNumber, NumStep: 0.001,
		Help: "share of the faulty host's requests that fail, as a fraction: type 0.333 for one in three"},
	{Name: "fault_kind", Knob: "fault_kind", Label: "How it fails", Group: groupScenario, Kind: kindChoice, Target: targetScenario, Min: 0, Max: 6, Step: 1,
		Choices: []string{"500", "502", "503", "504", "connect_failure", "reset", "timeout"},
		Help:    "an HTTP status, a refused connection, a reset, or a hang that times out"},
	{Name: "fault_pattern", Knob: "fault_pattern", Label: "Failure pattern", Group: groupScenario, Kind: kindChoice, Target: targetScenario, Min: 0, Max: 1, Step: 1,
		Choices: []string{"interleaved", "random"},
		Help:    "interleaved: failures evenly spaced (every third request for 1 in 3); random: each request fails on its own, so streaks happen"},
	{Name: "fault_duration", Knob: "fault_duration", Label: "Fault lasts", Group: groupScenario, Unit: "s", Kind: kindSeconds, Target: targetScenario, Min: 0, Max: 600, Step: 10,
		Help: "how long the fault lasts (0: to the end of the run)"},
}

var controlByName = func() map[string]*control {
	m := make(map[string]*control, len(controls))
	for i := range controls {
		m[controls[i].Name] = &controls[i]
	}
	return m
}()

// controlByKnob holds the controls whose scenario knob has another name
// (panic_threshold is healthy_panic_threshold, retries is num_retries,
// lb is lb_policy): lessons and the CLI use the knob's name.
var controlByKnob = func() map[string]*control {
	m := map[string]*control{}
	for i := range controls {
		if c := &controls[i]; c.Target == targetScenario && c.Knob != c.Name {
			m[c.Knob] = c
		}
	}
	return m
}()

// lookupControl finds a control by its Envoy field name or by its scenario
// knob's name.
func lookupControl(name string) *control {
	if c := controlByName[name]; c != nil {
		return c
	}
	return controlByKnob[name]
}

// choiceIndex is the index of a kindChoice control's value; ok is false for
// a value the control does not offer.
func (c *control) choiceIndex(v string) (int, bool) {
	for i, ch := range c.Choices {
		if ch == v {
			return i, true
		}
	}
	return 0, false
}

// choice is a kindChoice value's name ("" if the index is out of range).
func (c *control) choice(v float64) string {
	if i := int(v); i >= 0 && i < len(c.Choices) && float64(i) == v {
		return c.Choices[i]
	}
	return ""
}

// parseSetting reads a value as lessons and Envoy YAML write it ("34",
// "250ms", "true", "connect_failure") into the control's number.
func (c *control) parseSetting(s string) (float64, error) {
	s = strings.TrimSpace(s)
	bad := func() error {
		return &inputError{Field: c.Name, Msg: fmt.Sprintf("%q is not a value of this setting (allowed %s)", truncate(s, 40), c.allowed())}
	}
	switch c.Kind {
	case kindSeconds:
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, bad()
		}
		return d.Seconds(), nil
	case kindToggle:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return 0, bad()
		}
		return b2f(b), nil
	case kindChoice:
		i, ok := c.choiceIndex(s)
		if !ok {
			return 0, bad()
		}
		return float64(i), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, bad()
	}
	return v, nil
}

// envoyValue is the value as a user types it in Envoy YAML, the form
// envoyconf.ApplyFields reads: "34", "30s", "true".
func (c *control) envoyValue(v float64) string {
	switch c.Kind {
	case kindSeconds:
		return strconv.FormatFloat(v, 'f', -1, 64) + "s"
	case kindToggle:
		return strconv.FormatBool(v != 0)
	case kindChoice:
		return c.choice(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// scenarioValue reads a targetScenario control's value from a scenario; ok
// is false when the scenario has no such setting (a fault knob on a preset
// without a single faulty host).
func (c *control) scenarioValue(sc scenario.Scenario) (float64, bool) {
	s := scenario.KnobValue(sc, c.Knob)
	switch s {
	case "":
		return 0, false
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	switch c.Kind {
	case kindChoice:
		i, ok := c.choiceIndex(s)
		return float64(i), ok
	case kindSeconds:
		d, err := time.ParseDuration(s)
		return d.Seconds(), err == nil
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// check reports a value outside the control's range or off its step.
func (c *control) check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < c.Min || v > c.Max {
		return &inputError{Field: c.Name, Msg: fmt.Sprintf("%s is out of range (allowed %s)", fmtNum(v), c.allowed())}
	}
	if c.Step >= 1 && v != math.Trunc(v) {
		return &inputError{Field: c.Name, Msg: fmt.Sprintf("%s is not a whole number (allowed %s)", fmtNum(v), c.allowed())}
	}
	return nil
}

// allowed is the range in words, with the unit: "0–100 %", "1–60 s".
func (c *control) allowed() string {
	switch c.Kind {
	case kindToggle:
		return "true or false"
	case kindChoice:
		return strings.Join(c.Choices, ", ")
	}
	s := fmtNum(c.Min) + "–" + fmtNum(c.Max)
	if c.Kind == kindShare {
		s += " (a fraction)"
	} else if c.Unit != "" {
		s += " " + c.Unit
	}
	return s
}

// display is the value as the page shows it next to the slider.
func (c *control) display(v float64) string {
	switch c.Kind {
	case kindFactor:
		return "k = " + strconv.FormatFloat(v/1000, 'f', -1, 64)
	case kindToggle:
		if v != 0 {
			return "on"
		}
		return "off"
	case kindSeconds:
		return fmtDuration(time.Duration(v * float64(time.Second)))
	case kindShare:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	case kindChoice:
		return c.choice(v)
	}
	if c.Unit == "" {
		return fmtNum(v)
	}
	if c.Unit == "%" {
		return fmtNum(v) + "%"
	}
	return fmtNum(v) + " " + c.Unit
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fmtDuration writes a whole or fractional number of seconds the way the
// log and the labels do: "30 s", "1.5 s".
func fmtDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
