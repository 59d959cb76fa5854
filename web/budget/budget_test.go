package budget

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Work at the ceiling passes; past it, it is refused naming the field,
// what it is, the ceiling and the hint, and the refusal is counted once
// (the pages weigh their work through CheckWork and Over alone).
func TestCheckWork(t *testing.T) {
	b := New(BudgetOptions{MaxWork: 2_000_000})
	over := MetricHeavy.WithLabelValues("over_budget")
	before := testutil.ToFloat64(over)
	if err := b.CheckWork("a", 2_000_000, "two runs", "fewer hosts"); err != nil {
		t.Fatalf("at the ceiling: %v", err)
	}
	err := b.CheckWork("b", 2_100_000, "two runs", "fewer hosts")
	ob, ok := errors.AsType[*OverBudget](err)
	if !ok || ob.Field != "b" || err.Error() != "b: two runs, 2.1 M units of work (allowed up to 2.0 M per request: fewer hosts)" {
		t.Fatalf("past the ceiling: %v", err)
	}
	if got := testutil.ToFloat64(over) - before; got != 1 {
		t.Errorf("over_budget counted %v times, want 1", got)
	}
	if err := b.Over("log", "too many host-ticks"); err.Error() != "log: too many host-ticks" || testutil.ToFloat64(over)-before != 2 {
		t.Errorf("Over: %v, counted %v", err, testutil.ToFloat64(over)-before)
	}
}
