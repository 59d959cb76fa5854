package tabstate

import (
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
	"outlierlab/web/budget"
	"outlierlab/web/httperr"
	"outlierlab/web/memo"
	"outlierlab/web/view"
)

// Run is one timeline: the engine's frames for a set of inputs, plus what
// the page derives from them once (the decision log per frame, the YAML,
// the axis labels). A Run is immutable, so tabs with the same inputs (a
// room of laptops on the same preset) share one.
type Run struct {
	Inputs      Inputs
	Preset      string
	Description string
	Cluster     string // the Envoy cluster name in stats and YAML
	Scenario    scenario.Scenario
	Config      engine.Config
	Frames      []scenario.Frame
	// Result is the whole run as the engine returned it (Frames is its
	// frames): lesson checks and placeholders read it.
	Result *scenario.Result
	// Values is the effective value of every control: the preset's, with
	// the visitor's changes applied.
	Values map[string]float64
	// Log holds each frame's decisions, oldest first.
	Log   [][]view.LogEntry
	YAML  string
	Hosts []string
	Times []string // x-axis labels, one per frame: "40 s"

	HostIndex map[string]int
	// key is Inputs.key(): streams remember the run they drew by its key,
	// never by a pointer that would keep it alive past the cache.
	Key string
	// Size is the bytes the run holds (measure), for the cache's bound.
	Size int
	// Twin is the run under the other dialect, made when the Envoy/gRPC
	// strip first asks for it (web/chart), once however many tabs draw
	// the run, or beside the run itself (RunCache.Beside); it lives as
	// long as the run (a few KB, not in Size).
	Twin *Later
	// Budget is the budget that admitted the run: what is made of it
	// later by running the engine again (the twin) passes it too.
	Budget *budget.Budget
}

// ErrUnknownPreset is answered with a 404.
var ErrUnknownPreset = httperr.WithKind(httperr.KindNotFound, errors.New("unknown preset"))

// DefaultSeed makes a run reproducible: the same inputs give the same
// frames on every machine, so a lesson's numbers are the room's numbers.
const DefaultSeed = 1

// BuildRun is BuildRunWithin the default budget.
func BuildRun(in Inputs) (*Run, error) { return BuildRunWithin(in, nil) }

// Beside is a second use of a run's scenario, settings and seed that runs
// on another core while the run is built, its value kept in the run's
// Twin: the compare strip's other dialect (web/chart.TwinLanes), which
// every redraw of the run asks for and which took as long as the run
// itself. Built after the run, it doubled a slider move's wait on the
// server; beside it, the wait is the longer of the two. sc is the
// function's own copy.
type Beside func(sc scenario.Scenario, cfg engine.Config, seed uint64, b *budget.Budget) any

// BuildRunWithin applies the inputs to their preset and runs the engine,
// once the budget has weighed the run (a 422 past its ceiling for one
// run, before anything runs).
func BuildRunWithin(in Inputs, b *budget.Budget) (*Run, error) { return buildRun(in, b, nil) }

// buildRun is BuildRunWithin with beside (nil: none) started on the run's
// scenario as the engine starts the run.
func buildRun(in Inputs, b *budget.Budget, beside Beside) (*Run, error) {
	p, ok := scenario.Lookup(in.Preset)
	if !ok {
		return nil, ErrUnknownPreset
	}
	sc, cfg, err := ApplyInputs(p, in)
	if err != nil {
		return nil, err
	}
	if err := b.CheckRun(sc, cfg); err != nil {
		return nil, err
	}
	// Counted from here: a run refused, or of inputs that are no run, is
	// not one the engine computed.
	defer ObserveRun()()
	seed := in.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	twin := new(Later)
	if beside != nil {
		other := sc.Clone()
		go twin.Get(func() any { return beside(other, cfg, seed, b) })
	}
	res, err := scenario.Run(sc, cfg, seed)
	if err != nil {
		return nil, &httperr.FieldError{Msg: err.Error()}
	}
	r := &Run{
		Inputs:      in,
		Preset:      p.Name,
		Description: p.Description,
		Cluster:     p.Name,
		Scenario:    sc,
		Config:      cfg,
		Frames:      res.Frames,
		Result:      &res,
		HostIndex:   map[string]int{},
		Twin:        twin,
		Budget:      b,
	}
	r.Values = controlValues(sc, cfg)
	r.Log = make([][]view.LogEntry, len(r.Frames))
	r.Times = make([]string, len(r.Frames))
	for i := range r.Frames {
		r.Log[i] = DecisionsOf(&r.Frames[i], cfg)
		r.Times[i] = FormatMs(r.Frames[i].TMs)
	}
	r.logInjections()
	if len(r.Frames) > 0 {
		for i, h := range r.Frames[0].Hosts {
			r.Hosts = append(r.Hosts, h.Name)
			r.HostIndex[h.Name] = i
		}
	}
	r.YAML = envoyconf.ClusterYAML(cfg, r.Cluster, float64(sc.Cluster.HealthyPanicThreshold), sc.Cluster.Retry.MaxRetries)
	r.Size = r.measure()
	r.Key = in.Key()
	return r, nil
}

