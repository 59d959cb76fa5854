package course

import (
	"strings"
	"testing"
	"testing/fstest"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/settings"
	"outlierlab/lessons"
)

// endingOf is minimal with an ending, the one given or a valid one.
func endingOf(ending string) string {
	if ending == "" {
		ending = `ending:
  settings:
    - {name: max_ejection_percent, default: "10"}
    - {name: hosts}
  stats: [ejections_overflow, lb_healthy_panic]
  rule: "The cap is {{cap_pct}}%."
  exercise:
    text: "Your hosts, your cap."
    settings: [max_ejection_percent]
`
	}
	return strings.Replace(minimal, "\n---\n", "\n"+ending+"---\n", 1)
}

func TestEndingParsed(t *testing.T) {
	l, err := Parse("tiny.md", []byte(endingOf("")))
	if err != nil {
		t.Fatal(err)
	}
	e := l.Ending
	if e == nil || len(e.Settings) != 2 || e.Settings[0].Default != "10" || e.Settings[1].Default != "" {
		t.Fatalf("ending %+v", e)
	}
	if got := strings.Join(e.Exercise.ExerciseSettings(), " "); got != "hosts rps max_ejection_percent" {
		t.Errorf("exercise settings %q", got)
	}
	if err := l.CheckEnding(); err != nil {
		t.Error(err)
	}
	bare, err := Parse("tiny.md", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.CheckEnding(); err == nil || !strings.Contains(err.Error(), "tiny.md: missing ending") {
		t.Errorf("a lesson without an ending: %v", err)
	}
	if StatPath("ejections_overflow") != "outlier_detection.ejections_overflow" || StatPath("lb_healthy_panic") != "lb_healthy_panic" {
		t.Errorf("stat paths %q, %q", StatPath("ejections_overflow"), StatPath("lb_healthy_panic"))
	}
}

// A malformed ending fails Parse naming the key and what is allowed.
func TestEndingMalformed(t *testing.T) {
	valid := endingOf("")
	cases := []struct {
		name, from, to, wantIn string
	}{
		{"wrong default", `default: "10"`, `default: "20"`, `ending.settings[0]: default "20" is not Envoy's (max_ejection_percent defaults to "10")`},
		{"a field without its default", `{name: max_ejection_percent, default: "10"}`, `{name: max_ejection_percent}`, `ending.settings[0]: max_ejection_percent needs its default (Envoy's is "10")`},
		{"a default for a knob", `{name: hosts}`, `{name: hosts, default: "6"}`, "ending.settings[1]: hosts is not an outlier_detection field: state no default"},
		{"unknown setting", `{name: hosts}`, `{name: host}`, `ending.settings[1]: unknown setting "host"`},
		{"a setting twice", `{name: hosts}`, `{name: max_ejection_percent, default: "10"}`, `ending.settings[1]: "max_ejection_percent" is listed twice`},
		{"unknown stat", "[ejections_overflow, lb_healthy_panic]", "[ejections_overflows]", `ending.stats[0]: unknown stat "ejections_overflows" (one of ejections_active`},
		{"no stats", "  stats: [ejections_overflow, lb_healthy_panic]\n", "", "ending.stats: missing"},
		{"no rule", `  rule: "The cap is {{cap_pct}}%."` + "\n", "", "ending.rule: missing"},
		{"bad placeholder", "{{cap_pct}}", "{{cap_pc}}", "ending.rule: placeholder {{cap_pc}}"},
		{"no exercise text", `    text: "Your hosts, your cap."` + "\n", "", "ending.exercise.text: missing"},
		{"exercise names hosts", "settings: [max_ejection_percent]", "settings: [hosts]", "ending.exercise.settings[0]: hosts is always offered"},
		{"exercise names an alias", "settings: [max_ejection_percent]", "settings: [healthy_panic_threshold]", `ending.exercise.settings[0]: unknown setting "healthy_panic_threshold"`},
		{"unknown key", "  rule:", "  rules: x\n  rule:", `unknown field "rules"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(valid, c.from) {
				t.Fatalf("the valid ending has no %q", c.from)
			}
			_, err := Load(fstest.MapFS{"tiny.md": {Data: []byte(strings.Replace(valid, c.from, c.to, 1))}})
			if err == nil || !strings.Contains(err.Error(), c.wantIn) || !strings.Contains(err.Error(), "tiny.md") {
				t.Errorf("error %v, want it to name tiny.md and hold %q", err, c.wantIn)
			}
		})
	}
}

// Every lesson ends with what it taught, and every default it states is
// Envoy's: read here from engine.DefaultConfig through envoyconf (the
// proto's rendering), not from the settings catalog the parser checks
// against, so a wrong default in either fails.
func TestEveryLessonEndsWithEnvoysDefaults(t *testing.T) {
	ls, err := Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	envoy := envoyconf.FieldValues(engine.DefaultConfig())
	for _, l := range ls {
		if err := l.CheckEnding(); err != nil {
			t.Error(err)
			continue
		}
		for _, s := range l.Ending.Settings {
			set, _ := settings.Lookup(s.Name)
			if set.Target != settings.OutlierField {
				continue
			}
			if want, ok := envoy[s.Name]; !ok || s.Default != want {
				t.Errorf("%s: ending states %s defaults to %q; Envoy's default is %q", l.ID, s.Name, s.Default, want)
			}
		}
	}
}
