package tools

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"outlierlab/engine/scenario"
	"outlierlab/web/httperr"
	"outlierlab/web/tabstate"
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
