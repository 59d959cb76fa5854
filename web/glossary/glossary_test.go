package glossary_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"outlierlab/engine/course"
	"outlierlab/engine/settings"
	"outlierlab/lessons"
	"outlierlab/web/chart"
	"outlierlab/web/glossary"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// The page renders every term with its anchor, and every setting a term
// names is one of the catalog's, so its default is Envoy's.
func TestGlossaryRenders(t *testing.T) {
	var b bytes.Buffer
	if err := templates.GlossaryPage(glossary.View(view.Layout{Title: "Glossary"})).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(b.String()), " ") // templ spaces its parts
	for _, term := range glossary.Terms() {
		if !strings.Contains(page, `<dt id="`+term.ID+`">`) {
			t.Errorf("the page has no term %q", term.ID)
		}
		for _, f := range term.Fields {
			if _, ok := settings.Lookup(f); !ok {
				t.Errorf("%s names %q, not a setting", term.ID, f)
			}
		}
	}
	for _, want := range []string{"<code>interval</code> (default 10s)", "<code>max_ejection_percent</code> (default 10%)", "<code>healthy_panic_threshold</code> (default 50%) in <code>common_lb_config.healthy_panic_threshold</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q (defaults from the catalog)", want)
		}
	}
}

// lessonTexts are every text of every lesson a learner reads: the body,
// the steps, the prediction and the quiz.
func lessonTexts(t *testing.T) map[string]string {
	t.Helper()
	ls, err := course.Load(lessons.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		parts := []string{l.Markdown, l.Predict.Question, l.Predict.Reveal, strings.Join(l.Predict.Choices, "\n"), l.Summary, strings.Join(l.Goals, "\n")}
		for _, s := range l.Steps {
			parts = append(parts, s.Text)
		}
		for _, q := range l.Quiz {
			parts = append(parts, q.Question, q.Explain, strings.Join(q.Choices, "\n"))
		}
		out[l.ID] = strings.Join(parts, "\n")
	}
	return out
}

// Every lesson links to the glossary, and every term it links to is on the
// page; lesson 1 defines the tick where it first uses the word.
func TestLessonsLinkTerms(t *testing.T) {
	ids := glossary.IDs()
	link := regexp.MustCompile(`\]\(/glossary(?:#([a-z0-9-]+))?\)`)
	for id, text := range lessonTexts(t) {
		ms := link.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			t.Errorf("%s links to no glossary term", id)
		}
		for _, m := range ms {
			if m[1] != "" && !ids[m[1]] {
				t.Errorf("%s links to /glossary#%s, which the glossary does not have", id, m[1])
			}
		}
	}
	first := lessonTexts(t)["consecutive"]
	if i, j := strings.Index(first, "[tick](/glossary#tick)"), strings.Index(first, " tick"); i < 0 || (j >= 0 && j < i) {
		t.Errorf("lesson 1 uses \"tick\" (at %d) before it defines it with a link (at %d)", j, i)
	}
}

// One word for the moment the detector runs: "tick". "Sweep" (the old
// word of the captions and the log, and the name of the /sweep tool) is
// in no lesson, no chart caption and no line of the decision log (the
// explain package's golden logs are the log's lines over real runs).
func TestNoOldWord(t *testing.T) {
	old := regexp.MustCompile(`(?i)\bsweeps?\b`)
	for id, text := range lessonTexts(t) {
		if m := old.FindString(text); m != "" {
			t.Errorf("lesson %s says %q", id, m)
		}
	}
	for _, c := range chart.List {
		if old.MatchString(c.Caption) {
			t.Errorf("chart %s's caption says sweep: %q", c.ID, c.Caption)
		}
	}
	logs, _ := filepath.Glob("../../engine/explain/testdata/golden/*.log")
	if len(logs) == 0 {
		t.Fatal("no golden decision logs found")
	}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := old.Find(b); m != nil {
			t.Errorf("the decision log (%s) says %q", filepath.Base(f), m)
		}
	}
}
