package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
)

// A played frame adds one interval to every chart: a point at the end of
// each series, a lane mark, perhaps an ejection marker, a new sentence for
// the chart's accessible name. Sending every chart's whole option again
// (what a redraw sends) made a frame ≈ 36 KB before compression and ≈ 3 KB
// after, as gzip's 32 KiB window cannot reach back past a frame that size.
// So a frame sends a patch instead: what turns the option the browser
// holds (the one sent at the connection's last cursor) into the option at
// the new cursor. js/chart.js's advanceCharts applies it to its copy and hands
// ECharts the same whole option a full send would have.
//
// A patch is JSON, one node per changed value:
//
//	{"=": v}                     the value is now v
//	{"o": {key: patch}, "d": [k]} an object: these keys changed, these went
//	{"a": {"i": patch}, "p": [v]} an array: these elements changed, these
//	                              were added at its end
//
// An unchanged value has no node.
//
// A played frame's patch (cursor forward) is built from what the frames
// add (chart_step.go), without either whole option. Between two whole
// options (a step back, and the small parts chart_step.go diffs) the patch
// is computed on their JSON text as encoding/json writes it (compact, keys
// in a fixed order): two values a frame apart are the same text but for
// what the frame added, so a walk over both finds it without decoding
// either (decoding into maps cost twice building the options).

