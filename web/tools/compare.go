package tools

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
	"outlierlab/web/budget"
	"outlierlab/web/chart"
	"outlierlab/web/httperr"
	"outlierlab/web/page"
	"outlierlab/web/tabstate"
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
	link tabstate.LabLink
	seed uint64
}

func (c compareSide) inputs() tabstate.Inputs {
	in := c.link.Inputs()
	in.Seed = c.seed
	return in
}

// query is the side's lab query as the lab writes it (preset, the
// controls that differ from the preset's, inject), then the seed if not 1.
func (c compareSide) query() string {
	q := linkQuery(c.link.Preset, c.link.Values, c.link.Inject)
	if c.seed != tabstate.DefaultSeed {
		q += "&seed=" + strconv.FormatUint(c.seed, 10)
	}
	return q
}

// parseCompareQuery reads /compare's query: a and b, each at most once,
// nothing else. Every problem is named by its side ("b: preset ...").
func parseCompareQuery(raw string) (a, b compareSide, err error) {
	if len(raw) > 3*tabstate.MaxQueryBytes {
		return a, b, fmt.Errorf("%w: the query is %d bytes long (allowed up to %d)", httperr.ErrQueryTooLong, len(raw), 3*tabstate.MaxQueryBytes)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return a, b, httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Msg: "the query is not valid: " + err.Error()})
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case k != "a" && k != "b":
			errs = append(errs, &httperr.FieldError{Field: httperr.Truncate(k, 40), Msg: "is not a parameter of /compare (allowed a and b, each a lab link's query, and view)"})
		case len(q[k]) > 1:
			errs = append(errs, &httperr.FieldError{Field: k, Msg: fmt.Sprintf("is given %d times (allowed once)", len(q[k]))})
		}
	}
	if len(errs) > 0 {
		return a, b, httperr.WithKind(httperr.KindMalformed, errors.Join(errs...))
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
		errs = append(errs, &httperr.FieldError{Field: "b", Msg: fmt.Sprintf("preset %q is not a's %q (allowed: the same preset and seed on both sides)", httperr.Truncate(b.link.Preset, 40), httperr.Truncate(a.link.Preset, 40))})
	}
	if a.seed != b.seed {
		errs = append(errs, &httperr.FieldError{Field: "b", Msg: fmt.Sprintf("seed %d is not a's %d (allowed: the same preset and seed on both sides)", b.seed, a.seed)})
	}
	return httperr.WithKind(httperr.KindMalformed, errors.Join(errs...))
}

// parseSide reads one side: a lab query, plus seed. Its errors are the
// lab's, each prefixed with the side ("a: max_ejection_percent: …").
func parseSide(name, raw string) (compareSide, error) {
	side := compareSide{seed: tabstate.DefaultSeed}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return side, httperr.WithKind(httperr.KindMalformed, &httperr.FieldError{Field: name, Msg: "is not a lab link's query: " + err.Error()})
	}
	var seedErr error
	if vs, ok := q["seed"]; ok {
		side.seed, seedErr = parseSeed(name, vs)
		delete(q, "seed")
	}
	side.link, err = tabstate.ParseLabQuery(q.Encode())
	if _, ok := scenario.Lookup(side.link.Preset); !ok && err == nil {
		err = httperr.WithKind(httperr.KindNotFound, tabstate.UnknownPreset("preset", side.link.Preset))
	}
	if err = errors.Join(seedErr, err); err != nil {
		return side, sideError(name, err)
	}
	return side, nil
}

func parseSeed(side string, vs []string) (uint64, error) {
	n, err := strconv.ParseUint(vs[0], 10, 64)
	if len(vs) > 1 || err != nil || n < 1 || n > maxSeed {
		return tabstate.DefaultSeed, &httperr.FieldError{Field: "seed", Msg: fmt.Sprintf("%q is not a seed (allowed once, 1–%d)", httperr.Truncate(strings.Join(vs, ","), 40), uint64(maxSeed))}
	}
	return n, nil
}

// sideError prefixes each of err's lines with the side, keeping its kind:
// an unknown preset is still a 404, anything else makes the address a bad
// one (400), as on the lab's own page.
func sideError(side string, err error) error {
	k := httperr.KindOf(err, httperr.KindMalformed)
	if k == httperr.KindBadValue {
		k = httperr.KindMalformed
	}
	lines := strings.Split(httperr.Text(err), "\n")
	for i := range lines {
		lines[i] = side + ": " + lines[i]
	}
	return httperr.WithKind(k, errors.New(strings.Join(lines, "\n")))
}

