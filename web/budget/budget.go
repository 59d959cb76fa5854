// Package budget admits the lab's heavy work (sweeps, compares, what-if
// replays, heavy lab pages): an estimate refused past its ceiling, then a
// few cores at a time with a short queue (see below).
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"outlierlab/web/httperr"
)

// The lab's heavy work — sweeps, compares and what-if replays, which run
// the engine for up to seconds on one request — passes through one
// budget, made by New and handed to those handlers:
//
//   - before anything runs, the request's work is estimated and refused
//     with a 422 past the ceiling, naming the field to change and the
//     limit: every run of the engine past the ceiling for one run
//     (CheckRun, run.go), a request's runs together past MaxWork
//     (CheckWork);
//   - it then runs on at most Workers cores at once; a request that finds
//     them busy waits in a short queue (Queue requests, Wait each), and
//     past either gets a 503 with Retry-After.
//
// Every run passes CheckRun, the lab's own too (a tab's commands and
// stream, a lesson, a room: the run cache weighs each run it builds), so
// no combination of settings makes a run heavier than one request may
// be. The lab's own runs are not queued for cores: a slider's redraw is
// never queued behind a sweep, and on a small machine one core is always
// left to them (Workers defaults to all cores but one). A lab page
// (GET /lab) whose run is not cached and is heavier than LightRun
// (sliders near their ends) is a page load like a compare's, and is
// admitted as one.

// HostIntervalWork is a what-if replay's work per host at a tick.
//
// Work is counted in units of about 0.1 µs of one core here
// (UnitsPerSecond): a run's are priced from what the engine does
// (CostOf, run.go), a what-if replay's are a unit per line replayed and
// HostIntervalWork per host at a tick (its pass, its frame kept, its
// lane cell drawn). A replay of 2000 hosts × 3600 ticks (72 M units)
// takes 7 s with its charts.
const HostIntervalWork = unitsPerHostTick

// LightRun is the most a lab page's run may cost without the budget's
// cores: every preset as it ships is under 1.6 M units (bad-deploy's
// retries; TestPresetsAreLight); the heaviest run the sliders make
// without retries is 3.3 M.
const LightRun = 2_000_000

// BudgetOptions bounds heavy work. Zero values pick the defaults.
type BudgetOptions struct {
	// MaxWork is the most one request may cost, in work units (default
	// 100 M, some 10 s of one core: a sweep of a few dozen of the lab's
	// heavy runs, or hundreds of search-cache's).
	MaxWork int64
	// MaxRunWork and MaxRunBytes bound one run of the engine, whatever
	// asks for it (default 10 M units, about 1 CPU-s, and 48 MiB: the
	// run kept, its frames, events and log, and its requests in flight).
	MaxRunWork, MaxRunBytes int64
	// RunCacheBytes bounds the runs the lab keeps (default 64 MiB), at
	// least one run of MaxRunBytes (New raises it to that).
	RunCacheBytes int64
	// MaxReplayCells bounds a what-if replay's hosts × ticks, which it
	// keeps and draws (default 250 000: 69 hosts over 10 h at 10 s, a few
	// tens of MiB).
	MaxReplayCells int64
	// Workers is how many cores heavy work uses at once (default all but
	// one, at least one); Queue is how many requests may wait for them
	// (default 8), each at most Wait (default 10 s).
	Workers, Queue int
	Wait           time.Duration
}

// Budget is BudgetOptions at work.
type Budget struct {
	maxWork, MaxCells int64
	maxRunWork        int64
	maxRunBytes       int64
	// RunCacheBytes bounds the run cache (BudgetOptions).
	RunCacheBytes int64
	Workers       int64
	slots         *semaphore.Weighted
	queue         int64
	Waiting       atomic.Int64
	wait          time.Duration
}

func New(o BudgetOptions) *Budget {
	orDefault(&o.MaxWork, 100_000_000)
	orDefault(&o.MaxReplayCells, 250_000)
	orDefault(&o.MaxRunWork, DefaultMaxRunWork)
	orDefault(&o.MaxRunBytes, DefaultMaxRunBytes)
	orDefault(&o.RunCacheBytes, DefaultRunCacheBytes)
	// A run the budget admits is one the cache can keep: a stream redraws
	// from the cache, and a run it could not keep would be made again at
	// every frame.
	o.RunCacheBytes = max(o.RunCacheBytes, o.MaxRunBytes)
	orDefault(&o.Workers, max(1, runtime.GOMAXPROCS(0)-1))
	orDefault(&o.Queue, 8)
	orDefault(&o.Wait, 10*time.Second)
	return &Budget{maxWork: o.MaxWork, MaxCells: o.MaxReplayCells, maxRunWork: o.MaxRunWork, maxRunBytes: o.MaxRunBytes, RunCacheBytes: o.RunCacheBytes, Workers: int64(o.Workers),
		slots: semaphore.NewWeighted(int64(o.Workers)), queue: int64(o.Queue), wait: o.Wait}
}