// ApplyInputs lays the inputs over the preset with settings.Apply, as the
// CLI and lessons do: a lesson's settings (Base) first, the page's controls
// on top, then the faults injected live. A control's value must be inside
// its slider's span; the rest (Envoy's own validation, a knob the preset
// has no use for) is the catalog's, and so are its messages.
func ApplyInputs(p scenario.Preset, in Inputs) (scenario.Scenario, engine.Config, error) {
	onPage := make(map[string]string, len(in.Values))
	for name, v := range in.Values {
		c := ControlByName[name]
		if c == nil {
			return scenario.Scenario{}, engine.Config{}, &httperr.FieldError{Field: name, Msg: "is not a setting of the lab"}
		}
		if err := c.Check(v); err != nil {
			return scenario.Scenario{}, engine.Config{}, err
		}
		onPage[name] = c.EnvoyValue(v)
	}
	layers := []map[string]string{in.Base, onPage}
	if in.Inject != "" {
		layers = append(layers, map[string]string{"inject": in.Inject})
	}
	sc, cfg, err := settings.Apply(p, layers...)
	if err != nil {
		return scenario.Scenario{}, engine.Config{}, &httperr.FieldError{Msg: httperr.Text(err)}
	}
	return sc, cfg, nil
}

// logInjections puts a line in the decision log where each injected fault
// starts: first in the interval that holds its start, since injections are
// made at a sweep (the lab's cursor) and the detector's events follow.
func (r *Run) logInjections() {
	for _, in := range r.Scenario.Injections {
		ms := in.At.Milliseconds()
		k := FramesAt(r, ms)
		if k == len(r.Frames) {
			continue // after the last sweep: nothing to show
		}
		s := (&sentence{}).text("fault injected on h%d (%s): it fails from now to the end of the run.", in.Host, in.Describe())
		r.Log[k] = append([]view.LogEntry{entry(ms, "info", "INJECTED", s)}, r.Log[k]...)
	}
}

// InjectView is the inject control for a run: its hosts, and its
// injections with the entry each remove button names.
func InjectView(r *Run) *view.Inject {
	v := &view.Inject{Hosts: r.Hosts}
	for _, in := range r.Scenario.Injections {
		v.Active = append(v.Active, view.Injection{Entry: in.String(), Host: fmt.Sprintf("h%d", in.Host), Time: FormatMs(in.At.Milliseconds()), How: in.Describe()})
	}
	return v
}

// controlValues is the value of every control a scenario has, with cfg as
// its detector config.
func controlValues(sc scenario.Scenario, cfg engine.Config) map[string]float64 {
	all := settings.Values(sc, cfg)
	vals := make(map[string]float64, len(Controls))
	for i := range Controls {
		c := &Controls[i]
		if s, ok := all[c.Setting]; ok {
			if v, ok := c.Number(s); ok {
				vals[c.Name] = v
			}
		}
	}
	return vals
}

// PresetValues is every control's value in a preset as it ships: what a
// permalink leaves out. It runs nothing (no engine run, only the preset's
// scenario), so the stream can call it at each change.
func PresetValues(preset string) map[string]float64 {
	p, ok := scenario.Lookup(preset)
	if !ok {
		return nil
	}
	sc := p.Scenario()
	return controlValues(sc, sc.Outlier)
}

