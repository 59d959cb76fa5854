package budget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/engine/sim"
)

// Every run of the engine a request makes — a lab page, a tab's command,
// a room's, a lesson's, a compare's sides, a sweep's points, a handout's
// scenes, the dialect strip's twin — is weighed here before it starts
// (CheckRun, through the run cache's build for all but the sweep and the
// twin), and refused with a 422 past the ceiling for one run: its CPU
// work and its memory. The weight is the engine's own estimate of what
// the run will do (sim.Weigh: requests and their retries, shedding,
// timeouts, the balancer's picks, health checks, detector events,
// hosts × ticks), priced here in units and bytes.

// Cost is what a run takes: Units of work (≈ 0.1 µs of one core here,
// the budget's unit) and Bytes of memory (the run kept: its frames, their
// events and its decision log; and its requests in flight meanwhile).
type Cost struct {
	Units, Bytes int64
}

// The prices of what a run does, in units, measured on this machine
// (2 cores; BenchmarkRunCost reports ns per unit for runs of each kind:
// 50–95 at a load average of 12, so the prices err high): a run's engine
// CPU (scenario.Run) and what the lab derives from it (tabstate.BuildRun:
// the decision log). TestRunCostAtExtremes holds every extreme run's
// work, priced, to its estimate.
const (
	// An attempt through the event loop: its host picked, its latency
	// drawn, its report to the detector (a success batched costs a
	// third of it, a failure with its queue round trip all of it); a
	// retry as much again (the retry state, its backoff through the
	// queue, a second dispatch).
	unitsPerAttempt = 1
	unitsPerRetry   = 1
	// A pick's random draws: least request samples two hosts and
	// compares them; random draws one; round robin none.
	unitsPerLeastRequestPick = 0.3
	unitsPerRandomPick       = 0.1
	unitsPerCheck            = 3
	// An event due past the event ring's half second (a queue's wait, a
	// slow host, a hang): a heap's push and pop, 0.25–0.3 µs with tens of
	// thousands waiting.
	unitsPerFarEvent = 3
	// A detector event: made, copied into its frame, scanned by the log.
	unitsPerEvent = 6
	// A host visited rebuilding the balancer's host sets.
	unitsPerRebuild = 0.05
	// A host at a tick: its detector pass and its row in the frame.
	unitsPerHostTick = 10
	unitsPerSlot     = 1
	// A sentence of the decision log (tabstate.DecisionsOf): 2–3 µs for
	// a host left out for volume, up to 6 µs for a cap's refusals told
	// with their numbers.
	unitsPerLogLine = 30
)

// Bytes a run keeps per thing, and holds while it runs (a request in
// flight, an event pending).
const (
	bytesPerFrame    = int64(unsafe.Sizeof(scenario.Frame{})) + 32 // its time label
	bytesPerHostTick = int64(unsafe.Sizeof(scenario.HostFrame{}))
	bytesPerEvent    = int64(unsafe.Sizeof(engine.Event{}))
	// A sentence of the log: its entry, its spans and their words
	// (620 B for a host left out, 1060 B for a cap's refusal).
	bytesPerLeftOutLine = 700
	bytesPerLogLine     = 1100
	// A request's slot (64 B) and an event's node (16 B), twice: their
	// slices grow by doubling.
	bytesPerSlot      = 128
	bytesPerQueueNode = 32
)

// CostOf prices a run's work (sim.Work, estimated or done) on cluster c.
func CostOf(w sim.Work, c sim.Cluster) Cost {
	hosts := float64(max(c.Hosts, 1))
	leftOut, other := LogLines(w, c.Hosts)
	lines := leftOut + other
	pick := 0.0
	switch c.LB {
	case sim.LeastRequest:
		pick = unitsPerLeastRequestPick
	case sim.Random:
		pick = unitsPerRandomPick
	}
	retries := max(0, f(w.Attempts)-f(w.Arrivals))
	units := unitsPerAttempt*f(w.Attempts) + unitsPerRetry*retries + pick*f(w.Picks) + unitsPerCheck*f(w.HealthChecks) +
		unitsPerEvent*f(w.Events) + unitsPerRebuild*f(w.Rebuilds) + unitsPerHostTick*f(w.HostTicks) +
		unitsPerSlot*f(w.Slots) + unitsPerFarEvent*f(w.FarEvents) + unitsPerLogLine*lines
	bytes := float64(bytesPerFrame)*f(w.HostTicks)/hosts + float64(bytesPerHostTick)*f(w.HostTicks) +
		float64(bytesPerEvent)*f(w.Events) + bytesPerLeftOutLine*leftOut + bytesPerLogLine*other +
		bytesPerSlot*f(w.Slots) + bytesPerQueueNode*f(w.QueueNodes)
	return Cost{Units: clamp(units), Bytes: clamp(bytes)}
}

