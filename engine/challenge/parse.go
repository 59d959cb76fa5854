package challenge

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"outlierlab/engine/course"
	"outlierlab/engine/plan"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// The keys of each level of the front matter, as doc.go lists them.
var (
	topKeys      = []string{"title", "summary", "seeds", "unlocked", "start", "reference", "main", "scenarios"}
	scenarioKeys = []string{"id", "title", "preset", "settings", "goals"}
	goalKeys     = []string{"id", "kind", "host", "hosts", "except", "after", "within", "from", "to", "max"}
)

// goalTakes is what each goal kind reads besides id and kind; every other
// key is an author's mistake (a goal that ignored "host" would pass for
// the wrong reason).
var goalTakes = map[string][]string{
	KindEjectedWithin:  {"host", "after", "within"},
	KindFailuresAtMost: {"from", "to", "max"},
	KindMaxOut:         {"from", "to", "max"},
	KindNotEjected:     {"hosts", "except", "from", "to"},
	KindNoPanic:        {"from", "to"},
}

// MaxSeeds bounds a challenge's hidden seeds: grading runs the battery
// once per seed, within the web's run budget.
const MaxSeeds = 20

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Parse reads and validates one challenge file; name is its path (the id
// is its base name without .md). Every bad field is reported with its
// line, each a *plan.FieldError.
func Parse(name string, data []byte) (Challenge, error) {
	p := &parser{file: name}
	c := Challenge{ID: strings.TrimSuffix(path.Base(name), ".md"), File: name}
	front, body, err := course.SplitFrontMatter(data)
	if err != nil {
		return c, &plan.FieldError{File: name, Line: 1, Problem: err.Error()}
	}
	c.Story = strings.TrimSpace(body)
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return c, &plan.FieldError{File: name, Line: 1, Problem: "front matter: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return c, &plan.FieldError{File: name, Line: 2, Problem: "the front matter is empty (want " + strings.Join(topKeys, ", ") + ")"}
	}
	p.top(&c, doc.Content[0])
	if !idRE.MatchString(c.ID) {
		p.fail(nil, "", "file name %q is not a challenge id (lower-case letters, digits and -, then .md)", c.ID)
	}
	if c.Story == "" {
		p.fail(nil, "body", "is empty: tell the story (the cluster, the fault, what is asked)")
	}
	if len(p.errs) > 0 {
		return Challenge{}, errors.Join(p.errs...)
	}
	return c, nil
}

type parser struct {
	file string
	errs []error
	// top is the front matter's top-level fields: a scenario's run
	// refusing the start's or the reference's value names that value.
	topFields map[string]*yaml.Node
	// refused is the start's and reference's settings already named.
	refused map[string]bool
}

// fail records a problem at n's line; the front matter starts on the
// file's second line.
func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line + 1
	}
	p.errs = append(p.errs, &plan.FieldError{File: p.file, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)})
}

// mapping reads a mapping's keys, each among allowed and given once.
func (p *parser) mapping(n *yaml.Node, field string, allowed []string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "is not a mapping (want %s)", strings.Join(allowed, ", "))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		where := dot(field, k.Value)
		switch {
		case !slices.Contains(allowed, k.Value):
			p.fail(k, where, "unknown field (allowed %s)", strings.Join(allowed, ", "))
		case out[k.Value] != nil:
			p.fail(k, where, "is given twice")
		default:
			out[k.Value] = n.Content[i+1]
		}
	}
	return out
}

func dot(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// scalar reads a value ("" when missing).
func (p *parser) scalar(n *yaml.Node, field string) string {
	if n == nil || n.Tag == "!!null" {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.fail(n, field, "is not a value")
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// need reads a value that must be given; parent's line names a missing one.
func (p *parser) need(f map[string]*yaml.Node, parent *yaml.Node, field, key, what string) string {
	v := p.scalar(f[key], dot(field, key))
	if v == "" {
		p.fail(orNode(f[key], parent), dot(field, key), "missing (%s)", what)
	}
	return v
}

func orNode(n, parent *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return parent
}

func (p *parser) list(n *yaml.Node, field string) []string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.fail(n, field, "is not a list (want [a, b])")
		return nil
	}
	var out []string
	for i, v := range n.Content {
		out = append(out, p.scalar(v, fmt.Sprintf("%s[%d]", field, i)))
	}
	return out
}

func (p *parser) values(n *yaml.Node, field string) map[string]string {
	out := map[string]string{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "is not a mapping of setting: value")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, ok := settings.Lookup(k.Value); !ok {
			p.fail(k, dot(field, k.Value), "unknown setting (an outlier_detection field by its Envoy name, or a scenario knob)")
			continue
		}
		out[k.Value] = p.scalar(v, dot(field, k.Value))
	}
	return out
}