// orDefault sets an option left at zero (or below) to its default.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// The ceilings of one run: about a second of one core, and 48 MiB, so
// that the run cache (64 MiB) keeps the heaviest run, and a request's
// memory (the run, and what it drops as garbage while it is made) stays
// near 100 MB. Every lesson's step fits (the retry storm's, estimated at
// 45 MiB, is the heaviest; TestLessonStepsWorkInTheLab), and so does the
// heaviest the sliders make without retries (33 MiB).
const (
	DefaultMaxRunWork    = 10_000_000
	DefaultMaxRunBytes   = 48 << 20
	DefaultRunCacheBytes = 64 << 20
)

// OverBudget is work past a ceiling: a 422 (httperr.KindOverBudget)
// naming the field to change.
type OverBudget struct {
	Field string
	Msg   string
}

func (e *OverBudget) Error() string { return e.Field + ": " + e.Msg }

// CheckWork refuses work past MaxWork: what says what it is ("this sweep
// is 105 runs"), hint what would make it smaller.
func (b *Budget) CheckWork(field string, units int64, what, hint string) error {
	if units <= b.maxWork {
		return nil
	}
	return b.Over(field, fmt.Sprintf("%s, %s units of work (allowed up to %s per request: %s)",
		what, Millions(units), Millions(b.maxWork), hint))
}

// Over refuses work past a ceiling, naming the field to change, and counts
// the refusal (MetricHeavy's over_budget): every page that weighs its work
// refuses through here, so the count cannot miss one.
func (b *Budget) Over(field, msg string) error {
	MetricHeavy.WithLabelValues("over_budget").Inc()
	return httperr.WithKind(httperr.KindOverBudget, &OverBudget{Field: field, Msg: msg})
}

// Millions writes a count of units: "2.1 M", "950 k", "120".
func Millions(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " M"
	case n >= 10_000:
		return strconv.FormatInt(n/1000, 10) + " k"
	}
	return strconv.FormatInt(n, 10)
}

// Busy is heavy work turned away: the queue is full, or the wait ran out.
type Busy struct {
	retryAfter time.Duration
	msg        string
}

func (e *Busy) Error() string { return e.msg }

// Admit waits for cores (1 to Workers) for a request's heavy work, in
// the order asked, at most Wait; call release when the work is done.
// A full queue or a wait that runs out is *busy; a request that ends
// while waiting is its context's error.
func (b *Budget) Admit(ctx context.Context, cores int) (release func(), err error) {
	n := min(max(int64(cores), 1), b.Workers)
	release = func() { b.slots.Release(n) }
	if b.slots.TryAcquire(n) {
		MetricHeavy.WithLabelValues("run").Inc()
		return release, nil
	}
	if b.Waiting.Add(1) > b.queue {
		b.Waiting.Add(-1)
		MetricHeavy.WithLabelValues("queue_full").Inc()
		return nil, b.busy(fmt.Sprintf("%d requests are waiting already (allowed %d)", b.queue, b.queue))
	}
	defer b.Waiting.Add(-1)
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.slots.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		MetricHeavy.WithLabelValues("wait_expired").Inc()
		return nil, b.busy(fmt.Sprintf("no core came free within %s (the longest a request waits)", b.wait))
	}
	MetricHeavy.WithLabelValues("queued_run").Inc()
	return release, nil
}

func (b *Budget) busy(why string) *Busy {
	return &Busy{retryAfter: b.wait, msg: fmt.Sprintf(
		"the lab is busy with other heavy work (sweeps, compares, what-if replays: %d at once on this server): %s; try again in %d s",
		b.Workers, why, int(b.wait.Seconds()))}
}

// WriteBusy answers a request turned away: 503 with Retry-After.
func WriteBusy(w http.ResponseWriter, e *Busy) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(e.retryAfter.Seconds())))))
	httperr.Write(w, httperr.WithKind(httperr.KindFull, errors.New(e.msg)), httperr.KindFull)
}

// MetricHeavy counts heavy requests by outcome (the process's; each
// Server registers it).
var (
	MetricHeavy = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outlierlab_heavy_work_total",
		Help: "Heavy requests (sweeps, compares, what-if replays) at the budget, by outcome: run (a core was free), queued_run, queue_full and wait_expired (503), over_budget (422).",
	}, []string{"outcome"})
)

// Refuse answers heavy work the budget did not admit: a 503 with
// Retry-After when the lab is busy; nothing when the visitor left.
func Refuse(w http.ResponseWriter, err error) {
	if b, ok := errors.AsType[*Busy](err); ok {
		WriteBusy(w, b)
	}
}