// LogLines bounds the decision log of a run that did w (tabstate's
// DecisionsOf, from explain.Decisions): each frame has at most a line per
// host left out of success rate (one that had some requests, too few),
// a summary per pass (two per origin), and a line per event, but that the
// repeats of a consecutive streak's refusal fold into one per host, kind
// and detector in an interval (a few per host that failed there).
func LogLines(w sim.Work, hosts int) (leftOut, other float64) {
	ht := f(w.HostTicks)
	frames := ht / float64(max(hosts, 1))
	// A host's refusals in an interval fold by kind (overflow, detect)
	// and detector (5xx, gateway): four lines.
	streaks := min(f(w.Streaks), 4*f(w.FailingHostTicks))
	return min(ht, f(w.Attempts)), 4*frames + streaks + max(0, f(w.Events)-f(w.Streaks))
}

func f(n uint64) float64 { return float64(n) }

func clamp(v float64) int64 { return int64(min(max(v, 0), math.MaxInt64/4)) }

// Weigh is a run's cost before it runs: the engine's estimate of its
// work (sim.Weigh), priced.
func Weigh(sc scenario.Scenario, cfg engine.Config) Cost {
	return CostOf(sim.Weigh(sc.Cluster, cfg), sc.Cluster)
}

// RunWork is a run's estimated units of work: sums of runs (a sweep, a
// compare) are held to MaxWork with it.
func RunWork(sc scenario.Scenario, cfg engine.Config) int64 { return Weigh(sc, cfg).Units }

// defaultBudget is the budget of a caller that has none (a run cache
// made in a test): every run is weighed all the same.
var defaultBudget = New(BudgetOptions{})

// CheckRun is the one gate every run of the engine a request makes
// passes before it starts: past the ceiling for one run (MaxRunWork
// units, MaxRunBytes bytes) it is refused with a 422 that names the
// setting to change and a value that fits. A nil budget is the default
// one.
func (b *Budget) CheckRun(sc scenario.Scenario, cfg engine.Config) error {
	if b == nil {
		b = defaultBudget
	}
	c := Weigh(sc, cfg)
	if b.fits(c) {
		return nil
	}
	field, fix := b.suggest(sc, cfg)
	return b.Over(field, fmt.Sprintf("this run would take about %s of work and %s (one run may take up to %s and %s here): %s",
		cpuSeconds(c.Units), mib(c.Bytes), cpuSeconds(b.maxRunWork), mib(b.maxRunBytes), fix))
}

func (b *Budget) fits(c Cost) bool { return c.Units <= b.maxRunWork && c.Bytes <= b.maxRunBytes }

// cpuSeconds writes units as the time they take: "1.4 CPU-s".
func cpuSeconds(units int64) string {
	return strconv.FormatFloat(float64(units)/UnitsPerSecond, 'f', 1, 64) + " CPU-s"
}

// UnitsPerSecond is how many units one core does in a second here.
const UnitsPerSecond = 1e7

func mib(bytes int64) string {
	return strconv.FormatFloat(float64(bytes)/(1<<20), 'f', 0, 64) + " MiB"
}

// lever is a setting that makes a run lighter one way: the value nearest
// the run's own that fits is what a refusal suggests.
type lever struct {
	setting string // the catalog's name
	get     func(*scenario.Scenario, *engine.Config) float64
	set     func(*scenario.Scenario, *engine.Config, float64)
	// light is the lightest value the lab's control takes; step the
	// control's step (a suggestion is a value the control can hold).
	light, step float64
	// applies says whether the lever can lighten this run at all.
	applies func(*scenario.Scenario, *engine.Config) bool
}