// measure is the bytes a run holds, counted from what it holds: its
// frames (each host's row, each event), its decision log (each entry,
// its spans and their words), its labels. Literal words of a sentence
// live in the binary, not the heap, and are counted all the same, and
// each allocation is rounded to the heap's granule: the count errs a
// little high (TestRunSizeIsItsHeap holds it to the heap the run takes).
func (r *Run) measure() int {
	n := runFixedBytes + len(r.YAML) + len(r.Description)
	n += cap(r.Frames) * int(unsafe.Sizeof(scenario.Frame{}))
	for i := range r.Frames {
		f := &r.Frames[i]
		n += alloc(cap(f.Hosts)*int(unsafe.Sizeof(scenario.HostFrame{}))) + alloc(cap(f.Events)*int(unsafe.Sizeof(engine.Event{})))
	}
	n += alloc(cap(r.Log) * int(unsafe.Sizeof([]view.LogEntry{})))
	for _, log := range r.Log {
		n += alloc(cap(log) * int(unsafe.Sizeof(view.LogEntry{})))
		for j := range log {
			e := &log[j]
			n += alloc(cap(e.Parts)*int(unsafe.Sizeof(view.Span{}))) + alloc(len(e.Time)) + alloc(len(e.Fold)) + alloc(len(e.ID))
			for _, p := range e.Parts {
				n += alloc(len(p.Text))
			}
		}
	}
	n += alloc(cap(r.Times) * int(unsafe.Sizeof("")))
	for _, t := range r.Times {
		n += alloc(len(t))
	}
	for _, h := range r.Hosts {
		n += 2*int(unsafe.Sizeof("")) + alloc(len(h)) + 16 // Hosts and HostIndex
	}
	return n
}

// runFixedBytes is what every run holds whatever its length: the Run and
// its Result, the scenario and config, the controls' values (a map of
// some forty entries).
const runFixedBytes = 8 << 10

// alloc is n bytes as the heap gives them: a multiple of 8, nothing for
// nothing (an empty string or slice allocates nothing).
func alloc(n int) int { return (n + 7) &^ 7 }

// RunCache keeps recent runs by their inputs' key. Runs are cheap to
// rebuild (milliseconds), so a small LRU is enough; it spares the work
// when a room of tabs plays the same preset, and keeps memory per tab small.
// It is bounded in runs and in bytes (each run's Size): the largest
// settings make runs of tens of megabytes, and the budget admits none
// the bound cannot hold. Tabs missing the same inputs at once wait for
// one build (a room's laptops join together).
type RunCache struct {
	Runs *memo.Cache[string, *Run]
	// Build makes a run on a miss: BuildRunWithin Budget (tests slow it
	// down).
	Build func(Inputs) (*Run, error)
	// Budget weighs every run the cache builds (nil: the default one).
	Budget *budget.Budget
	// Beside, when set, is started beside every run the cache builds.
	Beside Beside
}

// NewRunCache is a cache of at most max runs, of the budget's default
// bytes (budget.DefaultRunCacheBytes: its heaviest run and then some).
func NewRunCache(max int) *RunCache { return NewRunCacheBytes(max, budget.DefaultRunCacheBytes) }

func NewRunCacheBytes(max, bytes int) *RunCache {
	c := &RunCache{Runs: memo.New[string, *Run](max).WithCost(bytes, func(r *Run) int { return r.Size })}
	c.Build = func(in Inputs) (*Run, error) { return buildRun(in, c.Budget, c.Beside) }
	return c
}

// Get returns the run for the inputs, building it on a miss.
func (c *RunCache) Get(in Inputs) (*Run, error) {
	in = in.Canonical()
	r, hit, err := c.Runs.Get(in.Key(), func() (*Run, error) { return c.Build(in) })
	cacheLookup(hit)
	return r, err
}

// Has says whether the cache holds the run of the inputs: a compare
// weighs only the runs it has to make.
func (c *RunCache) Has(in Inputs) bool { return c.Runs.Has(in.Canonical().Key()) }

// FrameTime is the tick time of the frame before the cursor ("0 s" at the
// start).
func (r *Run) FrameTime(cursor int) string {
	if cursor <= 0 || len(r.Frames) == 0 {
		return "0 s"
	}
	return r.Times[min(cursor, len(r.Frames))-1]
}

// EndTime is the last tick of the run.
func (r *Run) EndTime() string { return r.FrameTime(len(r.Frames)) }

func Itoa(i int) string { return strconv.Itoa(i) }

// CursorMs is the time of the last frame shown: what checks and
// placeholders read up to (0 before the first tick).
func CursorMs(r *Run, cursor int) int64 {
	if cursor <= 0 || len(r.Frames) == 0 {
		return 0
	}
	return r.Frames[min(cursor, len(r.Frames))-1].TMs
}

// HeldBytes is the bytes of the runs the cache holds.
func (c *RunCache) HeldBytes() int { return c.Runs.Cost() }
