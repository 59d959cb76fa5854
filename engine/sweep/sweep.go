// Package sweep runs a preset many times: once per value of one setting
// and per seed (a sweep), or twice with two sets of settings (a compare).
// Every run is settings.Apply then scenario.Run, so a point of a sweep is
// exactly the lab's run at that value (a permalink opens it).
package sweep

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"outlierlab/engine"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
)

// MaxPoints bounds values × seeds, so a typo cannot queue a day of work.
const MaxPoints = 5000

// Metrics are the numbers a sweep charts for one run.
type Metrics struct {
	FailurePct           float64 `json:"failure_pct"`
	FailurePctSinceFault float64 `json:"failure_pct_since_fault"`
	Ejections            int     `json:"ejections"`
	Unejections          int     `json:"unejections"`
	Overflows            int     `json:"overflows"`
	Detections           int     `json:"detections_not_enforced"`
	MaxEjected           int     `json:"max_ejected"`
	// PanicS is the time with panic: the intervals in which the cluster
	// was in panic at any point, in seconds.
	PanicS            float64 `json:"panic_s"`
	RetryOverflow     uint64  `json:"retry_overflow"`
	NoHealthyUpstream uint64  `json:"no_healthy_upstream"`
}

// MetricsOf reads a run's metrics.
func MetricsOf(res scenario.Result) Metrics {
	s := res.Summary
	return Metrics{
		FailurePct: s.FailurePct, FailurePctSinceFault: s.FailurePctSinceFault,
		Ejections: s.Ejections, Unejections: s.Unejections, Overflows: s.Overflows, Detections: s.Detections,
		MaxEjected: s.MaxEjected, PanicS: float64(int64(s.PanicFrames)*s.IntervalMs) / 1000,
		RetryOverflow: s.RetryOverflow, NoHealthyUpstream: s.NoHealthyUpstream,
	}
}

// Point is one run of a sweep.
type Point struct {
	Value string `json:"value"`
	Seed  uint64 `json:"seed"`
	Metrics
}

// Sweep is every run of one setting over values and seeds.
type Sweep struct {
	Preset string   `json:"preset"`
	Param  string   `json:"param"`
	Values []string `json:"values"`
	Seeds  []uint64 `json:"seeds"`
	// Points are value-major: Points[i*len(Seeds)+j] is Values[i], Seeds[j].
	Points []Point `json:"points"`
	// Runs is how many simulations ran: runs that must give the same
	// result (see behaviourKey) run once.
	Runs int `json:"runs"`
}

// Spec is what a sweep runs: the preset, the settings every run shares,
// the swept setting and its values, the seeds.
type Spec struct {
	Preset  scenario.Preset
	Base    map[string]string
	Param   string
	Values  []string
	Seeds   []uint64
	Workers int // 0: every core (GOMAXPROCS)
	// Progress, if not nil, is told after each distinct run how many of
	// the total have run (one call at a time, from the workers).
	Progress func(done, total int)
}

// Job is one distinct simulation of a sweep: a run is a pure function of
// its scenario, config and seed.
type Job struct {
	Scenario scenario.Scenario
	Config   engine.Config
	Seed     uint64
}

// Plan is what Run would simulate, without running it: the distinct runs
// (runs that must agree are one, see behaviourKey). A caller weighs the
// work from it before it starts; a bad value fails Plan as it fails Run.
func Plan(spec Spec) ([]Job, error) {
	_, _, jobs, err := plan(spec)
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(jobs))
	for _, k := range slices.Sorted(maps.Keys(jobs)) {
		out = append(out, jobs[k])
	}
	return out, nil
}

// plan applies every value (so a bad one fails the sweep before any run,
// naming the value and the setting) and keys each point by its behaviour:
// keys[i] is Points[i]'s.
func plan(spec Spec) (sw *Sweep, keys []string, jobs map[string]Job, err error) {
	if err := spec.check(); err != nil {
		return nil, nil, nil, err
	}
	sw = &Sweep{Preset: spec.Preset.Name, Param: spec.Param, Values: spec.Values, Seeds: spec.Seeds}
	keys = make([]string, 0, len(spec.Values)*len(spec.Seeds))
	jobs = map[string]Job{}
	for _, v := range spec.Values {
		sc, cfg, err := settings.Apply(spec.Preset, spec.Base, map[string]string{spec.Param: v})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s=%s: %w", spec.Param, v, err)
		}
		for _, seed := range spec.Seeds {
			k := behaviourKey(sc, cfg, seed)
			keys = append(keys, k)
			jobs[k] = Job{sc, cfg, seed}
			sw.Points = append(sw.Points, Point{Value: v, Seed: seed})
		}
	}
	return sw, keys, jobs, nil
}

