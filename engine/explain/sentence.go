// Package explain says in sentences what the outlier detector decided and
// why: every engine.Event (an ejection, a detection the cap or the
// enforcing_* draw refused, a return) and every rate pass that decided
// without one (skipped for volume, ran and found nobody). A sentence is
// data, a list of spans: words, and the values it cites (an Envoy field, a
// number with its unit, a host). The text output (`run -format text`) and
// the web lab's decision log render the same sentences, one as plain text,
// the other as HTML, so a decision reads the same in both.
package explain

import (
	"strconv"
	"strings"
)

// Kind says what a span is.
type Kind uint8

const (
	// Text is words.
	Text Kind = iota
	// Field names an Envoy setting: max_ejection_percent.
	Field
	// Number is a value the sentence cites, printed with the digits that
	// make its comparison readable, and its Unit.
	Number
	// Host names a host: h5.
	Host
)

// Span is one piece of a sentence.
type Span struct {
	Kind Kind
	// Text is the words, the field or host name, or the number as printed
	// ("16.7"), without its unit.
	Text string
	// Unit is a Number's unit: "%", "s" or "" for a count or a ratio.
	Unit string
}

// String is the span as plain text: a percentage sticks to its number
// ("16.7%"), seconds take a space ("30 s").
func (s Span) String() string {
	switch {
	case s.Kind != Number || s.Unit == "":
		return s.Text
	case s.Unit == "%":
		return s.Text + "%"
	}
	return s.Text + " " + s.Unit
}

// Outcome is what a sentence reports, in a word the log shows as a badge
// (colour is never the only cue).
type Outcome uint8

const (
	Ejected    Outcome = iota // detected, admitted by the cap, enforced
	Overflow                  // detected, refused by max_ejection_percent
	DetectOnly                // detected and admitted, not enforced
	Returned                  // back in service (or no longer degraded)
	Degraded                  // marked degraded (detect_degraded_hosts)
	Skipped                   // a rate pass did not run
	NotCounted                // a host left out of success rate for volume
	NoOutlier                 // a rate pass ran and found nobody
)

var badges = [...]string{
	Ejected: "EJECTED", Overflow: "OVERFLOW", DetectOnly: "DETECT ONLY", Returned: "RETURNS",
	Degraded: "DEGRADED", Skipped: "SKIPPED", NotCounted: "NOT COUNTED", NoOutlier: "NO OUTLIER",
}

// Badge is the outcome in capitals: "EJECTED", "DETECT ONLY".
func (o Outcome) Badge() string {
	if int(o) < len(badges) {
		return badges[o]
	}
	return "?"
}

// Sentence is one decision (or one decision not taken) at a time.
type Sentence struct {
	AtMs    int64
	Outcome Outcome
	Spans   []Span
}

// Text is the sentence without its time, as plain text.
func (s Sentence) Text() string {
	var b strings.Builder
	for _, p := range s.Spans {
		b.WriteString(p.String())
	}
	return b.String()
}

// String is the sentence with its time: "40 s: h5 success rate …".
func (s Sentence) String() string { return Seconds(s.AtMs) + " s: " + s.Text() }

// Cited is the sentence's spans of one kind: the fields it names, the
// numbers it quotes.
func (s Sentence) Cited(k Kind) []Span {
	var out []Span
	for _, p := range s.Spans {
		if p.Kind == k {
			out = append(out, p)
		}
	}
	return out
}

// builder collects the spans of one sentence.
type builder struct{ spans []Span }

// text adds words; consecutive words share one span. Numbers are never
// written into words: they go in as spans (num, pct, count, secs).
func (b *builder) text(t string) *builder {
	if n := len(b.spans); n > 0 && b.spans[n-1].Kind == Text {
		b.spans[n-1].Text += t
		return b
	}
	b.spans = append(b.spans, Span{Kind: Text, Text: t})
	return b
}

func (b *builder) field(name string) *builder {
	b.spans = append(b.spans, Span{Kind: Field, Text: name})
	return b
}

func (b *builder) host(name string) *builder {
	b.spans = append(b.spans, Span{Kind: Host, Text: name})
	return b
}

// num adds a number already printed with the digits it needs.
func (b *builder) num(printed, unit string) *builder {
	b.spans = append(b.spans, Span{Kind: Number, Text: printed, Unit: unit})
	return b
}

func (b *builder) pct(printed string) *builder { return b.num(printed, "%") }

func (b *builder) count(n uint64) *builder { return b.num(strconv.FormatUint(n, 10), "") }

func (b *builder) secs(ms int64) *builder { return b.num(Seconds(ms), "s") }

func (b *builder) sentence(atMs int64, o Outcome) Sentence {
	return Sentence{AtMs: atMs, Outcome: o, Spans: b.spans}
}
