package tabstate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/settings"
	"outlierlab/web/httperr"
)

// The lab's controls are the catalog's settings (engine/settings) as the
// page shows them: what a setting is (its kind, unit, range, choices and
// help) is the engine's; this file adds only what is about the page, keyed
// by the setting's name: a label, a group, the slider's span and step, and
// how a number is entered and shown.

// controlKind is how a control's number maps to the setting's value.
type controlKind uint8

const (
	// kindCount is a number written as is (consecutive_5xx: 5,
	// max_ejection_percent: 34).
	//lint:ignore U1000 the zero value, named for what it means
	kindCount controlKind = iota
	// KindSeconds is a duration the control holds in seconds and Envoy
	// reads as "30s".
	KindSeconds
	// KindFactor is success_rate_stdev_factor: Envoy stores k × 1000, the
	// slider holds the same integer and the label shows k.
	KindFactor
	// KindToggle is a bool.
	KindToggle
	// KindShare is a fraction 0–1 shown as a percentage (fault_rate).
	KindShare
	// KindChoice is one of Choices (lb_policy, fault_kind): the number is
	// the choice's index, the page's select and the signal hold its name.
	KindChoice
)

// Control is one input of the lab: a setting of the catalog with what the
// page adds. Name is the setting's Envoy name (settings.Setting.EnvoyName:
// healthy_panic_threshold, not the knob panic_threshold); it is the
// input's name attribute, its signal key and the field an error names.
// Min/Max are the slider's span: the setting's range, or a narrower one
// that keeps a run a few milliseconds (an interval of 1 ms over a
// 10-minute run would be 600 000 frames).
type Control struct {
	Name string
	// Setting is the catalog's name for it (lessons and the CLI use it).
	Setting string
	Label   string
	Group   string
	Unit    string
	Kind    controlKind
	Min     float64
	Max     float64
	Step    float64
	Help    string
	// Choices are a KindChoice control's values (the setting's menu).
	Choices []string
	// Entry is how the page takes the value (inputAuto: decided by the
	// range, see InputOf).
	Entry inputKind
	// NumStep is the number field's step when it must be finer than the
	// slider's: fault_rate's slider moves by 0.01, a typed 0.333 ("one in
	// three") must be accepted. 0: the slider's step.
	NumStep float64
	// Field is the Envoy path the page prints under the control: the
	// setting's own (circuit_breakers.thresholds.max_retries), else Name.
	Field string
	// AddressOnly: the lab's address and its "Model your cluster" box set
	// the control, and a tab keeps it, but the settings panel draws no
	// input for it and the page's signals carry it only once the tab set
	// it (ControlSignals): /lab's page stays within its byte budget.
	AddressOnly bool
}

// inputKind is the kind of input a numeric control gets on the page.
type inputKind uint8

const (
	// inputAuto: a slider, with a number field beside it when the range
	// has more steps than a slider can set one by one (see sliderSteps).
	inputAuto inputKind = iota
	// InputSliderNumber: a slider and a number field bound to one value.
	InputSliderNumber
	// InputNumber: a number field alone, for a range no slider can hold
	// (max_retries: 0–4294967295).
	InputNumber
)

// sliderSteps is the most steps a slider alone may have: a sidebar slider
// is some 300 px wide, and past about one step per 1.25 px a learner can
// no longer land on a value with the mouse (max_ejection_time's 1800 steps
// were ≈ 5 s a pixel).
const sliderSteps = 240

// InputOf is the input the page gives c.
func (c *Control) InputOf() inputKind {
	if c.Entry != inputAuto || c.Kind == KindToggle || c.Kind == KindChoice {
		return c.Entry
	}
	if c.Step > 0 && (c.Max-c.Min)/c.Step > sliderSteps {
		return InputSliderNumber
	}
	return inputAuto
}

// Control groups, in page order.
const (
	GroupSuccessRate = "Success rate"
	GroupEjection    = "Ejection"
	groupConsecutive = "Consecutive errors"
	GroupEnforcing   = "Enforcement (% of detections that eject)"
	groupFailurePct  = "Failure percentage"
	groupToggles     = "Switches"
	groupCluster     = "Cluster and clients"
	GroupScenario    = "Scenario"
)