// levers, in the order a refusal names them: what multiplies the work
// (retries, shedding), then the run's size.
var levers = []lever{
	{setting: "retries", light: 0, step: 1,
		get: func(sc *scenario.Scenario, _ *engine.Config) float64 { return float64(sc.Cluster.Retry.NumRetries) },
		set: func(sc *scenario.Scenario, _ *engine.Config, v float64) { sc.Cluster.Retry.NumRetries = uint32(v) }},
	{setting: "max_retries", light: 3, step: 1,
		get: func(sc *scenario.Scenario, _ *engine.Config) float64 { return float64(sc.Cluster.Retry.MaxRetries) },
		set: func(sc *scenario.Scenario, _ *engine.Config, v float64) { sc.Cluster.Retry.MaxRetries = uint32(v) },
		applies: func(sc *scenario.Scenario, _ *engine.Config) bool {
			return !sc.Cluster.Retry.Budget && sc.Cluster.Retry.NumRetries > 0
		}},
	// Capacity is lighter the higher it is (0 is unlimited, lightest).
	{setting: "capacity_rps", light: 2000, step: 10,
		get:     func(sc *scenario.Scenario, _ *engine.Config) float64 { return sc.Cluster.CapacityRPS },
		set:     func(sc *scenario.Scenario, _ *engine.Config, v float64) { sc.Cluster.CapacityRPS = v },
		applies: func(sc *scenario.Scenario, _ *engine.Config) bool { return sc.Cluster.CapacityRPS > 0 }},
	{setting: "rps", light: 10, step: 10,
		get: func(sc *scenario.Scenario, _ *engine.Config) float64 { return sc.Cluster.RPS },
		set: func(sc *scenario.Scenario, _ *engine.Config, v float64) { sc.Cluster.RPS = v }},
	{setting: "hosts", light: 1, step: 1,
		get: func(sc *scenario.Scenario, _ *engine.Config) float64 { return float64(sc.Cluster.Hosts) },
		set: func(sc *scenario.Scenario, _ *engine.Config, v float64) { sc.Cluster.Hosts = int(v) }},
	{setting: "interval", light: 60, step: 1,
		get: func(_ *scenario.Scenario, cfg *engine.Config) float64 { return float64(cfg.IntervalMs) / 1000 },
		set: func(_ *scenario.Scenario, cfg *engine.Config, v float64) {
			cfg.IntervalMs, cfg.IntervalSubMsNs = int64(v*1000), 0
		}},
	{setting: "hc_interval", light: 60, step: 1,
		get: func(sc *scenario.Scenario, _ *engine.Config) float64 {
			return sc.Cluster.HealthCheck.Interval.Seconds()
		},
		set: func(sc *scenario.Scenario, _ *engine.Config, v float64) {
			sc.Cluster.HealthCheck.Interval = time.Duration(v * float64(time.Second))
		},
		applies: func(sc *scenario.Scenario, _ *engine.Config) bool { return sc.Cluster.HealthCheck.Enabled }},
}

// maxSuggestions is how many settings a refusal names.
const maxSuggestions = 3

// Fix is a setting and a value of it that alone makes a run fit.
type Fix struct {
	Setting string // the catalog's name (settings.Lookup)
	Value   float64
}

func (x Fix) String() string {
	s := strconv.FormatFloat(x.Value, 'f', -1, 64)
	switch x.Setting {
	case "interval", "hc_interval":
		s += "s"
	case "capacity_rps":
		s += " (or 0, unlimited)"
	}
	return envoyName(x.Setting) + " " + s
}

// Fixes are the settings that alone would make the run fit, each with
// the value nearest the run's own that does, in the order of levers (at
// most maxSuggestions). It weighs a few dozen variants of the run
// (sim.Weigh is tens of µs).
func (b *Budget) Fixes(sc scenario.Scenario, cfg engine.Config) []Fix {
	if b == nil {
		b = defaultBudget
	}
	var fixes []Fix
	for _, l := range levers {
		if l.applies != nil && !l.applies(&sc, &cfg) {
			continue
		}
		if v, ok := b.fitOf(l, sc, cfg); ok {
			fixes = append(fixes, Fix{l.setting, v})
		}
		if len(fixes) == maxSuggestions {
			break
		}
	}
	return fixes
}

// suggest is the field a refusal names (the first fix's setting) and
// its words.
func (b *Budget) suggest(sc scenario.Scenario, cfg engine.Config) (field, words string) {
	fixes := b.Fixes(sc, cfg)
	if len(fixes) == 0 {
		return "rps", "no one setting makes it fit: lower several of rps, hosts and retries, or raise interval"
	}
	ws := make([]string, len(fixes))
	for i, x := range fixes {
		ws[i] = x.String()
	}
	return envoyName(fixes[0].Setting), strings.Join(ws[:len(ws)-1], ", ") + or(len(ws)) + ws[len(ws)-1] + " would fit"
}

func or(n int) string {
	if n > 1 {
		return " or "
	}
	return ""
}

// fitOf is the value of lever l nearest the run's own that fits, found
// by halving the way from the run's value to the lever's lightest (the
// estimate grows with the heavy side of each lever, TestWeighProperties):
// false if even the lightest does not fit, or the run is there already.
func (b *Budget) fitOf(l lever, sc scenario.Scenario, cfg engine.Config) (float64, bool) {
	cur := l.get(&sc, &cfg)
	fitsAt := func(v float64) bool {
		s, c := sc.Clone(), cfg
		l.set(&s, &c, v)
		return b.fits(Weigh(s, c))
	}
	if cur == l.light || !fitsAt(l.light) {
		return 0, false
	}
	heavy, light := cur, l.light // heavy does not fit, light does
	for range 40 {
		mid := math.Round((heavy+light)/2/l.step) * l.step
		if mid == heavy || mid == light {
			break
		}
		if fitsAt(mid) {
			light = mid
		} else {
			heavy = mid
		}
	}
	return light, true
}

// envoyName is the name the lab gives a setting (its control's).
func envoyName(setting string) string {
	if s, ok := settings.Lookup(setting); ok {
		return s.EnvoyName()
	}
	return setting
}