// ms reads a moment of the run ("30s"; "end" only where allowEnd).
func (p *parser) ms(n *yaml.Node, field string, allowEnd bool) course.Ms {
	if s := p.scalar(n, field); s != "" {
		v, err := course.ParseMs(s)
		if err == nil && v == course.End && !allowEnd {
			err = errors.New("cannot be end: name a moment like 30s")
		}
		if err == nil {
			return v
		}
		p.fail(n, field, "%v", err)
	}
	return 0
}

func (p *parser) top(c *Challenge, n *yaml.Node) {
	f := p.mapping(n, "", topKeys)
	if f == nil {
		return
	}
	p.topFields, p.refused = f, map[string]bool{}
	c.Title = p.need(f, n, "", "title", "the challenge's title")
	c.Summary = p.need(f, n, "", "summary", "one line for the list of challenges")
	seeds := p.need(f, n, "", "seeds", fmt.Sprintf("how many hidden seeds grade a submission, 1–%d", MaxSeeds))
	if v, err := strconv.Atoi(seeds); seeds != "" && (err != nil || v < 1 || v > MaxSeeds) {
		p.fail(f["seeds"], "seeds", "%q is not a whole number from 1 to %d", seeds, MaxSeeds)
	} else {
		c.Seeds = v
	}
	c.Unlocked = p.list(f["unlocked"], "unlocked")
	if len(c.Unlocked) == 0 {
		p.fail(orNode(f["unlocked"], n), "unlocked", "missing (the settings a learner may change, at least one)")
	}
	for i, name := range c.Unlocked {
		s, ok := settings.Lookup(name)
		switch {
		case !ok:
			p.fail(f["unlocked"].Content[i], fmt.Sprintf("unlocked[%d]", i), "%q is not a setting (an outlier_detection field by its Envoy name, or a scenario knob)", name)
		case s.Name != name:
			p.fail(f["unlocked"].Content[i], fmt.Sprintf("unlocked[%d]", i), "write %q by its name %q", name, s.Name)
		case slices.Index(c.Unlocked, name) < i:
			p.fail(f["unlocked"].Content[i], fmt.Sprintf("unlocked[%d]", i), "%q is listed twice", name)
		}
	}
	c.Start = p.values(f["start"], "start")
	c.Reference = p.values(f["reference"], "reference")
	if f["reference"] == nil {
		p.fail(n, "reference", "missing (a solution: values of unlocked settings that pass every goal)")
	}
	for _, field := range []string{"start", "reference"} {
		m := map[string]map[string]string{"start": c.Start, "reference": c.Reference}[field]
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(c.Unlocked, k) {
				p.fail(keyNode(f[field], k), dot(field, k), "is not unlocked (allowed %s)", strings.Join(c.Unlocked, ", "))
			}
		}
	}
	sn := f["scenarios"]
	if sn == nil || sn.Kind != yaml.SequenceNode || len(sn.Content) == 0 {
		p.fail(orNode(sn, n), "scenarios", "missing (the battery: a list of scenarios, each with goals)")
		return
	}
	for i, item := range sn.Content {
		s := p.scenario(c, item, fmt.Sprintf("scenarios[%d]", i))
		if j := slices.IndexFunc(c.Scenarios, func(o Scenario) bool { return o.ID == s.ID }); s.ID != "" && j >= 0 {
			p.fail(item, fmt.Sprintf("scenarios[%d].id", i), "%q is already scenarios[%d]'s", s.ID, j)
		}
		c.Scenarios = append(c.Scenarios, s)
	}
	c.Main = p.list(f["main"], "main")
	if f["main"] != nil && len(c.Main) != 2 {
		p.fail(f["main"], "main", "names %d goals; want two (scenario/goal), the room's scatter's axes", len(c.Main))
	}
	for i, m := range c.Main {
		if _, _, ok := c.Goal(m); !ok {
			p.fail(f["main"].Content[i], fmt.Sprintf("main[%d]", i), "%q is not a goal (write scenario/goal, like %s)", m, c.firstGoal())
		}
	}
}

func keyNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return m
}