// onPage is what the page adds to one setting of the catalog.
type onPage struct {
	Setting string // the catalog's name
	Label   string
	Group   string
	// Span narrows the slider to part of the setting's range (lab); the
	// zero span is the whole range.
	Span span
	// Step is the slider's step (0: 1).
	Step float64
	// Show overrides how the number is shown (KindFactor, KindShare); 0:
	// by the setting's kind.
	Show    controlKind
	Entry   inputKind
	NumStep float64
	// Address: the control is address-only (Control.AddressOnly).
	Address bool
}

// span is a slider's range, narrower than its setting's.
type span struct {
	lo, hi float64
	set    bool
}

// lab is a slider's span.
func lab(lo, hi float64) span { return span{lo, hi, true} }

// page lists every control of the lab, in page order.
var page = []onPage{
	{Setting: "success_rate_stdev_factor", Label: "Stdev factor", Group: GroupSuccessRate, Span: lab(100, 5000), Step: 100, Show: KindFactor},
	{Setting: "success_rate_request_volume", Label: "Request volume", Group: GroupSuccessRate, Span: lab(0, 2000), Step: 10},
	{Setting: "success_rate_minimum_hosts", Label: "Minimum hosts", Group: GroupSuccessRate, Span: lab(0, 50)},

	{Setting: "max_ejection_percent", Label: "Ejection cap", Group: GroupEjection},
	{Setting: "base_ejection_time", Label: "Base ejection time", Group: GroupEjection, Span: lab(1, 600)},
	{Setting: "max_ejection_time", Label: "Max ejection time", Group: GroupEjection, Span: lab(1, 1800)},
	{Setting: "interval", Label: "Interval", Group: GroupEjection, Span: lab(1, 60)},
	{Setting: "max_ejection_time_jitter", Label: "Ejection time jitter", Group: GroupEjection, Span: lab(0, 60)},

	{Setting: "consecutive_5xx", Label: "Consecutive 5xx", Group: groupConsecutive, Span: lab(0, 100)},
	{Setting: "consecutive_gateway_failure", Label: "Consecutive gateway failures", Group: groupConsecutive, Span: lab(0, 100)},
	{Setting: "consecutive_local_origin_failure", Label: "Consecutive local-origin failures", Group: groupConsecutive, Span: lab(0, 100)},

	{Setting: "failure_percentage_threshold", Label: "Failure threshold", Group: groupFailurePct},
	{Setting: "failure_percentage_request_volume", Label: "Request volume", Group: groupFailurePct, Span: lab(0, 2000), Step: 10},
	{Setting: "failure_percentage_minimum_hosts", Label: "Minimum hosts", Group: groupFailurePct, Span: lab(0, 50)},

	{Setting: "enforcing_success_rate", Label: "Success rate", Group: GroupEnforcing},
	{Setting: "enforcing_consecutive_5xx", Label: "Consecutive 5xx", Group: GroupEnforcing},
	{Setting: "enforcing_consecutive_gateway_failure", Label: "Gateway failures", Group: GroupEnforcing},
	{Setting: "enforcing_failure_percentage", Label: "Failure percentage", Group: GroupEnforcing},
	{Setting: "enforcing_consecutive_local_origin_failure", Label: "Local-origin consecutive", Group: GroupEnforcing},
	{Setting: "enforcing_local_origin_success_rate", Label: "Local-origin success rate", Group: GroupEnforcing},
	{Setting: "enforcing_failure_percentage_local_origin", Label: "Local-origin failure %", Group: GroupEnforcing},

	{Setting: "always_eject_one_host", Label: "Always eject one host", Group: groupToggles},
	{Setting: "split_external_local_origin_errors", Label: "Split local-origin errors", Group: groupToggles},
	{Setting: "successful_active_health_check_uneject_host", Label: "Health check unejects", Group: groupToggles},
	{Setting: "detect_degraded_hosts", Label: "Detect degraded hosts", Group: groupToggles},

	{Setting: "panic_threshold", Label: "Panic threshold", Group: groupCluster},
	{Setting: "lb", Label: "Load balancer", Group: groupCluster},
	{Setting: "retries", Label: "Retries", Group: groupCluster, Span: lab(0, 5)},
	{Setting: "retry_on", Label: "Retry on", Group: groupCluster},
	{Setting: "previous_hosts", Label: "Retry elsewhere", Group: groupCluster},
	{Setting: "per_try_timeout", Label: "Per-try timeout", Group: groupCluster, Span: lab(0, 5), Step: 0.05},
	{Setting: "retry_budget_percent", Label: "Retry budget", Group: groupCluster},
	{Setting: "max_retries", Label: "Max concurrent retries", Group: groupCluster, Entry: InputNumber},
	{Setting: "active_hc", Label: "Active health checks", Group: groupCluster},
	{Setting: "hc_interval", Label: "Health check interval", Group: groupCluster, Span: lab(1, 60)},
	{Setting: "hc_shares_fault", Label: "Health check sees the fault", Group: groupCluster},

	// The lab's spans keep a run to a few milliseconds; the CLI and
	// lessons take the settings' whole ranges.
	{Setting: "hosts", Label: "Hosts", Group: GroupScenario, Span: lab(1, 50)},
	{Setting: "rps", Label: "Request rate", Group: GroupScenario, Span: lab(10, 3000), Step: 10},
	{Setting: "capacity_rps", Label: "Host capacity", Group: GroupScenario, Span: lab(0, 2000), Step: 10},
	{Setting: "fault_rate", Label: "Faulty host's failures", Group: GroupScenario, Step: 0.01, Show: KindShare, Entry: InputSliderNumber, NumStep: 0.001},
	{Setting: "fault_kind", Label: "How it fails", Group: GroupScenario},
	{Setting: "fault_pattern", Label: "Failure pattern", Group: GroupScenario},
	{Setting: "fault_duration", Label: "Fault lasts", Group: GroupScenario, Span: lab(0, 600), Step: 10},
	{Setting: "fault_start", Label: "Fault starts at", Group: GroupScenario, Span: lab(0, 600), Address: true},
	{Setting: "fault_host", Label: "Failing host", Group: GroupScenario, Span: lab(0, 49), Address: true},
	{Setting: "dialect", Label: "Whose detector", Group: GroupScenario},
	{Setting: "clients", Label: "Client proxies", Group: GroupScenario},
	{Setting: "client_skew", Label: "Hot client's traffic", Group: GroupScenario},
	{Setting: "failover_hosts", Label: "Failover hosts (P1)", Group: GroupScenario, Span: lab(0, 49)},
}

