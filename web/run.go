package web

import (
	"errors"
	"fmt"
	"outlierlab/web/httperr"
	"sort"
	"strconv"

	"outlierlab/engine"
	"outlierlab/engine/envoyconf"
	"outlierlab/engine/scenario"
	"outlierlab/engine/settings"
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

	hostIndex map[string]int
	// key is Inputs.key(): streams remember the run they drew by its key,
	// never by a pointer that would keep it alive past the cache.
	key string
	// size estimates the run's memory, for the cache's byte bound.
	size int
}

// errUnknownPreset is answered with a 404.
var errUnknownPreset = httperr.WithKind(httperr.KindNotFound, errors.New("unknown preset"))

// defaultSeed makes a run reproducible: the same inputs give the same
// frames on every machine, so a lesson's numbers are the room's numbers.
const defaultSeed = 1

// buildRun applies the inputs to their preset and runs the engine.
func buildRun(in Inputs) (*Run, error) {
	defer observeRun()()
	p, ok := scenario.Lookup(in.Preset)
	if !ok {
		return nil, errUnknownPreset
	}
	sc, cfg, err := applyInputs(p, in)
	if err != nil {
		return nil, err
	}
	seed := in.Seed
	if seed == 0 {
		seed = defaultSeed
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
		hostIndex:   map[string]int{},
	}
	r.Values = controlValues(sc, cfg)
	r.Log = make([][]view.LogEntry, len(r.Frames))
	r.Times = make([]string, len(r.Frames))
	for i := range r.Frames {
		r.Log[i] = decisionsOf(&r.Frames[i], cfg)
		r.Times[i] = fmtMs(r.Frames[i].TMs)
	}
	r.logInjections()
	if len(r.Frames) > 0 {
		for i, h := range r.Frames[0].Hosts {
			r.Hosts = append(r.Hosts, h.Name)
			r.hostIndex[h.Name] = i
		}
	}
	r.YAML = envoyconf.ClusterYAML(cfg, r.Cluster, float64(sc.Cluster.HealthyPanicThreshold), sc.Cluster.Retry.MaxRetries)
	r.size = r.estimateSize()
	r.key = in.key()
	return r, nil
}

// applyInputs lays the inputs over the preset with settings.Apply, as the
// CLI and lessons do: a lesson's settings (Base) first, the page's controls
// on top, then the faults injected live. A control's value must be inside
// its slider's span; the rest (Envoy's own validation, a knob the preset
// has no use for) is the catalog's, and so are its messages.
func applyInputs(p scenario.Preset, in Inputs) (scenario.Scenario, engine.Config, error) {
	onPage := make(map[string]string, len(in.Values))
	for name, v := range in.Values {
		c := controlByName[name]
		if c == nil {
			return scenario.Scenario{}, engine.Config{}, &httperr.FieldError{Field: name, Msg: "is not a setting of the lab"}
		}
		if err := c.check(v); err != nil {
			return scenario.Scenario{}, engine.Config{}, err
		}
		onPage[name] = c.envoyValue(v)
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
		k := sort.Search(len(r.Frames), func(i int) bool { return r.Frames[i].TMs > ms })
		if k == len(r.Frames) {
			continue // after the last sweep: nothing to show
		}
		s := (&sentence{}).text("fault injected on h%d (%s): it fails from now to the end of the run.", in.Host, in.Describe())
		r.Log[k] = append([]view.LogEntry{entry(ms, "info", "INJECTED", s)}, r.Log[k]...)
	}
}

// injectView is the inject control for a run: its hosts, and its
// injections with the entry each remove button names.
func injectView(r *Run) *view.Inject {
	v := &view.Inject{Hosts: r.Hosts}
	for _, in := range r.Scenario.Injections {
		v.Active = append(v.Active, view.Injection{Entry: in.String(), Host: fmt.Sprintf("h%d", in.Host), Time: fmtMs(in.At.Milliseconds()), How: in.Describe()})
	}
	return v
}

// controlValues is the value of every control a scenario has, with cfg as
// its detector config.
func controlValues(sc scenario.Scenario, cfg engine.Config) map[string]float64 {
	all := settings.Values(sc, cfg)
	vals := make(map[string]float64, len(controls))
	for i := range controls {
		c := &controls[i]
		if s, ok := all[c.Setting]; ok {
			if v, ok := c.number(s); ok {
				vals[c.Name] = v
			}
		}
	}
	return vals
}

// presetValues is every control's value in a preset as it ships: what a
// permalink leaves out. It runs nothing (no engine run, only the preset's
// scenario), so the stream can call it at each change.
func presetValues(preset string) map[string]float64 {
	p, ok := scenario.Lookup(preset)
	if !ok {
		return nil
	}
	sc := p.Scenario()
	return controlValues(sc, sc.Outlier)
}

// estimateSize is a rough byte count of a run: frames × hosts dominate.
// The sum below is scaled by 5/3 to what the heap measures: fifty hosts at
// a 1 s interval and 3000 rps (300 frames) sums to 6.1 MiB and takes
// 10.1 MiB of live heap, so the cache's bound is the heap's.
func (r *Run) estimateSize() int {
	n := 4096
	for i := range r.Frames {
		n += 400 + 160*len(r.Frames[i].Hosts) + 120*len(r.Frames[i].Events) + 250*len(r.Log[i])
	}
	return n * 5 / 3
}

// runCache keeps recent runs by their inputs' key. Runs are cheap to
// rebuild (milliseconds), so a small LRU is enough; it spares the work
// when a room of tabs plays the same preset, and keeps memory per tab small.
// It is bounded in runs and in (estimated) bytes: the largest settings
// make runs of megabytes. Tabs missing the same inputs at once wait for
// one build (a room's laptops join together).
type runCache struct {
	runs  *memo.Cache[string, *Run]
	build func(Inputs) (*Run, error) // buildRun; tests slow it down
}

// runCacheBytes bounds the cache's estimated memory.
const runCacheBytes = 64 << 20

func newRunCache(max int) *runCache { return newRunCacheBytes(max, runCacheBytes) }

func newRunCacheBytes(max, bytes int) *runCache {
	return &runCache{memo.New[string, *Run](max).WithCost(bytes, func(r *Run) int { return r.size }), buildRun}
}

// get returns the run for the inputs, building it on a miss.
func (c *runCache) get(in Inputs) (*Run, error) {
	in = in.canonical()
	r, hit, err := c.runs.Get(in.key(), func() (*Run, error) { return c.build(in) })
	cacheLookup(hit)
	return r, err
}

// has says whether the cache holds the run of the inputs: a compare
// weighs only the runs it has to make.
func (c *runCache) has(in Inputs) bool { return c.runs.Has(in.canonical().key()) }

// frameTime is the tick time of the frame before the cursor ("0 s" at the
// start).
func (r *Run) frameTime(cursor int) string {
	if cursor <= 0 || len(r.Frames) == 0 {
		return "0 s"
	}
	return r.Times[min(cursor, len(r.Frames))-1]
}

// endTime is the last tick of the run.
func (r *Run) endTime() string { return r.frameTime(len(r.Frames)) }

func itoa(i int) string { return strconv.Itoa(i) }
