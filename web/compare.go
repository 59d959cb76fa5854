package web

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"outlierlab/engine/scenario"
	"outlierlab/engine/sweep"
	"outlierlab/web/templates"
	"outlierlab/web/view"
)

// /compare?a=QUERY&b=QUERY: two runs of one preset and seed, each given
// by a lab permalink's query (what follows "/lab?"), side by side on
// shared axes with the diff in sentences (sweep.Compare, the sentences of
// `run -compare`). A query may add seed=N, which the lab's own links leave
// out (the lab runs seed 1). b defaults to a: the lab's "Compare with…"
// pins A, and B is then edited.

// maxSeed bounds a compare's seed: any uint64 runs, but a link's seed is a
// small number.
const maxSeed = 1 << 32

// compareSide is one side of a compare: the lab link and its seed.
type compareSide struct {
	link labLink
	seed uint64
}

func (c compareSide) inputs() Inputs {
	in := c.link.inputs()
	in.Seed = c.seed
	return in
}

// query is the side's lab query as the lab writes it (preset, the
// controls that differ from the preset's, inject), then the seed if not 1.
func (c compareSide) query() string {
	q := linkQuery(c.link.Preset, c.link.Values, c.link.Inject)
	if c.seed != defaultSeed {
		q += "&seed=" + strconv.FormatUint(c.seed, 10)
	}
	return q
}

// parseCompareQuery reads /compare's query: a and b, each at most once,
// nothing else. Every problem is named by its side ("b: preset ...").
func parseCompareQuery(raw string) (a, b compareSide, err error) {
	if len(raw) > 3*maxQueryBytes {
		return a, b, fmt.Errorf("%w: the query is %d bytes long (allowed up to %d)", errQueryTooLong, len(raw), 3*maxQueryBytes)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return a, b, withKind(kindMalformed, &inputError{Msg: "the query is not valid: " + err.Error()})
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case k != "a" && k != "b":
			errs = append(errs, &inputError{Field: truncate(k, 40), Msg: "is not a parameter of /compare (allowed a and b, each a lab link's query, and view)"})
		case len(q[k]) > 1:
			errs = append(errs, &inputError{Field: k, Msg: fmt.Sprintf("is given %d times (allowed once)", len(q[k]))})
		}
	}
	if len(errs) > 0 {
		return a, b, withKind(kindMalformed, errors.Join(errs...))
	}
	a, errA := parseSide("a", strings.TrimPrefix(q.Get("a"), "?"))
	b, errB := a, error(nil)
	if _, ok := q["b"]; ok {
		b, errB = parseSide("b", strings.TrimPrefix(q.Get("b"), "?"))
	}
	if err := errors.Join(errA, errB); err != nil {
		return a, b, err
	}
	return a, b, sameRun(a, b)
}

// sameRun refuses two sides that are not of one preset and seed: the diff
// says what settings do, so the traffic must be the same.
func sameRun(a, b compareSide) error {
	var errs []error
	if a.link.Preset != b.link.Preset {
		errs = append(errs, &inputError{Field: "b", Msg: fmt.Sprintf("preset %q is not a's %q (allowed: the same preset and seed on both sides)", truncate(b.link.Preset, 40), truncate(a.link.Preset, 40))})
	}
	if a.seed != b.seed {
		errs = append(errs, &inputError{Field: "b", Msg: fmt.Sprintf("seed %d is not a's %d (allowed: the same preset and seed on both sides)", b.seed, a.seed)})
	}
	return withKind(kindMalformed, errors.Join(errs...))
}

// parseSide reads one side: a lab query, plus seed. Its errors are the
// lab's, each prefixed with the side ("a: max_ejection_percent: …").
func parseSide(name, raw string) (compareSide, error) {
	side := compareSide{seed: defaultSeed}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return side, withKind(kindMalformed, &inputError{Field: name, Msg: "is not a lab link's query: " + err.Error()})
	}
	var seedErr error
	if vs, ok := q["seed"]; ok {
		side.seed, seedErr = parseSeed(name, vs)
		delete(q, "seed")
	}
	side.link, err = parseLabQuery(q.Encode())
	if _, ok := scenario.Lookup(side.link.Preset); !ok && err == nil {
		err = withKind(kindNotFound, &inputError{Field: "preset", Msg: fmt.Sprintf("there is no scenario preset called %q (allowed %s)", truncate(side.link.Preset, 40), strings.Join(presetNames(), ", "))})
	}
	if err = errors.Join(seedErr, err); err != nil {
		return side, sideError(name, err)
	}
	return side, nil
}

