package room

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/starfederation/datastar-go/datastar"

	"outlierlab/engine/challenge"
	"outlierlab/engine/plan"
	"outlierlab/web/room/record"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// challengeView is the challenge panel of the room's scene as role (and
// the attendee who) sees it, and the form of the challenge's unlocked
// settings at who's latest values (nil for the instructor and the
// projector, or with no grader). An empty view off a challenge scene.
func (w *roomWatch) challengeView() (view.RoomChallenge, templ.Component) {
	cur := w.hub.current()
	v := view.RoomChallenge{Code: w.hub.code, Role: w.role}
	id, err := w.s.sceneChallenge(&cur.rec.State)
	if err != nil || w.s.grader == nil {
		return v, nil
	}
	c, ok := w.s.grader.Challenge(id)
	if !ok {
		return v, nil
	}
	lines, mine := w.hub.challengeBoard(id, w.who)
	pick := cur.rec.State.Pick
	w.s.boardView(&v, c, lines, pick)
	if w.role != "follow" {
		return v, nil
	}
	return v, w.s.grader.Fields(id, mine)
}

// boardView fills v, a panel of challenge c, with its ranked lines (the
// scatter of them) and the instructor's pick (nil for none).
func (s *Workshops) boardView(v *view.RoomChallenge, c *challenge.Challenge, lines []boardLine, pick *record.ChallengePick) {
	main := c.MainGoals()
	v.ID, v.Title, v.XGoal, v.YGoal = c.ID, c.Title, main[0], main[1]
	for i, l := range lines {
		v.Entries = append(v.Entries, view.RoomChallengeEntry{Rank: i + 1, Who: l.Who, Mine: l.mine, Passed: l.Passed, Total: l.Total,
			X: boardNum(l.X), Y: boardNum(l.Y), Front: l.Front, Settings: settingsLine(c.Unlocked, l.Settings),
			Spot: pick != nil && pick.Who == l.Who, SpotPath: "/r/" + v.Code + "/challenge/spotlight?who=" + url.QueryEscape(l.Who)})
	}
	if pick != nil && pick.Who != "" {
		v.Spot, v.SpotSettings, v.CompareURL = pick.Who, settingsLine(c.Unlocked, pick.Settings), s.grader.CompareURL(c.ID, pick.Settings)
	}
	if pick != nil && pick.Reference {
		v.Reference = settingsLine(c.Unlocked, c.Reference)
	}
	v.Plot = scatterSVG(lines, v.XGoal, v.YGoal)
}

// recordedBoard is the board of challenge id on scene of plan p as the
// recording's entries kept it (a prefix of them: the board at the last
// one's moment), the pick as the last entry's state had it; nil off a
// challenge scene or without a grader.
func (s *Workshops) recordedBoard(code string, p *plan.Plan, scene int, entries []record.TimelineEntry) *view.RoomChallenge {
	if s.grader == nil || scene < 0 || scene >= len(p.Scenes) || p.Scenes[scene].Challenge == "" {
		return nil
	}
	c, ok := s.grader.Challenge(p.Scenes[scene].Challenge)
	if !ok {
		return nil
	}
	subs := map[string]subEntry{}
	for tag, e := range record.Submissions(entries, p.ID, scene, c.ID) {
		subs[tag] = subEntry{e.Submission, uint64(e.Index)}
	}
	var pick *record.ChallengePick
	if n := len(entries); n > 0 && entries[n-1].State.Plan == p.ID && entries[n-1].State.Scene == scene {
		pick = entries[n-1].State.Pick
	}
	v := &view.RoomChallenge{Code: code}
	s.boardView(v, c, rankBoard(subs, ""), pick)
	return v
}

// recordedBoards are the room's boards of p's challenge scenes, as the
// handout prints them (by scene index): the pick as it stood when the
// room last left the scene.
func (s *Workshops) recordedBoards(code string, p *plan.Plan, entries []record.TimelineEntry) map[int]*view.RoomChallenge {
	out := map[int]*view.RoomChallenge{}
	for i := range p.Scenes {
		last := len(entries)
		for last > 0 && (entries[last-1].State.Plan != p.ID || entries[last-1].State.Scene != i) {
			last--
		}
		if v := s.recordedBoard(code, p, i, entries[:last]); v != nil {
			out[i] = v
		}
	}
	return out
}

