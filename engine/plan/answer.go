package plan

import (
	"fmt"
	"strconv"
	"strings"

	"outlierlab/engine/course"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// Words is the question as the room asks it: the room's own words for
// ejected and out (web/room/question Maker.Make writes the same), the
// author's for a choice.
func (q *Question) Words() string {
	switch q.Kind {
	case KindEjected:
		return fmt.Sprintf("Is %s ejected at %s?", q.Host, q.At)
	case KindOut:
		return fmt.Sprintf("How many hosts are ejected at %s?", q.At)
	}
	return q.Text
}

// ChoiceTexts are the answers the room offers, in order: a choice
// question's texts, yes and no for ejected, none for out (the room takes
// a number).
func (q *Question) ChoiceTexts() []string {
	if q.Kind == KindEjected {
		return []string{"yes", "no"} // the room's own (web/room/question Maker.Make)
	}
	var out []string
	for _, c := range q.Choices {
		out = append(out, c.Text)
	}
	return out
}

// Hold is how many frames of run the room shows while it asks about the
// moment atMs: those that close before it (web/room/question
// Maker.Make counts them the same way). It is len(run.Frames) when the
// run ends before the moment.
func Hold(run *scenario.Result, atMs int64) int {
	n := 0
	for _, f := range run.Frames {
		if f.TMs >= atMs {
			break
		}
		n++
	}
	return n
}

// AnswerAt is the engine's answer to a room question of kind ejected (is
// host ejected?) or out (how many hosts are ejected?) about the moment
// atMs: read off the first frame at or after it, the frame the room
// reveals (web/room/question Maker.Answer reads that frame). An answer is
// written as the room's histogram labels it: "yes", "no", "2".
func AnswerAt(run *scenario.Result, kind, host string, atMs int64) (string, error) {
	i := Hold(run, atMs)
	if i >= len(run.Frames) {
		return "", fmt.Errorf("the run ends at %s, before %s", course.Ms(lastMs(run)), course.Ms(atMs))
	}
	f := &run.Frames[i]
	switch kind {
	case KindEjected:
		for _, h := range f.Hosts {
			if h.Name == host {
				if h.Ejected {
					return "yes", nil
				}
				return "no", nil
			}
		}
		return "", fmt.Errorf("no host %s in this run (%d hosts)", host, len(f.Hosts))
	case KindOut:
		n := 0
		for _, h := range f.Hosts {
			if h.Ejected {
				n++
			}
		}
		return strconv.Itoa(n), nil
	}
	return "", fmt.Errorf("%q is not a question read off a frame (allowed %s, %s)", kind, KindEjected, KindOut)
}

func lastMs(run *scenario.Result) int64 {
	if len(run.Frames) == 0 {
		return 0
	}
	return run.Frames[len(run.Frames)-1].TMs
}

// EngineAnswer is the engine's answer to q on run, and what it read. For
// ejected and out it is AnswerAt; for a choice, the one choice whose check
// holds on the whole run (course.Evaluate): a question whose choices hold
// none or several on some run has no answer there, an error naming them.
func (q *Question) EngineAnswer(run *scenario.Result) (answer, detail string, err error) {
	if q.Kind != KindChoice {
		a, err := AnswerAt(run, q.Kind, q.Host, int64(q.At))
		if err != nil {
			return "", "", err
		}
		return a, fmt.Sprintf("the frame at %s", course.Ms(run.Frames[Hold(run, int64(q.At))].TMs)), nil
	}
	var held []int
	var details []string
	for i, c := range q.Choices {
		r := course.Evaluate(c.Check, run, course.WholeRun)
		if r.Pass {
			held = append(held, i)
		}
		details = append(details, fmt.Sprintf("%q: %s", c.Text, r.Detail))
	}
	detail = strings.Join(details, "; ")
	switch len(held) {
	case 1:
		return q.Choices[held[0]].Text, detail, nil
	case 0:
		return "", detail, fmt.Errorf("no choice's check holds (%s)", detail)
	}
	var names []string
	for _, i := range held {
		names = append(names, strconv.Quote(q.Choices[i].Text))
	}
	return "", detail, fmt.Errorf("the checks of %s all hold: a question needs one right choice (%s)", strings.Join(names, " and "), detail)
}

// ClusterYAML is the scene's settings as an Envoy cluster (name: the
// scene's id): its outlier_detection block, the max_retries breaker and
// the panic threshold, every field explicit, as the lab's "Copy as Envoy
// YAML" writes them (envoyconf.ClusterYAML) — what a handout prints.
func (s *Scene) ClusterYAML() (string, error) {
	p, ok := scenario.Lookup(s.State.Preset)
	if !ok {
		return "", fmt.Errorf("%s: unknown preset %q", s.ID, s.State.Preset)
	}
	sc, cfg, err := settings.Apply(p, s.State.Settings)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.ID, err)
	}
	return envoyconf.ClusterYAML(cfg, s.ID, float64(sc.Cluster.HealthyPanicThreshold), sc.Cluster.Retry.MaxRetries), nil
}