func (c *Challenge) firstGoal() string {
	for _, s := range c.Scenarios {
		for _, g := range s.Goals {
			return s.ID + "/" + g.ID
		}
	}
	return "scenario/goal"
}

// Goal finds a goal by "scenario/goal".
func (c *Challenge) Goal(ref string) (*Scenario, *Goal, bool) {
	sid, gid, _ := strings.Cut(ref, "/")
	for i := range c.Scenarios {
		s := &c.Scenarios[i]
		if s.ID != sid {
			continue
		}
		for j := range s.Goals {
			if s.Goals[j].ID == gid {
				return s, &s.Goals[j], true
			}
		}
	}
	return nil, nil, false
}

func (p *parser) scenario(c *Challenge, n *yaml.Node, field string) Scenario {
	var s Scenario
	f := p.mapping(n, field, scenarioKeys)
	if f == nil {
		return s
	}
	s.ID = p.need(f, n, field, "id", "lower-case letters, digits and -")
	if s.ID != "" && !idRE.MatchString(s.ID) {
		p.fail(f["id"], field+".id", "%q is not an id (lower-case letters, digits and -)", s.ID)
	}
	s.Title = p.need(f, n, field, "title", "what the learner reads of this run")
	s.Preset = p.need(f, n, field, "preset", "the scenario preset: "+strings.Join(presetNames(), ", "))
	s.Settings = p.values(f["settings"], field+".settings")
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		if st, _ := settings.Lookup(k); slices.Contains(c.Unlocked, st.Name) {
			p.fail(keyNode(f["settings"], k), field+".settings."+k, "is unlocked: the learner sets it (lock it, or leave it out here)")
		}
	}
	pre, ok := scenario.Lookup(s.Preset)
	if s.Preset != "" && !ok {
		p.fail(f["preset"], field+".preset", "%q is not a preset (allowed %s)", s.Preset, strings.Join(presetNames(), ", "))
	}
	if ok {
		for _, what := range []string{"start", "reference"} {
			sub := map[string]map[string]string{"start": c.Start, "reference": c.Reference}[what]
			sc, _, err := settings.Apply(pre, c.Start, s.Settings, sub)
			if err != nil {
				p.refuse(c, pre, s, f, n, field, what)
				continue
			}
			s.Hosts = sc.Cluster.Hosts
			if iv := sc.Outlier.IntervalMs; iv > 0 {
				s.EndMs = sc.Cluster.Duration.Milliseconds() / iv * iv
			}
		}
	}
	gn := f["goals"]
	if gn == nil || gn.Kind != yaml.SequenceNode || len(gn.Content) == 0 {
		p.fail(orNode(gn, n), field+".goals", "missing (a list of goals, at least one: %s)", strings.Join(Kinds, ", "))
		return s
	}
	for i, item := range gn.Content {
		g := p.goal(&s, item, fmt.Sprintf("%s.goals[%d]", field, i))
		if j := slices.IndexFunc(s.Goals, func(o Goal) bool { return o.ID == g.ID }); g.ID != "" && j >= 0 {
			p.fail(item, fmt.Sprintf("%s.goals[%d].id", field, i), "%q is already goals[%d]'s (give each an id)", g.ID, j)
		}
		s.Goals = append(s.Goals, g)
	}
	return s
}

// refuse names what a scenario's run refused: each value of the start
// or the reference it refuses alone (once, at its own line), else the
// scenario's settings with them.
func (p *parser) refuse(c *Challenge, pre scenario.Preset, s Scenario, f map[string]*yaml.Node, n *yaml.Node, field, what string) {
	sub := map[string]map[string]string{"start": c.Start, "reference": c.Reference}[what]
	named := false
	for _, k := range slices.Sorted(maps.Keys(sub)) {
		if _, _, err := settings.Apply(pre, s.Settings, map[string]string{k: sub[k]}); err != nil {
			named = true
			if !p.refused[what+"."+k] {
				p.refused[what+"."+k] = true
				p.fail(keyNode(p.topFields[what], k), what+"."+k, "%v", err)
			}
		}
	}
	if !named {
		_, _, err := settings.Apply(pre, c.Start, s.Settings, sub)
		p.fail(orNode(f["settings"], n), field+".settings", "with the %s: %v", what, err)
	}
}

func presetNames() []string {
	var out []string
	for _, p := range scenario.Presets() {
		out = append(out, p.Name)
	}
	return out
}