func parseSeed(side string, vs []string) (uint64, error) {
	n, err := strconv.ParseUint(vs[0], 10, 64)
	if len(vs) > 1 || err != nil || n < 1 || n > maxSeed {
		return defaultSeed, &inputError{Field: "seed", Msg: fmt.Sprintf("%q is not a seed (allowed once, 1–%d)", truncate(strings.Join(vs, ","), 40), uint64(maxSeed))}
	}
	return n, nil
}

// sideError prefixes each of err's lines with the side, keeping its kind:
// an unknown preset is still a 404, anything else makes the address a bad
// one (400), as on the lab's own page.
func sideError(side string, err error) error {
	k := kindOf(err, kindMalformed)
	if k == kindBadValue {
		k = kindMalformed
	}
	lines := strings.Split(errorText(err), "\n")
	for i := range lines {
		lines[i] = side + ": " + lines[i]
	}
	return withKind(k, errors.New(strings.Join(lines, "\n")))
}

// comparePage handles GET /compare: two runs the cache holds are shown
// at once; otherwise the runs to make are weighed (past the budget, a
// 422 naming the heavier side), admitted (a 503 when the lab is busy)
// and made on a streamed page with its progress.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	// ?view=projector lays the page out for a room's screen, as on the
	// lab (splitView); it is not part of either run.
	mode, rest, viewErr := splitView(r.URL.RawQuery)
	a, b, err := parseCompareQuery(rest)
	if viewErr != nil {
		err = errors.Join(withKind(kindMalformed, viewErr), err)
	}
	var todo []compareSide
	var names []string
	if err == nil {
		todo, names, err = s.compareWork(a, b)
	}
	if err != nil {
		switch k := kindOf(err, kindMalformed); k {
		case kindInternal, kindURITooLong:
			httpError(w, kindStatus[k], errorText(err))
		default:
			status := kindStatus[k]
			if _, over := errors.AsType[*overBudget](err); over {
				metricHeavy.WithLabelValues("over_budget").Inc()
				status = http.StatusUnprocessableEntity
			}
			s.badRequestPage(w, r, status, "/compare", errorText(err))
		}
		return
	}
	if len(todo) == 0 {
		v, err := s.compareOf(a, b)
		if err != nil {
			writeError(w, err, kindInternal)
			return
		}
		v.Layout = s.layout("Compare: "+a.link.Preset, "lab", true)
		v.Projector = mode == view.Projector
		s.render(w, r, http.StatusOK, templates.ComparePage(v))
		return
	}
	release, err := s.budget.admit(r.Context(), 1)
	if err != nil {
		s.refuseHeavy(w, err)
		return
	}
	defer release()
	s.workPage(w, r, s.layout("Compare: "+a.link.Preset, "lab", true), "Comparing A and B", func(p *progress) (templ.Component, error) {
		for i, side := range todo {
			p.step(i, len(todo), "runs ("+names[i]+" next)")
			if _, err := s.runs.get(side.inputs()); err != nil {
				return nil, err
			}
		}
		p.phase("drawing the charts")
		v, err := s.compareOf(a, b)
		if err != nil {
			return nil, err
		}
		v.Projector = mode == view.Projector
		return templates.CompareContent(v), nil
	})
}