// Controls lists every input of the lab, in page order: each page entry
// with its setting.
var Controls = func() []Control {
	out := make([]Control, len(page))
	for i, e := range page {
		s, ok := settings.Lookup(e.Setting)
		if !ok {
			// Both tables are compiled in; the tests catch a stale entry.
			panic("web: the page shows an unknown setting " + e.Setting)
		}
		out[i] = newControl(s, e)
	}
	return out
}()

// newControl joins a setting and what the page adds to it.
func newControl(s settings.Setting, e onPage) Control {
	c := Control{
		Name: s.EnvoyName(), Setting: s.Name, Label: e.Label, Group: e.Group, Unit: s.Unit, Help: s.Help,
		Min: s.Min, Max: s.Max, Step: e.Step, Entry: e.Entry, NumStep: e.NumStep, Field: s.Envoy,
		AddressOnly: e.Address,
	}
	switch s.Kind {
	case settings.Bool:
		c.Kind = KindToggle
	case settings.Enum, settings.List:
		c.Kind, c.Choices, c.Min, c.Max = KindChoice, s.Menu, 0, float64(len(s.Menu)-1)
	case settings.Duration:
		c.Kind = KindSeconds
	}
	if e.Show != 0 {
		c.Kind = e.Show
	}
	if e.Span.set {
		c.Min, c.Max = e.Span.lo, e.Span.hi
	}
	if c.Step == 0 {
		c.Step = 1
	}
	if c.Field == "" {
		c.Field = c.Name
	}
	return c
}