func (p *parser) goal(s *Scenario, n *yaml.Node, field string) Goal {
	g := Goal{To: course.End}
	f := p.mapping(n, field, goalKeys)
	if f == nil {
		return g
	}
	g.Kind = p.need(f, n, field, "kind", strings.Join(Kinds, ", "))
	takes, ok := goalTakes[g.Kind]
	if g.Kind != "" && !ok {
		p.fail(f["kind"], field+".kind", "%q is not a goal kind (allowed %s)", g.Kind, strings.Join(Kinds, ", "))
		return g
	}
	g.ID = p.scalar(f["id"], field+".id")
	if g.ID == "" {
		g.ID = strings.ReplaceAll(g.Kind, "_", "-")
	} else if !idRE.MatchString(g.ID) {
		p.fail(f["id"], field+".id", "%q is not an id (lower-case letters, digits and -)", g.ID)
	}
	for _, k := range goalKeys[2:] {
		if f[k] != nil && !slices.Contains(takes, k) {
			p.fail(keyNode(n, k), dot(field, k), "a %s goal does not take %s (it takes %s)", g.Kind, k, strings.Join(takes, ", "))
		}
	}
	hosts := fmt.Sprintf("h0–h%d", max(s.Hosts-1, 0))
	host := func(name string, node *yaml.Node, where string) {
		if s.Hosts > 0 && !isHost(name, s.Hosts) {
			p.fail(node, where, "%q is not a host of this run (allowed %s)", name, hosts)
		}
	}
	end := course.Ms(s.EndMs)
	g.From = p.ms(f["from"], field+".from", false)
	if f["to"] != nil {
		g.To = p.ms(f["to"], field+".to", true)
		if g.To != course.End && g.To <= g.From {
			p.fail(f["to"], field+".to", "%s is not after from (%s)", g.To, g.From)
		}
	}
	if s.EndMs > 0 && g.To != course.End && g.To > end {
		p.fail(f["to"], field+".to", "%s is after the run's last frame (%s)", g.To, end)
	}
	if s.EndMs > 0 && g.From >= end {
		p.fail(f["from"], field+".from", "%s is not before the run's last frame (%s)", g.From, end)
	}
	switch g.Kind {
	case KindEjectedWithin:
		g.Host = p.need(f, n, field, "host", "the host that must be ejected, "+hosts)
		if g.Host != "" {
			host(g.Host, f["host"], field+".host")
		}
		if f["after"] == nil {
			p.fail(n, field+".after", "missing (when the clock starts, like the fault's 30s)")
		}
		g.After = p.ms(f["after"], field+".after", false)
		g.Within = p.ms(f["within"], field+".within", false)
		if g.Within <= 0 {
			p.fail(orNode(f["within"], n), field+".within", "missing (how long after, like 20s; more than 0)")
		}
		if s.EndMs > 0 && g.After+g.Within > end {
			p.fail(orNode(f["within"], n), field+".within", "the deadline %s is after the run's last frame (%s)", g.After+g.Within, end)
		}
	case KindFailuresAtMost, KindMaxOut:
		hi, what := 100.0, "percent, 0–100"
		if g.Kind == KindMaxOut {
			hi, what = float64(max(s.Hosts, 1)), fmt.Sprintf("hosts, 0–%d", s.Hosts)
		}
		v := p.need(f, n, field, "max", what)
		if x, err := strconv.ParseFloat(v, 64); v != "" && (err != nil || x < 0 || x > hi || math.IsNaN(x)) {
			p.fail(f["max"], field+".max", "%q is not a number of %s", v, what)
		} else if g.Kind == KindMaxOut && x != math.Trunc(x) {
			p.fail(f["max"], field+".max", "%q is not a whole number of %s", v, what)
		} else {
			g.Max = x
		}
	case KindNotEjected:
		g.Hosts = p.list(f["hosts"], field+".hosts")
		g.Except = p.list(f["except"], field+".except")
		if len(g.Hosts) > 0 && len(g.Except) > 0 {
			p.fail(f["except"], field+".except", "give hosts or except, not both")
		}
		for i, h := range g.Hosts {
			host(h, f["hosts"].Content[i], fmt.Sprintf("%s.hosts[%d]", field, i))
		}
		for i, h := range g.Except {
			host(h, f["except"].Content[i], fmt.Sprintf("%s.except[%d]", field, i))
		}
	}
	return g
}

func isHost(name string, hosts int) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "h"))
	return strings.HasPrefix(name, "h") && err == nil && n >= 0 && n < hosts && "h"+strconv.Itoa(n) == name
}
