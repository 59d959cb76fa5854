package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// Stream writes what Run then Write* write, byte for byte, for every
// preset and format.
func TestStreamSameAsRun(t *testing.T) {
	formats := []struct {
		name   string
		whole  func(io.Writer, Result) error
		stream func(io.Writer) FrameWriter
	}{
		{"json", WriteJSONLines, NewJSONLinesWriter},
		{"csv", WriteCSV, NewCSVWriter},
		{"text", WriteText, NewTextWriter},
	}
	for _, p := range Presets() {
		res, err := Run(p.Scenario(), p.Outlier, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range formats {
			var whole, streamed bytes.Buffer
			if err := f.whole(&whole, res); err != nil {
				t.Fatal(err)
			}
			sum, err := Stream(p.Scenario(), p.Outlier, 1, f.stream(&streamed))
			if err != nil {
				t.Fatal(err)
			}
			if sum != res.Summary {
				t.Errorf("%s: Stream's summary %+v, Run's %+v", p.Name, sum, res.Summary)
			}
			if !bytes.Equal(streamed.Bytes(), whole.Bytes()) {
				t.Errorf("%s -format %s: Stream wrote %d bytes, Run then Write %d, not the same", p.Name, f.name, streamed.Len(), whole.Len())
			}
		}
	}
}

// The JSON lines, written a piece at a time, are what json.Encoder makes of
// a whole frameLine (how they were written before issue 26).
func TestJSONLinesAsEncoder(t *testing.T) {
	for _, p := range Presets() {
		res, err := Run(p.Scenario(), p.Outlier, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		bw := bufio.NewWriter(&want)
		enc := json.NewEncoder(bw)
		events := 0
		for _, f := range res.Frames {
			l := frameLine{Frame: f, Events: make([]EventLine, len(f.Events)), Stats: statsJSON(f.Stats)}
			for i, e := range f.Events {
				l.Events[i] = NewEventLine(e)
			}
			events += len(f.Events)
			if err := enc.Encode(l); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Encode(map[string]summaryLine{"summary": {res.Summary, statsJSON(res.Summary.Stats)}}); err != nil {
			t.Fatal(err)
		}
		_ = bw.Flush()
		var got bytes.Buffer
		if err := WriteJSONLines(&got, res); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (%d events): WriteJSONLines differs from json.Encoder's lines:\n%s\nwant\n%s", p.Name, events, head(got.String()), head(want.String()))
		}
	}
}

func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