var ControlByName = func() map[string]*Control {
	m := make(map[string]*Control, len(Controls))
	for i := range Controls {
		m[Controls[i].Name] = &Controls[i]
	}
	return m
}()

// LookupControl finds a control by its name or by any name the catalog
// knows its setting by (lessons and the CLI write panic_threshold,
// retries, lb).
func LookupControl(name string) *Control {
	if c := ControlByName[name]; c != nil {
		return c
	}
	if s, ok := settings.Lookup(name); ok {
		return ControlByName[s.EnvoyName()]
	}
	return nil
}

func B2F(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// choiceIndex is the index of a KindChoice control's value; ok is false for
// a value the control does not offer.
func (c *Control) choiceIndex(v string) (int, bool) {
	for i, ch := range c.Choices {
		if ch == v {
			return i, true
		}
	}
	return 0, false
}

// Choice is a KindChoice value's name ("" if the index is out of range).
func (c *Control) Choice(v float64) string {
	if i := int(v); i >= 0 && i < len(c.Choices) && float64(i) == v {
		return c.Choices[i]
	}
	return ""
}

// EnvoyValue is the value as a user types it, the form settings.Apply
// reads: "34", "30s", "true", "connect_failure".
func (c *Control) EnvoyValue(v float64) string {
	switch c.Kind {
	case KindSeconds:
		return strconv.FormatFloat(v, 'f', -1, 64) + "s"
	case KindToggle:
		return strconv.FormatBool(v != 0)
	case KindChoice:
		return c.Choice(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Number reads a value as settings.Values writes it ("34", "250ms",
// "true", "connect_failure") into the control's number; ok is false for a
// value the control cannot show (a retry_on list its menu does not offer).
func (c *Control) Number(s string) (float64, bool) {
	switch c.Kind {
	case KindToggle:
		b, err := strconv.ParseBool(s)
		return B2F(b), err == nil
	case KindChoice:
		i, ok := c.choiceIndex(s)
		return float64(i), ok
	case KindSeconds:
		d, err := time.ParseDuration(s)
		return d.Seconds(), err == nil
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// Check reports a value outside the control's span or off its step.
func (c *Control) Check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < c.Min || v > c.Max {
		return &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%s is out of range (allowed %s)", httperr.MessageNumber(v), c.Allowed())}
	}
	if c.Step >= 1 && v != math.Trunc(v) {
		return &httperr.FieldError{Field: c.Name, Msg: fmt.Sprintf("%s is not a whole number (allowed %s)", httperr.MessageNumber(v), c.Allowed())}
	}
	return nil
}

// Allowed is the span in words, with the unit: "0–100 %", "1–60 s".
func (c *Control) Allowed() string {
	switch c.Kind {
	case KindToggle:
		return "true or false"
	case KindChoice:
		return strings.Join(c.Choices, ", ")
	}
	s := httperr.FormatNumber(c.Min) + "–" + httperr.FormatNumber(c.Max)
	if c.Kind == KindShare {
		s += " (a fraction)"
	} else if c.Unit != "" {
		s += " " + c.Unit
	}
	return s
}

// Display is the value as the page shows it next to the slider.
func (c *Control) Display(v float64) string {
	switch c.Kind {
	case KindFactor:
		return "k = " + strconv.FormatFloat(v/1000, 'f', -1, 64)
	case KindToggle:
		if v != 0 {
			return "on"
		}
		return "off"
	case KindSeconds:
		return fmtDuration(time.Duration(v * float64(time.Second)))
	case KindShare:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	case KindChoice:
		return c.Choice(v)
	}
	if c.Unit == "" {
		return httperr.FormatNumber(v)
	}
	if c.Unit == "%" {
		return httperr.FormatNumber(v) + "%"
	}
	return httperr.FormatNumber(v) + " " + c.Unit
}

// fmtDuration writes a whole or fractional number of seconds the way the
// log and the labels do: "30 s", "1.5 s".
func fmtDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