// compareOf is the view of both sides' runs (from the cache, or made).
func (s *Server) compareOf(a, b compareSide) (view.Compare, error) {
	runA, err := s.runs.get(a.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	runB, err := s.runs.get(b.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	return compareView(runA, runB, a, b), nil
}

// compareWork is the runs a compare has to make (the cache has the
// others) and their names (A, B), weighed against the budget: past it,
// the heavier side is the field named.
func (s *Server) compareWork(a, b compareSide) ([]compareSide, []string, error) {
	var todo []compareSide
	var names []string
	var units, heaviest int64
	field := "a"
	for i, side := range []compareSide{a, b} {
		in := side.inputs()
		if (i == 1 && in.canonical().key() == a.inputs().canonical().key()) || s.runs.has(in) {
			continue
		}
		p, ok := scenario.Lookup(in.Preset)
		if !ok {
			return nil, nil, errUnknownPreset
		}
		sc, cfg, err := applyInputs(p, in.canonical())
		if err != nil {
			return nil, nil, err // as the run would fail
		}
		w := runWork(sc, cfg)
		if w > heaviest {
			heaviest, field = w, []string{"a", "b"}[i]
		}
		units += w
		todo, names = append(todo, side), append(names, []string{"A", "B"}[i])
	}
	err := s.budget.checkWork(field, units, fmt.Sprintf("%d runs of up to %s units each", len(todo), millions(heaviest)),
		"fewer hosts, a lower rps or a longer interval")
	return todo, names, err
}

// compareView is the page of two runs: the settings that differ, the
// diff's sentences, both runs' numbers and the charts.
func compareView(ra, rb *Run, a, b compareSide) view.Compare {
	d := sweep.Compare(*ra.Result, *rb.Result)
	v := view.Compare{
		Preset: ra.Preset, Seed: strconv.FormatUint(a.seed, 10),
		A:         view.CompareSide{Name: "A", Query: a.query()},
		B:         view.CompareSide{Name: "B", Query: b.query()},
		Sentences: d.Sentences,
		Charts:    compareCharts(ra, rb),
	}
	v.SwapURL = "/compare?a=" + url.QueryEscape(v.B.Query) + "&b=" + url.QueryEscape(v.A.Query)
	if a.seed == defaultSeed {
		v.A.LabURL, v.B.LabURL = labURL(ra, 0), labURL(rb, 0)
	} else {
		v.SeedNote = fmt.Sprintf("The lab runs seed %d, so these runs (seed %d) open here only.", defaultSeed, a.seed)
	}
	for _, c := range d.Changed {
		v.Changed = append(v.Changed, view.CompareChange{Name: c.Name, A: orNone(c.A), B: orNone(c.B)})
	}
	for _, h := range d.Hosts {
		v.Hosts = append(v.Hosts, view.CompareHost{Host: h.Host, A: h.A, B: h.B})
	}
	v.Metrics = compareMetrics(d.A, d.B)
	return v
}

// compareMetrics are the numbers a sweep charts, for A and B.
func compareMetrics(a, b sweep.Metrics) []view.CompareMetric {
	rows := []struct {
		name   string
		av, bv string
	}{
		{"client failures", pct(a.FailurePct), pct(b.FailurePct)},
		{"client failures since the fault", pct(a.FailurePctSinceFault), pct(b.FailurePctSinceFault)},
		{"ejections", itoa(a.Ejections), itoa(b.Ejections)},
		{"returns", itoa(a.Unejections), itoa(b.Unejections)},
		{"ejections refused by the cap (overflow)", itoa(a.Overflows), itoa(b.Overflows)},
		{"detections not enforced", itoa(a.Detections), itoa(b.Detections)},
		{"most hosts ejected at once", itoa(a.MaxEjected), itoa(b.MaxEjected)},
		{"time in panic", fmtNum(a.PanicS) + " s", fmtNum(b.PanicS) + " s"},
		{"retries refused (upstream_rq_retry_overflow)", strconv.FormatUint(a.RetryOverflow, 10), strconv.FormatUint(b.RetryOverflow, 10)},
		{"503 no healthy upstream", strconv.FormatUint(a.NoHealthyUpstream, 10), strconv.FormatUint(b.NoHealthyUpstream, 10)},
	}
	out := make([]view.CompareMetric, len(rows))
	for i, r := range rows {
		out[i] = view.CompareMetric{Name: r.name, A: r.av, B: r.bv, Differs: r.av != r.bv}
	}
	return out
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// linkQuery is a lab query as labURL writes one: the preset, the controls
// whose value differs from the preset's own in page order, the inject
// list. vals are control values by name.
func linkQuery(preset string, vals map[string]float64, inject string) string {
	var b strings.Builder
	b.WriteString("preset=")
	b.WriteString(url.QueryEscape(preset))
	def := presetValues(preset)
	for i := range controls {
		c := &controls[i]
		v, ok := vals[c.Name]
		if d, isDefault := def[c.Name]; !ok || (isDefault && d == v) {
			continue
		}
		b.WriteString("&" + c.Name + "=" + url.QueryEscape(c.envoyValue(v)))
	}
	if inject != "" {
		b.WriteString("&inject=" + strings.NewReplacer("%40", "@", "%2C", ",").Replace(url.QueryEscape(inject)))
	}
	return b.String()
}