// ChartPatch is the patch for every chart from the options at one cursor
// (a) to the options at another (b), by chart id, as JSON; charts that did
// not change are left out.
func ChartPatch(a, b map[string]json.RawMessage) ([]byte, error) {
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for _, id := range slices.Sorted(maps.Keys(b)) {
		var p []byte
		if va, ok := a[id]; !ok {
			p = setNode(b[id])
		} else {
			var changed bool
			var err error
			if p, changed, err = ValuePatch(va, b[id]); err != nil {
				return nil, err
			} else if !changed {
				continue
			}
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		writeKey(&out, strconv.Quote(id))
		out.Write(p)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func setNode(v []byte) []byte {
	out := make([]byte, 0, len(v)+6)
	out = append(out, `{"=":`...)
	out = append(out, v...)
	return append(out, '}')
}

func writeKey(out *bytes.Buffer, quoted string) {
	out.WriteString(quoted)
	out.WriteByte(':')
}

// ValuePatch is the node that turns JSON value a into b, and whether they
// differ. Both are one value each, compact.
func ValuePatch(a, b []byte) ([]byte, bool, error) {
	if bytes.Equal(a, b) {
		return nil, false, nil
	}
	switch {
	case len(a) > 0 && len(b) > 0 && a[0] == '{' && b[0] == '{':
		return objectPatch(a, b)
	case len(a) > 0 && len(b) > 0 && a[0] == '[' && b[0] == '[':
		return arrayPatch(a, b)
	}
	return setNode(b), true, nil
}

func objectPatch(a, b []byte) ([]byte, bool, error) {
	ak, av, err := members(a)
	if err != nil {
		return nil, false, err
	}
	bk, bv, err := members(b)
	if err != nil {
		return nil, false, err
	}
	// The keys mostly stand in the same order in both: look each up from
	// where the last was found.
	find := func(k []byte, from int) int {
		for n := range ak {
			i := (from + n) % len(ak)
			if bytes.Equal(ak[i], k) {
				return i
			}
		}
		return -1
	}
	var o bytes.Buffer
	seen := make([]bool, len(ak))
	at := 0
	for j, k := range bk {
		i := -1
		if len(ak) > 0 {
			i = find(k, at)
		}
		var p []byte
		if i < 0 {
			p = setNode(bv[j])
		} else {
			seen[i], at = true, i+1
			var changed bool
			if p, changed, err = ValuePatch(av[i], bv[j]); err != nil {
				return nil, false, err
			} else if !changed {
				continue
			}
		}
		if o.Len() > 0 {
			o.WriteByte(',')
		}
		writeKey(&o, string(k))
		o.Write(p)
	}
	var gone [][]byte
	for i, s := range seen {
		if !s {
			gone = append(gone, ak[i])
		}
	}
	if o.Len() == 0 && len(gone) == 0 {
		return nil, false, nil
	}
	var out bytes.Buffer
	out.WriteByte('{')
	if len(gone) > 0 {
		out.WriteString(`"d":[`)
		out.Write(bytes.Join(gone, []byte{','}))
		out.WriteByte(']')
	}
	if o.Len() > 0 {
		if len(gone) > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"o":{`)
		out.Write(o.Bytes())
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return out.Bytes(), true, nil
}

// arrayPatch patches element by element and appends what b adds. A series
// only grows while playing; an array that shrank, or whose old elements
// were mostly replaced (a moved axis), is sent whole, which is then
// smaller.
func arrayPatch(a, b []byte) ([]byte, bool, error) {
	ae, err := elements(a)
	if err != nil {
		return nil, false, err
	}
	be, err := elements(b)
	if err != nil {
		return nil, false, err
	}
	if len(be) < len(ae) {
		return setNode(b), true, nil
	}
	var changed bytes.Buffer
	replaced := 0
	for i := range ae {
		p, diff, err := ValuePatch(ae[i], be[i])
		if err != nil {
			return nil, false, err
		}
		if !diff {
			continue
		}
		if bytes.HasPrefix(p, []byte(`{"=":`)) {
			replaced++
		}
		if changed.Len() > 0 {
			changed.WriteByte(',')
		}
		writeKey(&changed, `"`+strconv.Itoa(i)+`"`)
		changed.Write(p)
	}
	if len(ae) > 0 && 2*replaced > len(ae) {
		return setNode(b), true, nil
	}
	if changed.Len() == 0 && len(be) == len(ae) {
		return nil, false, nil
	}
	var out bytes.Buffer
	out.WriteByte('{')
	if changed.Len() > 0 {
		out.WriteString(`"a":{`)
		out.Write(changed.Bytes())
		out.WriteByte('}')
	}
	if len(be) > len(ae) {
		if changed.Len() > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"p":[`)
		out.Write(bytes.Join(be[len(ae):], []byte{','}))
		out.WriteByte(']')
	}
	out.WriteByte('}')
	return out.Bytes(), true, nil
}

// members splits a compact JSON object into its keys (quoted, as written)
// and values.
func members(v []byte) (keys, vals [][]byte, err error) {
	i := 1 // past '{'
	for i < len(v) && v[i] != '}' {
		k, err := skipValue(v, i)
		if err != nil || k >= len(v) || v[k] != ':' {
			return nil, nil, errBadJSON
		}
		e, err := skipValue(v, k+1)
		if err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, v[i:k]), append(vals, v[k+1:e])
		i = e
		if i < len(v) && v[i] == ',' {
			i++
		}
	}
	return keys, vals, nil
}

// elements splits a compact JSON array into its elements.
func elements(v []byte) ([][]byte, error) {
	var out [][]byte
	i := 1 // past '['
	for i < len(v) && v[i] != ']' {
		e, err := skipValue(v, i)
		if err != nil {
			return nil, err
		}
		out = append(out, v[i:e])
		i = e
		if i < len(v) && v[i] == ',' {
			i++
		}
	}
	return out, nil
}

// errBadJSON: an option not as encoding/json writes it (a bug, not input).
var errBadJSON = errors.New("chart option: not compact JSON")

// skipValue is the index just past the value starting at v[i].
func skipValue(v []byte, i int) (int, error) {
	if i >= len(v) {
		return i, errBadJSON
	}
	switch v[i] {
	case '"':
		for j := i + 1; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return len(v), errBadJSON
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				e, err := skipValue(v, j)
				if err != nil {
					return e, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return len(v), errBadJSON
	}
	j := i // a number, true, false or null
	for j < len(v) && v[j] != ',' && v[j] != '}' && v[j] != ']' && v[j] != ':' {
		j++
	}
	if j == i {
		return j, errBadJSON
	}
	return j, nil
}
