// Package settings is outlierlab's one catalog of settings: every name a
// learner, a lesson, a permalink or `run -set` can give a value to, with
// its kind, unit, range, choices and help, how to read it back from a run,
// and Apply, the one way settings become the (Scenario, Config) a run
// takes.
//
// The catalog holds no table of its own. Envoy's outlier_detection fields
// come from envoyconf's field table (read from Envoy's proto and its
// validation rules); the cluster and route settings the simulator models
// (common_lb_config.healthy_panic_threshold, lb_policy, the retry policy,
// the retry circuit breaker and budget, health checks) and the scenario's
// own knobs (hosts, traffic, the fault) come from scenario.Knobs. Adding a
// knob is one entry in scenario's knob table; the CLI, lessons, permalinks
// and the lab's checks all see it, and the lab shows it once web/tabstate/controls.go
// gives it a label.
package settings

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// Kind is the form of a setting's value.
type Kind string

// The kinds are scenario.KnobKind's; an outlier_detection field is Int
// (uint32), Duration or Bool.
const (
	Int      Kind = "int"
	Float    Kind = "float"
	Duration Kind = "duration" // "30s", "1.5s", "250ms"; Min and Max in seconds
	Bool     Kind = "bool"
	Enum     Kind = "enum"   // one of Choices
	List     Kind = "list"   // a comma-separated subset of Choices
	Events   Kind = "events" // HOST@TIME entries (the inject knob)
)

// Target is what a setting changes.
type Target uint8

const (
	// OutlierField is a field of the cluster's outlier_detection block:
	// engine.Config, checked by envoyconf as Envoy checks it.
	OutlierField Target = iota + 1
	// Knob is a scenario knob: the simulated cluster, route or traffic.
	Knob
)

// Setting is one entry of the catalog.
type Setting struct {
	// Name is how the CLI, lessons and permalinks write it: an
	// outlier_detection field by its snake_case Envoy name, a knob by its
	// own.
	Name string
	// Alias is the Envoy field's own name when a knob is named otherwise
	// (healthy_panic_threshold for panic_threshold); Lookup and Apply
	// accept either.
	Alias string
	// Envoy is where a cluster or route setting lives in Envoy's config
	// ("circuit_breakers.thresholds.max_retries"); empty for an
	// outlier_detection field (Name is its field) and for what only the
	// simulation has (hosts, faults).
	Envoy  string
	Target Target
	Kind   Kind
	// Unit is what a number counts ("%", "s", "hosts", "req/s"); "" if
	// nothing.
	Unit string
	// Min and Max bound a number (a duration in seconds): what Envoy
	// accepts for a field, what the simulation accepts for a knob.
	Min, Max float64
	// Choices are an Enum's values, or a List's members.
	Choices []string
	// Menu is what a menu offers: Choices for an Enum, the usual
	// combinations for a List.
	Menu []string
	// Default is Envoy's default for a field, the lab's for a knob (a
	// preset may start elsewhere), written as typed.
	Default string
	Help    string
	allowed string
}

// Allowed is what the setting accepts, in words: "0–100 %", "1–200 hosts",
// "0.001s–9223372036s, ≥ base_ejection_time", "round_robin|least_request|random".
func (s Setting) Allowed() string { return s.allowed }

// EnvoyName is the Envoy field's own name where a knob has one
// (healthy_panic_threshold), else Name: the lab's page names its inputs,
// signals and permalink parameters so.
func (s Setting) EnvoyName() string {
	if s.Alias != "" {
		return s.Alias
	}
	return s.Name
}

type catalog struct {
	list   []Setting
	byName map[string]int // names and aliases
}

var theCatalog = sync.OnceValue(func() *catalog {
	c := &catalog{byName: map[string]int{}}
	for _, f := range envoyconf.Fields() {
		c.add(fromField(f))
	}
	for _, k := range scenario.Knobs() {
		c.add(fromKnob(k))
	}
	return c
})

