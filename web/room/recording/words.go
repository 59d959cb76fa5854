package recording

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"outlierlab/web/room/record"
	"outlierlab/web/tabstate"
)

// DescribeEntry is an entry in words, for the page and `room replay`.
func DescribeEntry(raw json.RawMessage) (string, error) {
	var e record.TimelineEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", err
	}
	return describeEntry(&e), nil
}

func describeEntry(e *record.TimelineEntry) string {
	st := &e.State
	where := "preset " + st.Preset
	if st.Lesson != "" {
		where = "lesson " + st.Lesson
		if st.Step != "" {
			where += " step " + st.Step
		}
	}
	play := "paused"
	if st.Playing {
		play = "playing ×" + st.Speed
	}
	s := fmt.Sprintf("%s, %s at frame %d", where, play, st.Anchor)
	if sc := e.Scene; sc != nil {
		s = fmt.Sprintf("scene %d of %d (%s), ", sc.N, sc.Of, sc.ID) + s
	}
	if len(st.Cfg) > 0 {
		names := slices.Sorted(maps.Keys(st.Cfg))
		set := make([]string, len(names))
		for i, n := range names {
			set[i] = n + "=" + strconv.FormatFloat(st.Cfg[n], 'f', -1, 64)
		}
		s += ", settings " + strings.Join(set, " ")
	}
	if st.Inject != "" {
		s += ", faults " + st.Inject
	}
	if q := st.Question; q != nil && (e.Kind == "question" || e.Kind == "reveal") {
		s += "; question " + q.Text
		if q.Revealed {
			bars := make([]string, len(q.Hist))
			for i, b := range q.Hist {
				bars[i] = fmt.Sprintf("%s %d", b.Answer, b.N)
			}
			s += fmt.Sprintf(" — engine: %s; room: %s", q.Answer, strings.Join(bars, ", "))
		}
	}
	if st.Lock {
		s += "; locked"
	}
	return s + exploreState(st)
}

func fmtElapsed(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// narrate is entry e in words, as the player shows it, from what changed
// since prev (nil for the first): "Instructor set max_ejection_percent to
// 34", "Question: Is h5 ejected at 60 s? — revealed: no (19 yes / 11
// no)". at is the room's cursor at an entry, as a time ("40 s").
func narrate(prev, e *record.TimelineEntry, at func(*record.TimelineEntry) string) string {
	if words, ok := kindWords(e, at); ok {
		return words
	}
	if prev == nil {
		return describeEntry(e)
	}
	did := changes(&prev.State, &e.State, func() string { return at(e) })
	if len(did) == 0 {
		return "Instructor's page at " + at(e) + " (no change)"
	}
	return "Instructor " + strings.Join(did, ", ")
}

// kindWords is the sentence of an entry whose kind says it all (a start,
// a question, a reveal, a summon, a lock, a spotlight, the attendees a
// network may have).
func kindWords(e *record.TimelineEntry, at func(*record.TimelineEntry) string) (string, bool) {
	if words, ok := record.SceneWords(e, at); ok {
		return words, true
	}
	if words, ok := record.ExploreWords(e); ok {
		return words, true
	}
	st := &e.State
	q := st.Question
	switch e.Kind {
	case "start":
		return "The workshop started on " + record.WhereOf(st) + ", " + record.PlayOf(st) + " at " + at(e), true
	case "question":
		if q != nil {
			return "Question: " + q.Text + " — the room waits before " + tabstate.FormatMs(q.AtMs) + " for the answers", true
		}
	case "reveal":
		if q != nil {
			return "Question: " + q.Text + " — revealed: " + q.Answer + " (" + histWords(q.Hist) + ")", true
		}
	case "submission":
		if sub := e.Submission; sub != nil {
			return fmt.Sprintf("%s submitted settings to challenge %s: %d of %d goals hold", sub.Nick, sub.Challenge, sub.Passed, sub.Total), true
		}
	case "summon":
		return "Instructor brought everyone back to the room", true
	case "identities":
		if st.IDsPerAddress > 0 {
			return fmt.Sprintf("Instructor let each network have up to %d attendees", st.IDsPerAddress), true
		}
	case "lock":
		if st.Lock {
			return "Instructor locked the room: attendees follow and cannot break away", true
		}
		return "Instructor unlocked the room", true
	case "spotlight":
		switch sp := st.Spot; {
		case sp == nil || sp.Host == "" && sp.To == 0:
			return "Instructor cleared the spotlight", true
		case sp.Host != "":
			return "Spotlight on host " + sp.Host, true
		default:
			return "Spotlight on " + tabstate.FormatMs(int64(sp.From*1000)) + "–" + tabstate.FormatMs(int64(sp.To*1000)), true
		}
	}
	return "", false
}

// changes are what the instructor did from state ps to st, in words;
// at is the moment of st.
func changes(ps, st *record.State, at func() string) []string {
	var did []string
	switch {
	case st.Lesson != ps.Lesson:
		did = append(did, "moved the room to "+record.WhereOf(st))
	case st.Step != ps.Step:
		step := st.Step
		if step == "" {
			step = "the lesson's own scenario"
		}
		did = append(did, "went to step "+step)
	case st.Preset != ps.Preset:
		did = append(did, "switched to preset "+st.Preset)
	}
	for _, k := range sortedKeys(st.Cfg, ps.Cfg) {
		v, ok := st.Cfg[k]
		old, had := ps.Cfg[k]
		switch {
		case !ok:
			did = append(did, "reset "+k+" to its default")
		case !had || v != old:
			did = append(did, fmt.Sprintf("set %s to %g", k, v))
		}
	}
	if st.Inject != ps.Inject {
		if st.Inject == "" {
			did = append(did, "removed the injected faults")
		} else {
			did = append(did, "set the injected faults to "+st.Inject)
		}
	}
	if st.Speed != ps.Speed {
		did = append(did, "set the speed to "+record.SpeedWords(st.Speed))
	}
	switch {
	case st.Playing && !ps.Playing:
		did = append(did, "pressed play at "+at())
	case !st.Playing && ps.Playing:
		did = append(did, "paused at "+at())
	case !st.Playing && st.Anchor != ps.Anchor:
		// Paused, the anchor is the cursor (a scrub, a step); playing, a
		// new anchor only restarts the clock (a speed change).
		did = append(did, "moved the cursor to "+at())
	}
	if st.Predicted && !ps.Predicted {
		did = append(did, "answered the lesson's prediction")
	}
	return did
}

// histWords is a histogram in words: "19 yes / 11 no".
func histWords(h []record.HistBar) string {
	if len(h) == 0 {
		return "no answers"
	}
	parts := make([]string, len(h))
	for i, b := range h {
		if _, err := strconv.Atoi(b.Answer); err == nil {
			parts[i] = fmt.Sprintf("%d said %s", b.N, b.Answer) // "19 3" would read as one number
		} else {
			parts[i] = fmt.Sprintf("%d %s", b.N, b.Answer)
		}
	}
	return strings.Join(parts, " / ")
}

func sortedKeys(a, b map[string]float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]float64{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// exploreState is a running explore timer in words ("" for none).
func exploreState(st *record.State) string {
	if x := st.Explore; x != nil {
		return fmt.Sprintf("; a %d-minute explore to %s", x.Minutes, time.UnixMilli(x.EndMs).UTC().Format("15:04:05 UTC"))
	}
	return ""
}
