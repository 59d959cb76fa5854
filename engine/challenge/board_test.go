package challenge

import (
	"math"
	"testing"
)

// The front: no entry beats a front entry on both axes; ties on one axis
// and better on the other dominate; equal points are both on the front.
// The order: goals passed, front first, then X, Y and who came first.
func TestRank(t *testing.T) {
	in := []Entry{
		{Who: "a", Seq: 1, Passed: 3, X: 10, Y: 2},
		{Who: "b", Seq: 2, Passed: 3, X: 20, Y: 1},
		{Who: "c", Seq: 3, Passed: 3, X: 20, Y: 2}, // beaten by a and by b
		{Who: "d", Seq: 4, Passed: 2, X: 5, Y: 5},  // on the front, fewer goals
		{Who: "e", Seq: 5, Passed: 3, X: 10, Y: 2}, // equal to a: both on the front
		{Who: "f", Seq: 6, Passed: 1, X: math.Inf(1), Y: 0},
	}
	got := Rank(in)
	var order, front string
	for _, e := range got {
		order += e.Who
		if e.Front {
			front += e.Who
		}
	}
	if order != "aebcdf" || front != "aebdf" {
		t.Errorf("order %s front %s; want aebcdf, front aebdf", order, front)
	}
}

// A board keeps each author's latest and refuses a new author past Max.
func TestBoard(t *testing.T) {
	b := Board{Max: 2}
	if !b.Add(Entry{Who: "a", X: 5}) || !b.Add(Entry{Who: "b", X: 6}) || !b.Add(Entry{Who: "a", X: 1}) {
		t.Fatal("refused within the bound")
	}
	if b.Add(Entry{Who: "c"}) {
		t.Error("a third author on a board of two")
	}
	if r := b.Ranked(); len(r) != 2 || r[0].Who != "a" || r[0].X != 1 {
		t.Errorf("%+v; want a's latest first", r)
	}
}

// A grade's worst value on a goal, and the entry made of the main goals.
func TestNewEntry(t *testing.T) {
	c := &Challenge{Main: []string{"s/x", "s/y"}}
	g := &Grade{Goals: []GoalResult{
		{Scenario: "s", Goal: "x", Runs: 2, Passed: 2, Values: []float64{10, 20}},
		{Scenario: "s", Goal: "y", Runs: 2, Passed: 1, Values: []float64{0, 3}},
	}}
	e := c.NewEntry("ann", 7, g)
	if e.X != 20 || e.Y != 3 || e.Passed != 1 || e.Total != 2 || e.Who != "ann" {
		t.Errorf("%+v", e)
	}
	c.Main = nil
	c.Scenarios = []Scenario{{ID: "s", Goals: []Goal{{ID: "x"}}}}
	if m := c.MainGoals(); m != [2]string{"s/x", "s/x"} {
		t.Errorf("main goals of a one-goal battery: %v", m)
	}
}
