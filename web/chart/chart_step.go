package chart

import (
	"bytes"
	"encoding/json"
	"strconv"

	"outlierlab/engine/scenario"
	"outlierlab/web/tabstate"
)

// A played frame's patch (chart_patch.go's form) is built from what the
// frames add, not by building every chart's whole option at both cursors
// and diffing them: that cost ≈ 14 M instructions a frame for a tab alone
// (go-echarts' option structs, their maps, their JSON), where what
// changes is a point at the end of each series and a few small parts.
// What a chart's option holds that the cursor moves is, by construction:
//
//   - its series' data, which only grow: Chart.Points over the new frames
//     is what the full build appends, pushed at series[k].data;
//   - its Moving parts (an axis bound, the lanes' labels, the panic
//     shading): each built at both cursors, small, and diffed;
//   - the events series after its own (chartmarks.go), the same for every
//     chart: built at both cursors once and diffed once;
//   - its accessible sentence (aria.label.description).
//
// Everything else in an option is a function of the run alone. The test
// that this equals a rebuild is TestStepPatchEqualsRebuild, over every
// preset and every step; a chart whose option gains some other part that
// moves must add it to Moving, or that test fails.

// StepPatch is the patch for every chart from the options at cursor from
// to those at cursor to, from ≤ to, built from frames [from, to) and the
// few parts that move.
func StepPatch(r *tabstate.Run, from, to int) ([]byte, error) {
	from = min(max(from, 0), len(r.Frames))
	to = min(max(to, from), len(r.Frames))
	a, b := r.Frames[:from], r.Frames[:to]
	events, err := eventsPatch(r, a, b)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for _, c := range List {
		var p pnode
		points := c.Points(r, b, from)
		for k, data := range points {
			if len(data) > 0 {
				v, err := json.Marshal(data)
				if err != nil {
					return nil, err
				}
				p.at("series", k, "data").push = v
			}
		}
		for _, e := range events {
			p.at(append([]any{"series", len(points) + e.series}, e.path...)...).raw = e.patch
		}
		for _, m := range c.Moving {
			if err := p.diff(m.At(r, a), m.At(r, b), m.Path...); err != nil {
				return nil, err
			}
		}
		if err := p.diff(c.Alt(r, a), c.Alt(r, b), "aria", "label", "description"); err != nil {
			return nil, err
		}
		if len(p.kids) == 0 {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		writeKey(&out, strconv.Quote(c.ID))
		p.write(&out)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// eventPatch is a node for the events series: which one (0 the first
// after the chart's own), where below it, and the node.
type eventPatch struct {
	series int
	path   []any
	patch  []byte
}

// eventsPatch are the nodes that bring the events series from frames a to
// frames b: their lines and areas (markerData), diffed once for every
// chart.
func eventsPatch(r *tabstate.Run, a, b []scenario.Frame) ([]eventPatch, error) {
	linesA, areasA := markerData(r, a)
	linesB, areasB := markerData(r, b)
	var out []eventPatch
	add := func(series int, va, vb []any, path ...any) error {
		var p pnode
		if err := p.diff(va, vb); err != nil || p.raw == nil {
			return err
		}
		out = append(out, eventPatch{series, path, p.raw})
		return nil
	}
	for k := range linesB {
		if err := add(k, linesA[k], linesB[k], "markLine", "data"); err != nil {
			return nil, err
		}
	}
	return out, add(0, areasA, areasB, "markArea", "data")
}

// pnode is a patch node being built: raw, a node written whole; or
// children (object members by key, or array elements by index) and the
// elements pushed at an array's end, as JSON array text. An absent or
// null array takes a push as an empty one (js/chart.js's patchValue), as the
// lanes' series are null until their first mark.
type pnode struct {
	raw  []byte
	keys []string // object keys or indices in decimal, the code's own names: no JSON escaping needed
	kids []*pnode
	arr  bool // kids are array elements ("a"), not members ("o")
	push []byte
}

// at is the node at path below n (strings are object keys, ints array
// indices), made on the way where missing.
func (n *pnode) at(path ...any) *pnode {
	for _, step := range path {
		var key string
		switch s := step.(type) {
		case string:
			key = s
		case int:
			key, n.arr = strconv.Itoa(s), true
		}
		i := 0
		for i < len(n.keys) && n.keys[i] != key {
			i++
		}
		if i == len(n.keys) {
			n.keys, n.kids = append(n.keys, key), append(n.kids, &pnode{})
		}
		n = n.kids[i]
	}
	return n
}

// diff puts at path the node that turns value a into b, if they differ.
func (n *pnode) diff(a, b any, path ...any) error {
	va, err := json.Marshal(a)
	if err != nil {
		return err
	}
	vb, err := json.Marshal(b)
	if err != nil {
		return err
	}
	p, changed, err := ValuePatch(va, vb)
	if changed {
		n.at(path...).raw = p
	}
	return err
}

func (n *pnode) write(out *bytes.Buffer) {
	if n.raw != nil {
		out.Write(n.raw)
		return
	}
	out.WriteByte('{')
	if len(n.kids) > 0 {
		if n.arr {
			out.WriteString(`"a":{`)
		} else {
			out.WriteString(`"o":{`)
		}
		for i, k := range n.kids {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteByte('"')
			out.WriteString(n.keys[i])
			out.WriteString(`":`)
			k.write(out)
		}
		out.WriteByte('}')
	}
	if n.push != nil {
		if len(n.kids) > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"p":`)
		out.Write(n.push)
	}
	out.WriteByte('}')
}
