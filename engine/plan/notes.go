package plan

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"outlierlab/engine/course"
	"outlierlab/engine/scenario"
)

// Number is a number a scene's notes state about the run.
//
// A scene's notes are the instructor's script. A number they give about
// the run is written as a lesson's placeholder, so it is the run's own
// ({{threshold@40s}}: the present page shows the room's value), or as a
// stated number, a placeholder with the value the notes commit to:
//
//	{{ejected_count@40s = 1}}          exactly this (as the placeholder prints it)
//	{{failure_pct@30s-end = 0.5..1.5}} within this band (inclusive; "–" works too)
//
// The present page shows the run's value either way; `plan -check` fails
// when, for some seed, a stated number is not what the run shows, or a
// placeholder does not resolve (a sentence with a dash in it), and when
// the notes write a number as plain text (Literals).
type Number struct {
	// Raw is the text between the braces.
	Raw         string
	Placeholder course.Placeholder
	// Stated is the value written after "=" ("" for a live number);
	// Min/Max are set when it is a band.
	Stated   string
	Min, Max *float64
}

// ParseNumber reads the inside of a {{...}} in notes.
func ParseNumber(raw string) (Number, error) {
	n := Number{Raw: strings.TrimSpace(raw)}
	ph, stated, isStated := strings.Cut(n.Raw, "=")
	p, err := course.ParsePlaceholder(ph)
	if err != nil {
		return n, err
	}
	n.Placeholder = p
	if !isStated {
		return n, nil
	}
	n.Stated = strings.TrimSpace(stated)
	if n.Stated == "" {
		return n, errors.New(`nothing stated after "=" (a value like 52.3, or a band like 0.5..1.5)`)
	}
	lo, hi, isBand := strings.Cut(strings.ReplaceAll(n.Stated, "–", ".."), "..")
	if !isBand {
		return n, nil
	}
	a, errA := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, errB := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if errA != nil || errB != nil || b < a {
		return n, fmt.Errorf("%q is not a band like 0.5..1.5 (two numbers, the lower first)", n.Stated)
	}
	n.Min, n.Max = &a, &b
	return n, nil
}

// Numbers are the numbers of a scene's notes, in order.
func (s *Scene) Numbers() []Number {
	var out []Number
	for _, raw := range course.Placeholders(s.Notes) {
		if n, err := ParseNumber(raw); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Holds resolves the number on run (the whole run: the instructor's notes
// may speak of what the room has not played yet) and reports whether the
// run shows what the notes state; got is the run's value as the page
// prints it.
func (n Number) Holds(run *scenario.Result) (ok bool, got string, err error) {
	got, err = n.Placeholder.Resolve(run, course.WholeRun)
	if err != nil {
		return false, "", err
	}
	if got == course.Dash {
		return false, got, errors.New("shows a dash on this run (nothing to show)")
	}
	if n.Stated == "" {
		return true, got, nil
	}
	v, numErr := strconv.ParseFloat(strings.TrimSuffix(got, " s"), 64)
	if n.Min != nil {
		return numErr == nil && v >= *n.Min && v <= *n.Max, got, nil
	}
	if w, err := strconv.ParseFloat(strings.TrimSuffix(n.Stated, " s"), 64); err == nil && numErr == nil {
		return v == w, got, nil
	}
	return got == n.Stated, got, nil
}

// A number the notes write as plain text is checked by nothing: it says
// "h5 returns at 70 s" whatever the run does. So plan -check fails a
// scene whose notes write one outside a placeholder (Literals): a number
// about the run is a placeholder, stated ({{hosts = 6}}) or live, and a
// formula's constants go in code (`100 × (0 + 1) / 6`). A digit inside a
// name is not a number (h5, 5xx, p99, consecutive5xxErrors).
var (
	placeholderOrCode = regexp.MustCompile("(?s)\\{\\{.*?\\}\\}|`[^`]*`")
	literalNumber     = regexp.MustCompile(`(?:^|[^\pL\pN_./\-])(\d+(?:\.\d+)?(?: ?(?:s|ms|%))?)(?:[^\pL\pN_]|$)`)
)

// Literals are the numbers the notes write as plain text (outside
// placeholders and code), in order: "30 s", "100", "33.3%".
func Literals(notes string) []string {
	text := placeholderOrCode.ReplaceAllString(notes, " ")
	var out []string
	// Matches may share the character between two numbers ("0 + 1"):
	// look again from each number's end.
	for len(text) > 0 {
		m := literalNumber.FindStringSubmatchIndex(text)
		if m == nil {
			break
		}
		out = append(out, text[m[2]:m[3]])
		text = text[m[3]:]
	}
	return out
}

// literalsLine is the verdict on a scene's notes' plain-text numbers.
func literalsLine(p *Plan, s *Scene) Line {
	l := Line{Plan: p.ID, Scene: s.ID, What: "notes' plain-text numbers", OK: true, Detail: "none: every number is a placeholder"}
	if lits := Literals(s.Notes); len(lits) > 0 {
		l.OK = false
		l.Detail = fmt.Sprintf("%s written as text, checked by nothing: write a number about the run as a placeholder, stated ({{hosts = 6}}) or live, and a formula in code (`100 × (0 + 1) / 6`)",
			strings.Join(quoteAll(lits), ", "))
	}
	return l
}

// NotesOn is the scene's notes with every number resolved on run (the
// room's run): what the present page shows. One that cannot be resolved
// shows course.Dash.
func (s *Scene) NotesOn(run *scenario.Result) string {
	return course.ExpandRaw(s.Notes, func(raw string) string {
		n, err := ParseNumber(raw)
		if err != nil {
			return "{{" + raw + "}}"
		}
		v, err := n.Placeholder.Resolve(run, course.WholeRun)
		if err != nil {
			return course.Dash
		}
		return v
	})
}

// notes checks the notes' numbers parse (their values are checked on the
// runs, by Report).
func (d *decoder) notes(text string, n *yaml.Node, path string) {
	for _, raw := range course.Placeholders(text) {
		if _, err := ParseNumber(raw); err != nil {
			d.fail(n, path, "{{%s}}: %v", raw, err)
		}
	}
	if strings.Count(text, "{{") != strings.Count(text, "}}") {
		d.fail(n, path, "unbalanced {{ }}")
	}
}