func (c *catalog) add(s Setting) {
	for _, n := range []string{s.Name, s.Alias} {
		if n == "" {
			continue
		}
		if _, dup := c.byName[n]; dup {
			// Both tables are compiled in; the tests catch a clash.
			panic("settings: two settings are named " + n)
		}
		c.byName[n] = len(c.list)
	}
	c.list = append(c.list, s)
}

func fromField(f envoyconf.Field) Setting {
	s := Setting{Name: f.Name, Target: OutlierField, Unit: f.Unit, Default: f.Default, Help: f.Help, allowed: f.Allowed}
	switch f.Kind {
	case envoyconf.Uint32:
		s.Kind, s.Min, s.Max = Int, float64(f.Min), float64(f.Max)
		if s.Unit != "" {
			s.allowed += " " + s.Unit
		}
	case envoyconf.Duration:
		s.Kind, s.Max = Duration, envoyconf.MaxDurationSeconds
		if f.Positive {
			s.Min = 0.001
		}
	case envoyconf.Bool:
		s.Kind, s.Min, s.Max = Bool, 0, 1
	}
	return s
}

func fromKnob(k scenario.Knob) Setting {
	s := Setting{
		Name: k.Name, Alias: k.Alias, Envoy: k.Envoy, Target: Knob, Kind: Kind(k.Kind), Unit: k.Unit,
		Min: k.Min, Max: k.Max, Choices: k.Choices, Menu: k.Menu, Default: k.Default, Help: k.Help, allowed: k.Allowed(),
	}
	if len(s.Menu) == 0 && s.Kind == Enum {
		s.Menu = s.Choices
	}
	if s.Kind == Bool {
		s.Min, s.Max = 0, 1
	}
	return s
}

// All lists every setting: the outlier_detection fields in the proto's
// order, then the knobs in scenario.Knobs' order.
func All() []Setting {
	c := theCatalog()
	out := make([]Setting, len(c.list))
	for i, s := range c.list {
		out[i] = s
		out[i].Choices, out[i].Menu = slices.Clone(s.Choices), slices.Clone(s.Menu)
	}
	return out
}

// Lookup finds a setting by its name or its alias.
func Lookup(name string) (Setting, bool) {
	c := theCatalog()
	i, ok := c.byName[name]
	if !ok {
		return Setting{}, false
	}
	s := c.list[i]
	s.Choices, s.Menu = slices.Clone(s.Choices), slices.Clone(s.Menu)
	return s, true
}

// Names lists the settings of a target by Name, in catalog order.
func Names(t Target) []string {
	var out []string
	for _, s := range theCatalog().list {
		if s.Target == t {
			out = append(out, s.Name)
		}
	}
	return out
}

// Values is every setting's value in a run's scenario and config, by Name,
// in the form Apply reads: outlier_detection fields as Envoy YAML writes
// them ("34", "30s", "true"), knobs as scenario.KnobValue writes them. A
// knob the scenario has no use for (a fault knob with no primary fault) is
// left out.
func Values(sc scenario.Scenario, cfg engine.Config) map[string]string {
	out := envoyconf.FieldValues(cfg)
	for _, s := range theCatalog().list {
		if s.Target != Knob {
			continue
		}
		if v := scenario.KnobValue(sc, s.Name); v != "" || s.Kind == Events {
			out[s.Name] = v
		}
	}
	return out
}

// Value is one setting's value (by name or alias) as Values gives it; ok
// is false for a name the catalog does not know or a knob the scenario has
// no use for.
func Value(sc scenario.Scenario, cfg engine.Config, name string) (string, bool) {
	s, ok := Lookup(name)
	if !ok {
		return "", false
	}
	if s.Target == OutlierField {
		return envoyconf.FieldValues(cfg)[s.Name], true
	}
	v := scenario.KnobValue(sc, s.Name)
	return v, v != "" || s.Kind == Events
}

// unknownError names a setting the catalog does not know and lists the
// ones it does.
func unknownError(name string) error {
	return fmt.Errorf("%s: unknown setting (outlier_detection fields: %s; scenario knobs: %s)",
		name, strings.Join(Names(OutlierField), ", "), strings.Join(Names(Knob), ", "))
}