// comparePage handles GET /compare: two runs the cache holds are shown
// at once; otherwise the runs to make are weighed (past the budget, a
// 422 naming the heavier side), admitted (a 503 when the lab is busy)
// and made on a streamed page with its progress.
func (s *Tools) comparePage(w http.ResponseWriter, r *http.Request) {
	// ?view=projector lays the page out for a room's screen, as on the
	// lab (splitView); it is not part of either run.
	mode, rest, viewErr := page.SplitView(r.URL.RawQuery)
	a, b, err := parseCompareQuery(rest)
	if viewErr != nil {
		err = errors.Join(httperr.WithKind(httperr.KindMalformed, viewErr), err)
	}
	var todo []compareSide
	var names []string
	if err == nil {
		todo, names, err = s.compareWork(a, b)
	}
	if err != nil {
		switch k := httperr.KindOf(err, httperr.KindMalformed); k {
		case httperr.KindInternal, httperr.KindURITooLong:
			httperr.Plain(w, httperr.Status[k], httperr.Text(err))
		default:
			status := httperr.Status[k]
			if _, over := errors.AsType[*budget.OverBudget](err); over {
				budget.MetricHeavy.WithLabelValues("over_budget").Inc()
				status = http.StatusUnprocessableEntity
			}
			s.pages.BadRequest(w, r, status, "/compare", httperr.Text(err))
		}
		return
	}
	if len(todo) == 0 {
		v, err := s.compareOf(a, b)
		if err != nil {
			httperr.Write(w, err, httperr.KindInternal)
			return
		}
		v.Layout = s.pages.Layout("Compare: "+a.link.Preset, "lab", true)
		v.Projector = mode == view.Projector
		s.pages.Render(w, r, http.StatusOK, templates.ComparePage(v))
		return
	}
	s.heavy(w, r, 1, s.pages.Layout("Compare: "+a.link.Preset, "lab", true), "Comparing A and B", func(p *page.Progress) (templ.Component, error) {
		for i, side := range todo {
			p.Step(i, len(todo), "runs ("+names[i]+" next)")
			if _, err := s.runs.Get(side.inputs()); err != nil {
				return nil, err
			}
		}
		p.Phase("drawing the charts")
		v, err := s.compareOf(a, b)
		if err != nil {
			return nil, err
		}
		v.Projector = mode == view.Projector
		return templates.CompareContent(v), nil
	})
}

// compareOf is the view of both sides' runs (from the cache, or made).
func (s *Tools) compareOf(a, b compareSide) (view.Compare, error) {
	runA, err := s.runs.Get(a.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	runB, err := s.runs.Get(b.inputs())
	if err != nil {
		return view.Compare{}, err
	}
	return compareView(runA, runB, a, b), nil
}

// compareWork is the runs a compare has to make (the cache has the
// others) and their names (A, B), weighed against the budget: past it,
// the heavier side is the field named.
func (s *Tools) compareWork(a, b compareSide) ([]compareSide, []string, error) {
	var todo []compareSide
	var names []string
	var units, heaviest int64
	field := "a"
	for i, side := range []compareSide{a, b} {
		in := side.inputs()
		if (i == 1 && in.Canonical().Key() == a.inputs().Canonical().Key()) || s.runs.Has(in) {
			continue
		}
		p, ok := scenario.Lookup(in.Preset)
		if !ok {
			return nil, nil, tabstate.ErrUnknownPreset
		}
		sc, cfg, err := tabstate.ApplyInputs(p, in.Canonical())
		if err != nil {
			return nil, nil, err // as the run would fail
		}
		w := budget.RunWork(sc, cfg)
		if w > heaviest {
			heaviest, field = w, []string{"a", "b"}[i]
		}
		units += w
		todo, names = append(todo, side), append(names, []string{"A", "B"}[i])
	}
	err := s.budget.CheckWork(field, units, fmt.Sprintf("%d runs of up to %s units each", len(todo), budget.Millions(heaviest)),
		"fewer hosts, a lower rps or a longer interval")
	return todo, names, err
}

// compareView is the page of two runs: the settings that differ, the
// diff's sentences, both runs' numbers and the charts.
func compareView(ra, rb *tabstate.Run, a, b compareSide) view.Compare {
	d := sweep.Compare(*ra.Result, *rb.Result)
	v := view.Compare{
		Preset: ra.Preset, Seed: strconv.FormatUint(a.seed, 10),
		A:         view.CompareSide{Name: "A", Query: a.query()},
		B:         view.CompareSide{Name: "B", Query: b.query()},
		Sentences: d.Sentences,
		Charts:    chart.CompareCharts(ra, rb),
	}
	v.SwapURL = "/compare?a=" + url.QueryEscape(v.B.Query) + "&b=" + url.QueryEscape(v.A.Query)
	if a.seed == tabstate.DefaultSeed {
		v.A.LabURL, v.B.LabURL = tabstate.LabURL(ra, 0), tabstate.LabURL(rb, 0)
	} else {
		v.SeedNote = fmt.Sprintf("The lab runs seed %d, so these runs (seed %d) open here only.", tabstate.DefaultSeed, a.seed)
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
		{"ejections", tabstate.Itoa(a.Ejections), tabstate.Itoa(b.Ejections)},
		{"returns", tabstate.Itoa(a.Unejections), tabstate.Itoa(b.Unejections)},
		{"ejections refused by the cap (overflow)", tabstate.Itoa(a.Overflows), tabstate.Itoa(b.Overflows)},
		{"detections not enforced", tabstate.Itoa(a.Detections), tabstate.Itoa(b.Detections)},
		{"most hosts ejected at once", tabstate.Itoa(a.MaxEjected), tabstate.Itoa(b.MaxEjected)},
		{"time in panic", httperr.FormatNumber(a.PanicS) + " s", httperr.FormatNumber(b.PanicS) + " s"},
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
	def := tabstate.PresetValues(preset)
	for i := range tabstate.Controls {
		c := &tabstate.Controls[i]
		v, ok := vals[c.Name]
		if d, isDefault := def[c.Name]; !ok || (isDefault && d == v) {
			continue
		}
		b.WriteString("&" + c.Name + "=" + url.QueryEscape(c.EnvoyValue(v)))
	}
	if inject != "" {
		b.WriteString("&inject=" + strings.NewReplacer("%40", "@", "%2C", ",").Replace(url.QueryEscape(inject)))
	}
	return b.String()
}
