package course

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
)

// A setting check ({kind: setting, name: max_ejection_percent, min: 17,
// max: 17} or {kind: setting, name: always_eject_one_host, is: "true"})
// reads the settings the run was made with: outlier_detection fields as
// Envoy reads them and scenario knobs as ApplyKnobs reads them
// (settingValue, the same form as the setting:NAME placeholder).

// settingShape is how a setting's value compares: numbers (durations in
// seconds) within min/max, anything else by equality with is; choices are
// the values is may take, when the setting has a fixed list.
func settingShape(name string) (numeric bool, choices []string, ok bool) {
	if f, found := envoyconf.LookupField(name); found && f.Name == name {
		switch f.Kind {
		case envoyconf.Bool:
			return false, []string{"true", "false"}, true
		default: // Uint32, Duration
			return true, nil, true
		}
	}
	for _, k := range scenario.Knobs() {
		if k.Name != name {
			continue
		}
		switch k.Kind {
		case scenario.KnobInt, scenario.KnobFloat, scenario.KnobDuration:
			return true, nil, true
		case scenario.KnobBool:
			return false, []string{"true", "false"}, true
		case scenario.KnobEnum:
			return false, k.Choices, true
		}
		return false, nil, true
	}
	return false, nil, false
}

// validateSetting checks a setting check's shape: a known setting, and
// min/max for a number or is for anything else (kinds: name is present).
func (c *Check) validateSetting() error {
	numeric, choices, ok := settingShape(c.Name)
	if !ok {
		return fmt.Errorf("unknown setting %q (an outlier_detection field by its Envoy name, or a scenario knob, as in start and settings)", c.Name)
	}
	switch {
	case numeric && c.Is != "":
		return fmt.Errorf("%s is a number: use min and max (equal for one value), not is", c.Name)
	case numeric:
		return validateBand(c, true)
	case c.Min != nil || c.Max != nil:
		return fmt.Errorf("%s is not a number: use is, not min/max", c.Name)
	case c.Is == "":
		return fmt.Errorf("needs is (the value %s must have)", c.Name)
	case choices != nil && !slices.Contains(choices, c.Is):
		return fmt.Errorf("is %q is not a value of %s (one of %s)", c.Is, c.Name, strings.Join(choices, ", "))
	}
	return nil
}

// settingNumber reads a setting's value as a number: durations ("30s",
// "250ms") in seconds.
func settingNumber(v string) (float64, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, true
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d.Seconds(), true
	}
	return 0, false
}

func (e *evaluator) setting(c *Check) (bool, string) {
	if e.run == nil {
		return false, "setting " + c.Name + ": no settings to read"
	}
	v, err := settingValue(e.run, c.Name)
	if err != nil {
		return false, "setting " + c.Name + ": " + err.Error()
	}
	if c.Is != "" {
		return v == c.Is, fmt.Sprintf("setting %s: %s (wanted %s)", c.Name, v, c.Is)
	}
	f, ok := settingNumber(v)
	if !ok {
		return false, fmt.Sprintf("setting %s: %q is not a number", c.Name, v)
	}
	return inBand(f, c.Min, c.Max), fmt.Sprintf("setting %s: %s%s", c.Name, v, want(c.Min, c.Max, ""))
}

// SettingNames lists the settings the check's setting checks read, in
// order, each once: the controls a page must show for the step to be done.
func (c *Check) SettingNames() []string {
	var out []string
	var walk func(c *Check)
	walk = func(c *Check) {
		if c.Kind == KindSetting && !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
		for i := range c.All {
			walk(&c.All[i])
		}
		for i := range c.Any {
			walk(&c.Any[i])
		}
	}
	walk(c)
	return out
}
