package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"outlierlab/engine/course"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// The keys of each level of a plan's front matter, in the order the
// documentation lists them.
var (
	planKeys      = []string{"title", "summary", "minutes", "scenes"}
	sceneKeys     = []string{"id", "title", "minutes", "preset", "lesson", "step", "settings", "inject", "cursor", "play", "notes", "question", "spotlight", "explore_minutes", "challenge"}
	questionKeys  = []string{"kind", "host", "at", "text", "choices", "answer"}
	choiceKeys    = []string{"text", "check"}
	rangeKeys     = []string{"from", "to"}
	spotlightKeys = []string{"host", "from", "to"}
)

var sceneIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Parse reads and validates one plan file against the course's lessons
// (a scene may name a lesson step). name is the file's path; the plan's
// id is its base name without .md. Every bad field is reported, each as a
// *FieldError with its line (errors.Join), not only the first.
func Parse(name string, data []byte, lessons []course.Lesson) (Plan, error) {
	d := &decoder{file: name, lessons: lessons}
	p := Plan{ID: idOf(name), File: name}
	front, body, err := course.SplitFrontMatter(data)
	if err != nil {
		return p, &FieldError{File: name, Line: 1, Problem: err.Error()}
	}
	p.Markdown = body
	// The front matter's first line is the file's second (after "---").
	d.offset = 1
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return p, d.yamlError(err)
	}
	if len(doc.Content) == 0 {
		return p, &FieldError{File: name, Line: 2, Problem: "the front matter is empty (want " + strings.Join(planKeys, ", ") + ")"}
	}
	d.plan(&p, doc.Content[0])
	if !sceneIDRE.MatchString(p.ID) {
		d.errs = append(d.errs, &FieldError{File: name, Problem: fmt.Sprintf("file name %q is not a plan id (lower-case letters, digits and -, then .md)", p.ID)})
	}
	if len(course.Placeholders(body)) > 0 {
		d.errs = append(d.errs, &FieldError{File: name, Field: "body", Problem: "has a placeholder; a live number needs a scene's run: put it in that scene's notes"})
	}
	if err := d.err(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// decoder walks the front matter's YAML nodes, collecting every problem
// with its line.
type decoder struct {
	file    string
	offset  int // file line of the front matter's line 0
	lessons []course.Lesson
	errs    []error
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	if len(d.errs) == 1 {
		return d.errs[0]
	}
	return joined(d.errs)
}

// joined is errors.Join whose message puts one error a line.
type joined []error

func (j joined) Error() string {
	var b strings.Builder
	for i, e := range j {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

func (j joined) Unwrap() []error { return j }

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line + d.offset
	}
	d.errs = append(d.errs, &FieldError{File: d.file, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)})
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError is a YAML syntax error with its line in the file.
func (d *decoder) yamlError(err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		line += d.offset
		msg = msg[len(m[0]):]
	}
	return &FieldError{File: d.file, Line: line, Problem: "front matter: " + strings.TrimPrefix(msg, "yaml: ")}
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindWord(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fields reads a mapping: every key among allowed, each once.
func (d *decoder) fields(n *yaml.Node, path string, allowed []string) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "is a %s; want a mapping of %s", kindWord(n), strings.Join(allowed, ", "))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		switch where := join(path, k.Value); {
		case !slices.Contains(allowed, k.Value):
			d.fail(k, where, "unknown field (allowed %s)", strings.Join(allowed, ", "))
		case out[k.Value] != nil:
			d.fail(k, where, "is given twice (first at line %d)", out[k.Value].Line+d.offset)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// str reads a scalar as written ("" for a missing or null one).
func (d *decoder) str(n *yaml.Node, path string) string {
	if n == nil || n.Tag == "!!null" {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "is a %s; want a value", kindWord(n))
		return ""
	}
	return n.Value
}

// required reads a scalar that must be there and not blank; parent is the
// mapping, for the line of a missing one.
func (d *decoder) required(f map[string]*yaml.Node, parent *yaml.Node, path, key, what string) string {
	v := strings.TrimSpace(d.str(f[key], join(path, key)))
	if v == "" && f[key] == nil {
		d.fail(parent, join(path, key), "missing (%s)", what)
	} else if v == "" {
		d.fail(f[key], join(path, key), "is empty (%s)", what)
	}
	return v
}

// integer reads a whole number in [lo, hi] (0 when missing).
func (d *decoder) integer(n *yaml.Node, path string, lo, hi int) int {
	s := d.str(n, path)
	if s == "" {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		d.fail(n, path, "%q is not a whole number from %d to %d", s, lo, hi)
		return 0
	}
	return v
}

// ms reads a time of the run ("40s", "1m30s", "end" where allowEnd).
func (d *decoder) ms(n *yaml.Node, path string, allowEnd bool) course.Ms {
	s := d.str(n, path)
	if s == "" {
		return 0
	}
	v, err := course.ParseMs(s)
	switch {
	case err != nil:
		d.fail(n, path, "%v", err)
	case v == course.End && !allowEnd:
		d.fail(n, path, "cannot be end: name a moment like 40s")
		return 0
	}
	return v
}

// plan reads the top level.
func (d *decoder) plan(p *Plan, n *yaml.Node) {
	f := d.fields(n, "", planKeys)
	if f == nil {
		return
	}
	p.Title = d.required(f, n, "", "title", "the workshop's title")
	p.Summary = d.required(f, n, "", "summary", "one line for the list of plans")
	if f["minutes"] == nil {
		d.fail(n, "minutes", "missing (the workshop's length, 1–600)")
	}
	p.Minutes = d.integer(f["minutes"], "minutes", 1, 600)
	sn := f["scenes"]
	if sn == nil || sn.Kind != yaml.SequenceNode || len(sn.Content) == 0 {
		d.fail(orNode(sn, n), "scenes", "missing (a list of scenes, at least one)")
		return
	}
	seen := map[string]int{}
	total := 0
	for i, item := range sn.Content {
		s := d.scene(item, fmt.Sprintf("scenes[%d]", i))
		if s.ID != "" {
			if first, dup := seen[s.ID]; dup {
				d.fail(item, fmt.Sprintf("scenes[%d].id", i), "%q is already scenes[%d]'s", s.ID, first)
			}
			seen[s.ID] = i
		}
		total += s.Minutes
		p.Scenes = append(p.Scenes, s)
	}
	if p.Minutes > 0 && total > p.Minutes {
		d.fail(f["minutes"], "minutes", "the scenes take %d min, more than the workshop's %d", total, p.Minutes)
	}
}

func orNode(n, parent *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return parent
}

// scene reads and validates one scene; path is "scenes[i]".
func (d *decoder) scene(n *yaml.Node, path string) Scene {
	var s Scene
	f := d.fields(n, path, sceneKeys)
	if f == nil {
		return s
	}
	s.ID = d.required(f, n, path, "id", "lower-case letters, digits and -")
	if s.ID != "" {
		if !sceneIDRE.MatchString(s.ID) {
			d.fail(f["id"], path+".id", "%q is not an id (lower-case letters, digits and -)", s.ID)
		}
		path += " (" + s.ID + ")"
	}
	s.Title = d.required(f, n, path, "title", "what the projector and attendees see")
	if f["minutes"] == nil {
		d.fail(n, path+".minutes", "missing (the time the scene takes, 1–120)")
	}
	s.Minutes = d.integer(f["minutes"], path+".minutes", 1, 120)
	s.Preset = d.str(f["preset"], path+".preset")
	s.Lesson = d.str(f["lesson"], path+".lesson")
	s.Step = d.str(f["step"], path+".step")
	s.Settings = d.strMap(f["settings"], path+".settings")
	s.Inject = d.strList(f["inject"], path+".inject")
	s.Cursor = d.ms(f["cursor"], path+".cursor", true)
	if pn := f["play"]; pn != nil {
		if pf := d.fields(pn, path+".play", rangeKeys); pf != nil {
			if pf["to"] == nil {
				d.fail(pn, path+".play.to", "missing (where the play stops, like 90s or end)")
			}
			s.Play = d.window(pf, path+".play")
		}
	}
	s.Notes = d.str(f["notes"], path+".notes")
	s.ExploreMinutes = d.integer(f["explore_minutes"], path+".explore_minutes", 1, 120)
	if s.Minutes > 0 && s.ExploreMinutes > s.Minutes {
		d.fail(f["explore_minutes"], path+".explore_minutes", "%d is longer than the scene's %d minutes", s.ExploreMinutes, s.Minutes)
	}
	if cn := f["challenge"]; cn != nil {
		s.Challenge = d.str(cn, path+".challenge")
		s.challengeLine = cn.Line + d.offset
		if !sceneIDRE.MatchString(s.Challenge) {
			d.fail(cn, path+".challenge", "%q is not a challenge id (lower-case letters, digits and -: a file name of challenges/ without .md)", s.Challenge)
		}
	}
	if f["cursor"] != nil && f["play"] != nil {
		d.fail(f["play"], path+".play", "give cursor or play, not both")
	}
	if !d.sceneState(&s, f, n, path) {
		return s // the run is unknown: nothing below can be checked
	}
	d.notes(s.Notes, f["notes"], path+".notes")
	d.times(&s, f, path)
	if qn := f["question"]; qn != nil {
		s.Question = d.question(&s, qn, path+".question")
	}
	if sn := f["spotlight"]; sn != nil {
		d.spotlight(&s, sn, path+".spotlight")
	}
	return s
}

// strMap reads settings: a mapping of values, kept as written.
func (d *decoder) strMap(n *yaml.Node, path string) map[string]string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "is a %s; want a mapping of setting: value", kindWord(n))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		where := join(path, k.Value)
		if _, dup := out[k.Value]; dup {
			d.fail(k, where, "is given twice")
			continue
		}
		if v.Kind != yaml.ScalarNode {
			d.fail(v, where, "is a %s; want a value", kindWord(v))
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

// strList reads a list of values (or one value).
func (d *decoder) strList(n *yaml.Node, path string) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "is a %s; want a list like [h3@60s]", kindWord(n))
		return nil
	}
	var out []string
	for i, v := range n.Content {
		out = append(out, d.str(deref(v), fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

// window reads the from and to of a mapping's fields (play, spotlight).
func (d *decoder) window(f map[string]*yaml.Node, path string) *Range {
	r := &Range{From: d.ms(f["from"], path+".from", false), To: d.ms(f["to"], path+".to", true)}
	if r.To != 0 && r.To <= r.From {
		d.fail(f["to"], path+".to", "%s is not after from %s", r.To, r.From)
	}
	return r
}

// sceneState resolves what the scene runs: a preset, or a lesson step,
// with the scene's settings and injections over it. It reports whether
// the run is known.
func (d *decoder) sceneState(s *Scene, f map[string]*yaml.Node, n *yaml.Node, path string) bool {
	var base map[string]string
	preset := s.Preset
	switch {
	case s.Preset != "" && s.Lesson != "":
		d.fail(f["lesson"], path+".lesson", "give preset or lesson, not both")
		return false
	case s.Step != "" && s.Lesson == "":
		d.fail(f["step"], path+".step", "a step needs its lesson")
		return false
	case s.Preset == "" && s.Lesson == "":
		d.fail(n, path+".preset", "missing: give preset (%s) or lesson (and step)", strings.Join(presetNames(), ", "))
		return false
	case s.Lesson != "":
		l, ok := d.lesson(s.Lesson)
		if !ok {
			d.fail(f["lesson"], path+".lesson", "%q is not a lesson (allowed %s)", s.Lesson, strings.Join(d.lessonIDs(), ", "))
			return false
		}
		if s.Step != "" {
			if _, ok := l.StepByID(s.Step); !ok {
				var ids []string
				for _, st := range l.Steps {
					ids = append(ids, st.ID)
				}
				d.fail(f["step"], path+".step", "%q is not a step of lesson %s (allowed %s)", s.Step, l.ID, strings.Join(ids, ", "))
				return false
			}
		}
		// The room loads a lesson step as the lesson's page does: its
		// intended settings (course.Intended), the lesson's start for "".
		st, err := course.Intended(l, s.Step)
		if err != nil {
			d.fail(f["lesson"], path+".lesson", "%v", err)
			return false
		}
		preset, base = st.Preset, st.Settings
	}
	p, ok := scenario.Lookup(preset)
	if !ok {
		d.fail(f["preset"], path+".preset", "%q is not a preset (allowed %s)", preset, strings.Join(presetNames(), ", "))
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(s.Settings)) {
		if _, ok := settings.Lookup(name); !ok {
			d.fail(settingKey(f["settings"], name), path+".settings."+name, "unknown setting (an outlier_detection field by its Envoy name, or a scenario knob)")
			return false
		}
		if name == "inject" {
			d.fail(settingKey(f["settings"], name), path+".settings.inject", "write injected faults as the scene's inject list")
			return false
		}
	}
	set := course.Merge(base, s.Settings)
	if _, _, err := settings.Apply(p, set); err != nil {
		d.fail(orNode(f["settings"], n), path+".settings", "%v", err)
		return false
	}
	if len(s.Inject) > 0 {
		set["inject"] = strings.Join(s.Inject, ",")
	}
	sc, _, err := settings.Apply(p, set)
	if err != nil {
		d.fail(f["inject"], path+".inject", "%v", err)
		return false
	}
	s.State = course.State{Name: s.ID, Preset: preset, Settings: set, Step: s.Step}
	s.Hosts = sc.Cluster.Hosts
	// The run ends at the last detector tick at or before its duration
	// (sim.Cluster.Duration): every frame covers a whole interval.
	if iv := sc.Outlier.IntervalMs; iv > 0 {
		s.EndMs = sc.Cluster.Duration.Milliseconds() / iv * iv
	}
	return true
}

// settingKey is the key node of a setting, for its line.
func settingKey(m *yaml.Node, name string) *yaml.Node {
	for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return m
}

func presetNames() []string {
	var out []string
	for _, p := range scenario.Presets() {
		out = append(out, p.Name)
	}
	return out
}

func (d *decoder) lesson(id string) (course.Lesson, bool) {
	for _, l := range d.lessons {
		if l.ID == id {
			return l, true
		}
	}
	return course.Lesson{}, false
}

func (d *decoder) lessonIDs() []string {
	var out []string
	for _, l := range d.lessons {
		out = append(out, l.ID)
	}
	return out
}

// times checks the cursor and the play range against the run's length.
func (d *decoder) times(s *Scene, f map[string]*yaml.Node, path string) {
	end := fmtS(s.EndMs)
	if s.Cursor != course.End && int64(s.Cursor) > s.EndMs {
		d.fail(f["cursor"], path+".cursor", "%s is after the run's last frame (%s)", s.Cursor, end)
	}
	if r := s.Play; r != nil {
		if int64(r.From) >= s.EndMs {
			d.fail(f["play"], path+".play.from", "%s is not before the run's last frame (%s)", r.From, end)
		}
		if r.To != course.End && int64(r.To) > s.EndMs {
			d.fail(f["play"], path+".play.to", "%s is after the run's last frame (%s)", r.To, end)
		}
	}
}

// opensAt is where the scene's cursor starts.
func (s *Scene) opensAt() int64 {
	switch {
	case s.Play != nil:
		return int64(s.Play.From)
	case s.Cursor == course.End:
		return s.EndMs
	}
	return int64(s.Cursor)
}

// question reads a scene's question.
func (d *decoder) question(s *Scene, n *yaml.Node, path string) *Question {
	f := d.fields(n, path, questionKeys)
	if f == nil {
		return nil
	}
	q := &Question{Kind: d.required(f, n, path, "kind", strings.Join(QuestionKinds, ", "))}
	if q.Kind != "" && !slices.Contains(QuestionKinds, q.Kind) {
		d.fail(f["kind"], path+".kind", "%q is not a kind of question (allowed %s)", q.Kind, strings.Join(QuestionKinds, ", "))
		return nil
	}
	q.Host = d.str(f["host"], path+".host")
	q.Text = strings.TrimSpace(d.str(f["text"], path+".text"))
	q.Answer = strings.TrimSpace(d.str(f["answer"], path+".answer"))
	if f["at"] == nil {
		d.fail(n, path+".at", "missing (the moment asked about, like 40s: the room holds before it)")
	}
	q.At = d.ms(f["at"], path+".at", false)
	if q.At != 0 {
		switch {
		case int64(q.At) > s.EndMs:
			d.fail(f["at"], path+".at", "%s is after the run's last frame (%s)", q.At, fmtS(s.EndMs))
		case int64(q.At) <= s.opensAt():
			d.fail(f["at"], path+".at", "%s is not after the scene's cursor (%s): the room would show the answer before asking", q.At, fmtS(s.opensAt()))
		}
	}
	if f["answer"] == nil {
		d.fail(n, path+".answer", "missing (the answer you expect: plan -check holds it against the engine)")
	}
	hosts := fmt.Sprintf("h0–h%d", s.Hosts-1)
	switch q.Kind {
	case KindEjected:
		switch {
		case q.Host == "":
			d.fail(n, path+".host", "missing (the host asked about, %s)", hosts)
		case !isHost(q.Host, s.Hosts):
			d.fail(f["host"], path+".host", "%q is not a host of this run (allowed %s)", q.Host, hosts)
		}
		if q.Answer != "" && q.Answer != "yes" && q.Answer != "no" {
			d.fail(f["answer"], path+".answer", "%q is not an answer to %q (allowed yes, no)", q.Answer, q.Kind)
		}
	case KindOut:
		if n, err := strconv.Atoi(q.Answer); q.Answer != "" && (err != nil || n < 0 || n > s.Hosts) {
			d.fail(f["answer"], path+".answer", "%q is not a number of hosts (allowed 0–%d)", q.Answer, s.Hosts)
		} else if err == nil {
			q.Answer = strconv.Itoa(n) // as the room's histogram labels it: "01" is 1
		}
	case KindChoice:
		d.choices(q, f, n, path)
	}
	if q.Kind != KindChoice {
		for _, key := range []string{"text", "choices"} {
			if f[key] != nil {
				d.fail(f[key], path+"."+key, "an %s question takes none: the room words it (%s)", q.Kind, (&Question{Kind: q.Kind, Host: q.Host, At: q.At}).Words())
			}
		}
	}
	if q.Kind != KindEjected && f["host"] != nil {
		d.fail(f["host"], path+".host", "an %s question takes no host", q.Kind)
	}
	if q.Kind != KindChoice {
		q.Text = q.Words()
	}
	return q
}

// choices reads a choice question's text and choices.
func (d *decoder) choices(q *Question, f map[string]*yaml.Node, n *yaml.Node, path string) {
	if q.Text == "" {
		d.fail(orNode(f["text"], n), path+".text", "missing (the question as the room reads it)")
	}
	cn := f["choices"]
	if cn == nil || cn.Kind != yaml.SequenceNode || len(cn.Content) < 2 {
		d.fail(orNode(cn, n), path+".choices", "missing (a list of at least 2 choices, each {text, check})")
		return
	}
	for i, item := range cn.Content {
		where := fmt.Sprintf("%s.choices[%d]", path, i)
		cf := d.fields(item, where, choiceKeys)
		if cf == nil {
			continue
		}
		c := Choice{Text: d.required(cf, item, where, "text", "the choice as the room reads it")}
		for j, other := range q.Choices {
			if c.Text != "" && other.Text == c.Text {
				d.fail(cf["text"], where+".text", "%q is already choices[%d]'s", c.Text, j)
			}
		}
		if cf["check"] == nil {
			d.fail(item, where+".check", "missing (the check that holds on the run when this choice is right; engine/course's kinds)")
		} else if err := decodeCheck(cf["check"], &c.Check); err != nil {
			d.fail(cf["check"], where+".check", "%s", err)
		} else if err := c.Check.ValidateAt(where + ".check"); err != nil {
			// ValidateAt's message begins with the path it was given.
			d.fail(cf["check"], "", "%s", err)
		}
		q.Choices = append(q.Choices, c)
	}
	if q.Answer == "" {
		return
	}
	var texts []string
	for _, c := range q.Choices {
		texts = append(texts, c.Text)
	}
	if !slices.Contains(texts, q.Answer) {
		d.fail(f["answer"], path+".answer", "%q is not a choice (allowed %s)", q.Answer, strings.Join(quoteAll(texts), ", "))
	}
}

// decodeCheck reads a check written in YAML the way lessons read theirs:
// through JSON, strictly (an unknown key is an error), so a check means
// the same in a plan as in a lesson.
func decodeCheck(n *yaml.Node, c *course.Check) error {
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// spotlight reads a scene's spotlight.
func (d *decoder) spotlight(s *Scene, n *yaml.Node, path string) {
	f := d.fields(n, path, spotlightKeys)
	if f == nil {
		return
	}
	r := d.window(f, path)
	sp := &Spotlight{Host: d.str(f["host"], path+".host"), From: r.From, To: r.To}
	switch {
	case sp.Host == "" && f["from"] == nil && f["to"] == nil:
		d.fail(n, path, "is empty: give a host, a range (from, to) or both")
	case sp.Host != "" && !isHost(sp.Host, s.Hosts):
		d.fail(f["host"], path+".host", "%q is not a host of this run (allowed h0–h%d)", sp.Host, s.Hosts-1)
	case (f["from"] == nil) != (f["to"] == nil):
		d.fail(n, path, "a range needs both from and to")
	case sp.To != course.End && int64(sp.To) > s.EndMs:
		d.fail(f["to"], path+".to", "%s is after the run's last frame (%s)", sp.To, fmtS(s.EndMs))
	}
	s.Spotlight = sp
}

func isHost(name string, hosts int) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "h"))
	return strings.HasPrefix(name, "h") && err == nil && n >= 0 && n < hosts && "h"+strconv.Itoa(n) == name
}

// fmtS writes milliseconds as the time axis does: "40 s".
func fmtS(ms int64) string { return course.Ms(ms).String() }