// Run runs the sweep, at most Workers simulations at once. Every value is
// applied first, so a bad one fails the sweep before any run, naming the
// value and the setting.
func Run(ctx context.Context, spec Spec) (*Sweep, error) {
	sw, keys, jobs, err := plan(spec)
	if err != nil {
		return nil, err
	}
	results, err := runAll(ctx, jobs, spec.Workers, spec.Progress)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		sw.Points[i].Metrics = results[k]
	}
	sw.Runs = len(jobs)
	return sw, nil
}

func (spec Spec) check() error {
	switch {
	case len(spec.Values) == 0:
		return fmt.Errorf("%s: no values to sweep", spec.Param)
	case len(spec.Seeds) == 0:
		return fmt.Errorf("no seeds")
	case len(spec.Values)*len(spec.Seeds) > MaxPoints:
		return fmt.Errorf("%d values × %d seeds is %d runs (allowed at most %d)", len(spec.Values), len(spec.Seeds), len(spec.Values)*len(spec.Seeds), MaxPoints)
	}
	if _, ok := settings.Lookup(spec.Param); !ok {
		_, _, err := settings.Apply(spec.Preset, map[string]string{spec.Param: ""})
		return err
	}
	return nil
}

// runAll runs the distinct jobs on a bounded pool of workers.
func runAll(ctx context.Context, jobs map[string]Job, workers int, progress func(done, total int)) (map[string]Metrics, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	keys := make([]string, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(map[string]Metrics, len(jobs))
	var mu sync.Mutex
	var firstErr error
	next := make(chan string)
	var wg sync.WaitGroup
	for range min(workers, len(keys)) {
		wg.Go(func() {
			for k := range next {
				j := jobs[k]
				// A point is its summary: the run's frames are dropped as
				// they come (a run of the lab's heaviest keeps hundreds of
				// MB of them), and the summary is Run's, byte for byte.
				sum, err := scenario.Stream(j.Scenario, j.Config, j.Seed, summaryOnly{})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				out[k] = MetricsOf(scenario.Result{Summary: sum})
				if progress != nil {
					progress(len(out), len(keys))
				}
				mu.Unlock()
			}
		})
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, firstErr
}

// summaryOnly is the FrameWriter that keeps nothing: a sweep's point
// reads the summary Stream returns.
type summaryOnly struct{}

func (summaryOnly) Begin(*scenario.Result) error { return nil }
func (summaryOnly) Frame(*scenario.Frame) error  { return nil }
func (summaryOnly) End(*scenario.Result) error   { return nil }

// behaviourKey names what a run depends on, so that runs that must give
// the same result run once. A run is a pure function of (cluster, config,
// seed); max_ejection_percent enters it only through the cap's answers
// (engine.CapAdmits, CapAdmitsGRPC: how many of the cluster's hosts may be
// out at once), so two percentages with the same answers for every count
// of ejected hosts are one behaviour. On six hosts, 0–16 refuse every
// ejection, 17–33 admit one, and so on: a 0–100 sweep is 7 runs a seed.
func behaviourKey(sc scenario.Scenario, cfg engine.Config, seed uint64) string {
	cfg.MaxEjectionPercent = canonicalCap(cfg, sc.Cluster.Hosts, sc.Cluster.Dialect)
	return fmt.Sprintf("%d|%#v|%#v", seed, cfg, sc.Cluster)
}

// canonicalCap is the least percentage whose cap answers are the same as
// cfg's for 0..hosts ejected hosts.
func canonicalCap(cfg engine.Config, hosts int, dialect engine.Dialect) uint32 {
	answers := func(p uint32) string {
		var b strings.Builder
		for active := range uint64(hosts) + 1 {
			var c engine.CapCheck
			if dialect == engine.DialectGRPC {
				c = engine.CapAdmitsGRPC(active, hosts, p)
			} else {
				c = engine.CapAdmits(active, hosts, p, cfg.AlwaysEjectOneHost)
			}
			b.WriteByte("01"[boolInt(c.Allowed)])
		}
		return b.String()
	}
	want := answers(cfg.MaxEjectionPercent)
	for p := range min(cfg.MaxEjectionPercent, 100) + 1 {
		if answers(p) == want {
			return p
		}
	}
	return cfg.MaxEjectionPercent
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ParseRange reads "name=from:to:step" (numbers; a duration setting's in
// seconds) or "name=v1,v2,..." (any values, e.g. lb=round_robin,random).
func ParseRange(spec string) (param string, values []string, err error) {
	param, rest, ok := strings.Cut(spec, "=")
	param = strings.TrimSpace(param)
	if !ok || param == "" || rest == "" {
		return "", nil, fmt.Errorf("sweep %q: want name=from:to:step or name=v1,v2,…", spec)
	}
	s, known := settings.Lookup(param)
	if !known {
		return param, nil, fmt.Errorf("sweep: %s: unknown setting", param)
	}
	if !strings.Contains(rest, ":") {
		return param, strings.Split(rest, ","), nil
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return param, nil, fmt.Errorf("sweep %s=%s: want from:to:step", param, rest)
	}
	var nums [3]float64
	for i, p := range parts {
		if nums[i], err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(p), "s"), 64); err != nil || math.IsNaN(nums[i]) || math.IsInf(nums[i], 0) {
			return param, nil, fmt.Errorf("sweep %s=%s: %q is not a number", param, rest, p)
		}
	}
	from, to, step := nums[0], nums[1], nums[2]
	n := math.Floor((to-from)/step+1e-9) + 1
	switch {
	case step <= 0:
		return param, nil, fmt.Errorf("sweep %s=%s: step %g is not positive", param, rest, step)
	case to < from:
		return param, nil, fmt.Errorf("sweep %s=%s: to %g is below from %g", param, rest, to, from)
	case n > MaxPoints:
		return param, nil, fmt.Errorf("sweep %s=%s: %g values (allowed at most %d)", param, rest, n, MaxPoints)
	}
	decimals := 0
	for _, p := range parts[:3] {
		if _, frac, ok := strings.Cut(strings.TrimSuffix(strings.TrimSpace(p), "s"), "."); ok {
			decimals = max(decimals, len(frac))
		}
	}
	for i := range int(n) {
		// Written with the inputs' decimals: 0.1 steps give 0.3, not 0.30000000000000004.
		v := strconv.FormatFloat(from+float64(i)*step, 'f', decimals, 64)
		if s.Kind == settings.Duration {
			v += "s"
		}
		values = append(values, v)
	}
	return param, values, nil
}

// Stat is one metric over a value's seeds.
type Stat struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Band is one value of a sweep over its seeds: what a chart draws as a
// line (the median) in a band (min to max).
type Band struct {
	Value      string `json:"value"`
	FailurePct Stat   `json:"failure_pct"`
	Ejections  Stat   `json:"ejections"`
	Overflows  Stat   `json:"overflows"`
	PanicS     Stat   `json:"panic_s"`
}

// Bands is the sweep's values, each over its seeds.
func (sw *Sweep) Bands() []Band {
	n := len(sw.Seeds)
	out := make([]Band, len(sw.Values))
	for i, v := range sw.Values {
		pts := sw.Points[i*n : (i+1)*n]
		stat := func(get func(Point) float64) Stat {
			vals := make([]float64, n)
			for j, p := range pts {
				vals[j] = get(p)
			}
			slices.Sort(vals)
			med := vals[n/2]
			if n%2 == 0 {
				med = (vals[n/2-1] + vals[n/2]) / 2
			}
			return Stat{Min: vals[0], Median: med, Max: vals[n-1]}
		}
		out[i] = Band{
			Value:      v,
			FailurePct: stat(func(p Point) float64 { return p.FailurePct }),
			Ejections:  stat(func(p Point) float64 { return float64(p.Ejections) }),
			Overflows:  stat(func(p Point) float64 { return float64(p.Overflows) }),
			PanicS:     stat(func(p Point) float64 { return p.PanicS }),
		}
	}
	return out
}
