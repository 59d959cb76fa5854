package web

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
)

// A played frame adds one interval to every chart: a point at the end of
// each series, a lane mark, perhaps an ejection marker, a new sentence for
// the chart's accessible name. Sending every chart's whole option again
// (what a redraw sends) made a frame ≈ 36 KB before compression and ≈ 3 KB
// after, as gzip's 32 KiB window cannot reach back past a frame that size.
// So a frame sends a patch instead: what turns the option the browser
// holds (the one sent at the connection's last cursor) into the option at
// the new cursor. app.js's advanceCharts applies it to its copy and hands
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

// chartPatch is the patch for every chart from the options at one cursor
// (a) to the options at another (b), by chart id; charts that did not
// change are left out.
func chartPatch(a, b map[string]json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	for id, nb := range b {
		na, ok := a[id]
		if ok && bytes.Equal(na, nb) {
			continue
		}
		vb, err := decodeOptionTree(nb)
		if err != nil {
			return nil, err
		}
		if !ok {
			out[id] = setNode(vb)
			continue
		}
		va, err := decodeOptionTree(na)
		if err != nil {
			return nil, err
		}
		if p, changed := valuePatch(va, vb); changed {
			out[id] = p
		}
	}
	return out, nil
}

// decodeOptionTree decodes an option keeping each number's text, so that an
// unchanged number compares equal and a sent one reads as it was written.
func decodeOptionTree(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func setNode(v any) map[string]any { return map[string]any{"=": v} }

// valuePatch is the node that turns a into b, and whether they differ.
func valuePatch(a, b any) (any, bool) {
	switch vb := b.(type) {
	case map[string]any:
		if va, ok := a.(map[string]any); ok {
			return objectPatch(va, vb)
		}
	case []any:
		if va, ok := a.([]any); ok {
			return arrayPatch(va, vb)
		}
	default:
		if a == b { // strings, json.Numbers, bools, nil
			return nil, false
		}
	}
	return setNode(b), true
}

func objectPatch(a, b map[string]any) (any, bool) {
	changed := map[string]any{}
	for k, vb := range b {
		va, ok := a[k]
		if !ok {
			changed[k] = setNode(vb)
			continue
		}
		if p, diff := valuePatch(va, vb); diff {
			changed[k] = p
		}
	}
	var gone []string
	for k := range a {
		if _, ok := b[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(changed) == 0 && len(gone) == 0 {
		return nil, false
	}
	node := map[string]any{}
	if len(changed) > 0 {
		node["o"] = changed
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		node["d"] = gone
	}
	return node, true
}

// arrayPatch patches element by element and appends what b adds. A series
// only grows while playing; an array that shrank, or whose old elements
// were mostly replaced (a moved axis), is sent whole, which is then
// smaller.
func arrayPatch(a, b []any) (any, bool) {
	if len(b) < len(a) {
		return setNode(b), true
	}
	changed := map[string]any{}
	replaced := 0
	for i := range a {
		if p, diff := valuePatch(a[i], b[i]); diff {
			changed[strconv.Itoa(i)] = p
			if _, set := p.(map[string]any)["="]; set {
				replaced++
			}
		}
	}
	if len(a) > 0 && 2*replaced > len(a) {
		return setNode(b), true
	}
	if len(changed) == 0 && len(b) == len(a) {
		return nil, false
	}
	node := map[string]any{}
	if len(changed) > 0 {
		node["a"] = changed
	}
	if len(b) > len(a) {
		node["p"] = b[len(a):]
	}
	return node, true
}
