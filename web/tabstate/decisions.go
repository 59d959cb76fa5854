package tabstate

import (
	"fmt"
	"strconv"
	"strings"

	"outlierlab/engine"
	"outlierlab/engine/explain"
	"outlierlab/engine/scenario"
	"outlierlab/web/view"
)

// The decision log says, for every interval, what the detector decided and
// why, with the numbers it compared and the setting that decided: the one
// thing no chart can say. The sentences are the engine's (engine/explain),
// the same ones `run -format text` prints; this file gives each its tone
// and badge, and folds repeated non-events into one line; the template
// sets fields as code and quantities in bold.

// DecisionsOf is every decision of one interval, oldest first.
func DecisionsOf(f *scenario.Frame, cfg engine.Config) []view.LogEntry {
	iv := f.Interval()
	ss := explain.Decisions(&iv, cfg)
	out := make([]view.LogEntry, len(ss))
	for i, s := range ss {
		out[i] = view.LogEntry{Time: FormatMs(s.AtMs), Tone: Tones[s.Outcome], Badge: s.Outcome.Badge(), Parts: s.Spans}
		if Quiet[s.Outcome] {
			out[i].Quiet = true
			out[i].Fold = foldKey(out[i])
		}
	}
	return out
}

// Tones are the log's colours (css/base.css .entry.<tone>), one per outcome.
var Tones = map[explain.Outcome]string{
	explain.Ejected: "eject", explain.Overflow: "overflow",
	explain.DetectOnly: "detect", explain.Degraded: "detect",
	explain.Returned: "return",
	explain.Skipped:  "skip", explain.NotCounted: "skip",
	explain.NoOutlier: "info",
}

// Quiet are the outcomes that decide nothing: a pass skipped or finding
// nobody, a host left out for volume. They fill most of a long run's log,
// so runs of them fold into one line and the "decisions only" filter
// hides them.
var Quiet = map[explain.Outcome]bool{explain.Skipped: true, explain.NotCounted: true, explain.NoOutlier: true}

// foldKey is a quiet entry's words and names without its numbers: "success
// rate: no host of 6 below 93.2%" and "… of 6 below 93.4%" fold together,
// "h3 left out …" and "h4 left out …" do not.
func foldKey(e view.LogEntry) string {
	var b strings.Builder
	b.WriteString(e.Badge)
	for _, p := range e.Parts {
		if p.Kind != explain.Number {
			b.WriteString("|")
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// QuietFrame reports whether an interval decided nothing.
func QuietFrame(log []view.LogEntry) bool {
	for _, e := range log {
		if !e.Quiet {
			return false
		}
	}
	return true
}

// fold is where one entry's run of like non-events starts: the frame and
// the entry's place in it; more says the run goes on in the next frame.
type fold struct {
	Start, Pos int
	more       bool
}

// Folds links the entries of frames [s, to) to their runs. s must start a
// stretch: frame s-1, if any, is not quiet. A quiet entry of a quiet frame
// continues the run of the same Fold in the frame before, if that frame
// is quiet too; anything else starts its own.
func Folds(log [][]view.LogEntry, s, to int) [][]fold {
	out := make([][]fold, to-s)
	prev, cur := map[string]int{}, map[string]int{}
	for i := s; i < to; i++ {
		out[i-s] = make([]fold, len(log[i]))
		q := QuietFrame(log[i])
		clear(cur)
		for j, e := range log[i] {
			f := fold{Start: i, Pos: j}
			if k, ok := prev[e.Fold]; ok && q && !out[i-1-s][k].more {
				p := &out[i-1-s][k]
				p.more = true
				f.Start, f.Pos = p.Start, p.Pos
			}
			out[i-s][j] = f
			if _, dup := cur[e.Fold]; q && !dup {
				cur[e.Fold] = j
			}
		}
		prev, cur = cur, prev
	}
	return out
}

// FoldedLog is the decision log of frames [from, to) as the page shows it,
// newest first, at most limit lines (0: no limit; omitted counts the lines
// left out): a run of like non-events is one line where it ends (or at to,
// if it goes on), its Count the intervals it spans. replaced are the ids of
// lines that began before from and go on past it: the page holds them as
// they were at from, and the stream swaps them for the longer ones.
func FoldedLog(r *Run, from, to, limit int) (lines []view.LogEntry, replaced []string, omitted int) {
	to = min(to, len(r.Log))
	from = min(max(from, 0), to)
	s := from
	for s > 0 && QuietFrame(r.Log[s-1]) {
		s--
	}
	fs := Folds(r.Log, s, to)
	for i := to - 1; i >= from; i-- {
		for j := len(r.Log[i]) - 1; j >= 0; j-- {
			f := fs[i-s][j]
			if f.more {
				continue // shown with the run's newest
			}
			if limit > 0 && len(lines) == limit {
				omitted++
				continue
			}
			lines = append(lines, foldedEntry(r, i, j, f))
			if f.Start < from {
				replaced = append(replaced, lines[len(lines)-1].ID)
			}
		}
	}
	return lines, replaced, omitted
}

// foldedEntry is entry j of frame i as the newest of its run f.
func foldedEntry(r *Run, i, j int, f fold) view.LogEntry {
	e := r.Log[i][j]
	e.ID = "lg-" + Itoa(f.Start) + "-" + Itoa(f.Pos)
	if n := i - f.Start + 1; n > 1 {
		e.Count = n
		e.Time = strings.TrimSuffix(r.Log[f.Start][f.Pos].Time, " s") + "–" + e.Time
	}
	return e
}

// sentence collects the spans of a log entry the engine does not write:
// the lab's own notes (an injected fault).
type sentence struct{ parts []view.Span }

func (s *sentence) text(format string, args ...any) *sentence {
	s.parts = append(s.parts, view.Span{Kind: explain.Text, Text: fmt.Sprintf(format, args...)})
	return s
}

func entry(atMs int64, tone, badge string, s *sentence) view.LogEntry {
	return view.LogEntry{Time: FormatMs(atMs), Tone: tone, Badge: badge, Parts: s.parts}
}

// FormatMs writes milliseconds as seconds: "40 s", "20.1 s", "0.25 s",
// rounded the way the decision log's sentences round (explain.Seconds).
func FormatMs(ms int64) string { return explain.Seconds(ms) + " s" }

// Plural and Pct1 are the page's own number words.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Pct1 writes a percentage (or any rate) with one decimal.
func Pct1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func GroupThousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "\u202f" + s[i:]
	}
	return s
}

// Pct2 is a/b as a percentage with two decimals ("0.00" for b = 0).
func Pct2(a, b uint64) string {
	if b == 0 {
		return "0.00"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 2, 64)
}
