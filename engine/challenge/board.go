package challenge

import (
	"cmp"
	"slices"
)

// A room's challenge (the room itself is web/room's, still to come) ranks
// its attendees' submissions and plots them on the challenge's two main
// goals. What is pure of that lives here: a grade's score on a goal, the
// board's order, the Pareto front, and a bound on a room's submissions.

// Worst is a goal's score over a grade's seeds: the largest of its values
// (every goal kind's number is better lower: seconds to eject, failure
// %, hosts out at once, ejections, panicking intervals), +Inf for a host
// never ejected in time on some seed.
func (g *Grade) Worst(ref string) (float64, bool) {
	for _, r := range g.Goals {
		if r.Ref() == ref {
			return worst(r.Values), len(r.Values) > 0
		}
	}
	return 0, false
}

// Entry is one submission on a board.
type Entry struct {
	// Who submitted it (an attendee's name); Seq orders submissions.
	Who string
	Seq int
	// Passed is how many goals held on every seed, of Total.
	Passed, Total int
	// X and Y are the submission's Worst on the challenge's two main goals.
	X, Y float64
	// Front marks an entry no other entry beats on both axes (Pareto).
	Front bool
}

// NewEntry scores a grade on the challenge's main goals (its first two
// goals when the file names none).
func (c *Challenge) NewEntry(who string, seq int, g *Grade) Entry {
	e := Entry{Who: who, Seq: seq, Total: len(g.Goals), Passed: len(g.Goals) - len(g.Failed())}
	main := c.MainGoals()
	e.X, _ = g.Worst(main[0])
	e.Y, _ = g.Worst(main[1])
	return e
}

// MainGoals are the two goals a board plots: Main, else the battery's
// first two (the first twice in a battery of one goal).
func (c *Challenge) MainGoals() [2]string {
	if len(c.Main) == 2 {
		return [2]string{c.Main[0], c.Main[1]}
	}
	var refs []string
	for _, s := range c.Scenarios {
		for _, g := range s.Goals {
			refs = append(refs, s.ID+"/"+g.ID)
		}
	}
	if len(refs) == 1 {
		refs = append(refs, refs[0])
	}
	return [2]string{refs[0], refs[1]}
}

// dominates: a is no worse than b on both axes and better on one.
func dominates(a, b Entry) bool {
	return a.X <= b.X && a.Y <= b.Y && (a.X < b.X || a.Y < b.Y)
}

// Rank orders a board and marks its Pareto front: more goals passed
// first, then the front before the rest, then the lower X, the lower Y,
// the earlier submission.
func Rank(entries []Entry) []Entry {
	out := slices.Clone(entries)
	for i := range out {
		out[i].Front = true
		for j := range out {
			if i != j && dominates(out[j], out[i]) {
				out[i].Front = false
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if a.Passed != b.Passed {
			return b.Passed - a.Passed
		}
		if a.Front != b.Front {
			if a.Front {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y), a.Seq-b.Seq)
	})
	return out
}

// Board is a room's submissions, bounded: each attendee's latest counts,
// and past Max attendees a new one is refused (Add says so).
type Board struct {
	Max     int
	entries []Entry
}

// Add puts e on the board in place of its author's earlier submission;
// false when the board holds Max others already.
func (b *Board) Add(e Entry) bool {
	if i := slices.IndexFunc(b.entries, func(o Entry) bool { return o.Who == e.Who }); i >= 0 {
		b.entries[i] = e
		return true
	}
	if len(b.entries) >= b.Max {
		return false
	}
	b.entries = append(b.entries, e)
	return true
}

// Ranked is the board in order, its front marked.
func (b *Board) Ranked() []Entry { return Rank(b.entries) }