// settingsLine is a submission's values, "name=value" in the form's
// order.
func settingsLine(unlocked []string, sub map[string]string) string {
	var set []string
	for _, name := range unlocked {
		if val, ok := sub[name]; ok {
			set = append(set, name+"="+val)
		}
	}
	return strings.Join(set, " ")
}

// sendChallenge patches the challenge panel when what it shows changed.
func (w *roomWatch) sendChallenge(sse *datastar.ServerSentEventGenerator) error {
	v, form := w.challengeView()
	key := fmt.Sprintf("%s|%v|%s|%s|%s", v.ID, v.Entries, v.Spot, v.SpotSettings, v.Reference)
	if key == w.chSent {
		return nil
	}
	w.chSent = key
	return sse.PatchElementTempl(templates.RoomChallengePanel(v, form))
}

// boardNum is a main goal's worst value as the board shows it.
func boardNum(p *float64) string {
	if p == nil {
		return "never"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// The scatter's frame, in SVG user units.
const (
	plotW, plotH = 360.0, 240.0
	plotPad      = 40.0
)

// scatterSVG plots every submission on the two main goals (lower is
// better on both: the best corner is the bottom left), its front joined
// by a line and its points filled. A value never reached (a host never
// ejected in time) sits on the far edge, marked ∞.
func scatterSVG(lines []boardLine, xGoal, yGoal string) view.HTML {
	maxOf := func(get func(boardLine) *float64) float64 {
		m := 0.0
		for _, l := range lines {
			if p := get(l); p != nil {
				m = math.Max(m, *p)
			}
		}
		if m == 0 {
			return 1
		}
		return m * 1.1
	}
	xMax, yMax := maxOf(func(l boardLine) *float64 { return l.X }), maxOf(func(l boardLine) *float64 { return l.Y })
	pos := func(p *float64, max, span float64) float64 {
		if p == nil {
			return span
		}
		return *p / max * span
	}
	type pt struct {
		x, y float64
		l    boardLine
	}
	var pts []pt
	for _, l := range lines {
		pts = append(pts, pt{plotPad + pos(l.X, xMax, plotW-2*plotPad), plotH - plotPad - pos(l.Y, yMax, plotH-2*plotPad), l})
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="room-scatter" viewBox="0 0 %g %g" role="img" aria-label="%d submissions on %s (across) and %s (up); lower is better on both">`,
		plotW, plotH, len(lines), html.EscapeString(xGoal), html.EscapeString(yGoal))
	fmt.Fprintf(&b, `<path class="axes" d="M%g %gV%gH%g" fill="none" stroke="currentColor"/>`, plotPad, plotPad/2, plotH-plotPad, plotW-plotPad/2)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" font-size="11">%s (worst seed) →</text>`, plotW/2, plotH-8, html.EscapeString(xGoal))
	fmt.Fprintf(&b, `<text x="12" y="%g" text-anchor="middle" font-size="11" transform="rotate(-90 12 %g)">%s →</text>`, plotH/2, plotH/2, html.EscapeString(yGoal))
	var front []pt
	for _, p := range pts {
		if p.l.Front {
			front = append(front, p)
		}
	}
	slices.SortFunc(front, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	if len(front) > 1 {
		b.WriteString(`<polyline class="front-line" fill="none" stroke="currentColor" stroke-dasharray="4 3" points="`)
		for i, p := range front {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", p.x, p.y)
		}
		b.WriteString(`"/>`)
	}
	for _, p := range pts {
		class, fill := "pt", "none"
		if p.l.Front {
			class, fill = "pt front", "currentColor"
		}
		if p.l.mine {
			class += " mine"
		}
		fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="currentColor" data-who="%s"><title>%s: %s, %s</title></circle>`,
			class, p.x, p.y, fill, html.EscapeString(p.l.Who), html.EscapeString(p.l.Who), boardNum(p.l.X), boardNum(p.l.Y))
	}
	if slices.ContainsFunc(lines, func(l boardLine) bool { return l.X == nil || l.Y == nil }) {
		fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11">∞</text>`, plotW-plotPad+4, plotH-plotPad+12)
	}
	b.WriteString(`</svg>`)
	return view.HTML(b.String())
}
