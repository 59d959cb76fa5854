package web

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"outlierlab/engine/envoyconf"
	"outlierlab/engine/whatif"
)

func TestZZMeasure(t *testing.T) {
	for _, c := range []struct {
		preset string
		vals   map[string]float64
	}{
		{"search-cache", nil},
		{"search-cache", map[string]float64{"hosts": 50, "rps": 3000, "interval": 1}},
		{"flapping", map[string]float64{"hosts": 50, "rps": 3000, "interval": 1}},
		{"flapping", map[string]float64{"hosts": 50, "rps": 3000, "interval": 1, "num_retries": 5, "fault_rate": 1}},
		{"flapping", map[string]float64{"hosts": 1, "rps": 3000, "interval": 60}},
		{"flapping", map[string]float64{"hosts": 50, "rps": 10, "interval": 1}},
	} {
		start := time.Now()
		r, err := buildRun(Inputs{Preset: c.preset}.with(c.vals))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %v: %s, %d frames, %d requests", c.preset, c.vals, time.Since(start), len(r.Frames), r.Result.Summary.Requests)
	}
	for _, hl := range [][2]int{{10, 20000}, {200, 20000}, {2000, 20000}, {50, 2000}} {
		hosts, lines := hl[0], hl[1]
		var b bytes.Buffer
		t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		for i := range lines {
			at := t0.Add(time.Duration(i) * 10 * time.Hour / time.Duration(lines))
			fmt.Fprintf(&b, "[%s] \"GET / HTTP/1.1\" %d - 0 0 4 3 \"-\" \"ua\" \"id\" \"a\" \"10.0.%d.%d:80\"\n", at.Format("2006-01-02T15:04:05.000Z"), 200+300*(i%7/6), i%hosts/250, i%hosts%250)
		}
		start := time.Now()
		c, _ := envoyconf.ParseCluster(nil)
		log, err := whatif.ParseLog(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		parse := time.Since(start)
		res, err := whatif.Run(log, whatif.Options{Config: c.Outlier, PanicThreshold: c.PanicThreshold, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		run := time.Since(start)
		_ = whatifResultView(res, c, true)
		t.Logf("whatif %d hosts %d lines %d bytes: parse %s run %s view %s frames %d", hosts, lines, b.Len(), parse, run, time.Since(start), len(res.Frames))
	}
}
