package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The public traces: a copy in the repository (so a clean clone never skips
// them) and the shared folder next to the checkout when it is there (it may
// hold traces newer than the copy). A trace in both places runs from the
// shared folder only. The gRPC-dialect traces, recorded from the real
// grpc-go balancer, live in the grpc subfolder of each.
const (
	ownConformanceDir    = "testdata/conformance"
	sharedConformanceDir = "../../../shared/conformance"
)

// conformanceSubdirs are the trace folders under each conformance dir.
var conformanceSubdirs = []string{".", "grpc"}

func conformanceFiles(t testing.TB) []string {
	var files []string
	for _, sub := range conformanceSubdirs {
		shared, _ := filepath.Glob(filepath.Join(sharedConformanceDir, sub, "*.json"))
		own, _ := filepath.Glob(filepath.Join(ownConformanceDir, sub, "*.json"))
		seen := map[string]bool{}
		for _, f := range shared {
			seen[filepath.Base(f)] = true
		}
		files = append(files, shared...)
		for _, f := range own {
			if !seen[filepath.Base(f)] {
				files = append(files, f)
			}
		}
		if len(own) == 0 {
			t.Fatalf("no conformance traces in %s: the repository's copy is missing", filepath.Join(ownConformanceDir, sub))
		}
	}
	return files
}

// The repository's copy must match the shared traces where both exist, so
// a clean clone tests what CI tests.
func TestConformanceCopyIsCurrent(t *testing.T) {
	for _, sub := range conformanceSubdirs {
		shared, _ := filepath.Glob(filepath.Join(sharedConformanceDir, sub, "*.json"))
		if len(shared) == 0 {
			t.Skipf("no shared traces at %s to compare the copy with", filepath.Join(sharedConformanceDir, sub))
		}
		own := filepath.Join(ownConformanceDir, sub)
		for _, f := range shared {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(own, filepath.Base(f)))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: the copy in %s is missing or differs; cp %s %s/", filepath.Base(f), own, f, own)
			}
		}
	}
}

// Every public trace must replay to exactly its expected events and stats.
func TestConformanceTraces(t *testing.T) {
	for _, file := range conformanceFiles(t) {
		name, _ := filepath.Rel(ownConformanceDir, file)
		if strings.HasPrefix(file, sharedConformanceDir) {
			name, _ = filepath.Rel(sharedConformanceDir, file)
		}
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseBytes(b)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if tr.Expect == nil {
				t.Fatal("trace has no expect")
			}
			checkExpect(t, tr)
		})
	}
}

// checkExpect runs tr and reports each way its output differs from the
// trace's expect.
func checkExpect(t *testing.T, tr *Trace) {
	t.Helper()
	out, err := Run(tr)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, d := range Diff(tr.Expect, out) {
		t.Error(d)
	}
}

func TestMalformedTraces(t *testing.T) {
	tests := []struct {
		name, trace, want string
	}{
		{"not json", `{"name": `, "not valid JSON"},
		{"unknown field", `{"name":"x","hosts":[],"steps":[],"bogus":1}`, `unknown field "bogus"`},
		{"wrong type", `{"name":"x","hosts":"h0","steps":[]}`, `field "hosts"`},
		{"two actions", `{"hosts":["h0"],"steps":[{"at_ms":0,"tick":true,"snapshot":"s"}]}`, "steps[0]: has 2 actions"},
		{"no action", `{"hosts":["h0"],"steps":[{"at_ms":0}]}`, "steps[0]: has 0 actions"},
		{"time goes back", `{"hosts":["h0"],"steps":[{"at_ms":5,"tick":true},{"at_ms":4,"tick":true}]}`, "steps[1].at_ms: 4 is before"},
		{"negative time", `{"hosts":["h0"],"steps":[{"at_ms":-1,"tick":true}]}`, "steps[0].at_ms: -1 is negative"},
		{"bad code", `{"hosts":["h0"],"steps":[{"at_ms":0,"http":{"host":"h0","code":42}}]}`, "steps[0].http.code: 42 is out of range (allowed 100–999)"},
		{"bad times", `{"hosts":["h0"],"steps":[{"at_ms":0,"http":{"host":"h0","code":200,"times":0}}]}`, "steps[0].http.times: 0 is out of range"},
		{"bad local result", `{"hosts":["h0"],"steps":[{"at_ms":0,"local":{"host":"h0","result":"boom"}}]}`, `steps[0].local.result: "boom" is not one of`},
		{"duplicate host", `{"hosts":["h0","h0"],"steps":[]}`, `hosts[1]: duplicate host "h0"`},
		{"trailing data", `{"hosts":[],"steps":[]} {}`, "trailing data"},
		{"bad dialect", `{"dialect":"istio","hosts":[],"steps":[]}`, `dialect: "istio" is not one of envoy, grpc`},
		{"grpc http step", `{"dialect":"grpc","hosts":["h0"],"steps":[{"at_ms":0,"http":{"host":"h0","code":503}}]}`, "steps[0].http: the grpc dialect takes RPC outcomes as ext steps"},
		{"grpc local step", `{"dialect":"grpc","hosts":["h0"],"steps":[{"at_ms":0,"local":{"host":"h0","result":"timeout"}}]}`, "steps[0].local: the grpc dialect has no local-origin results"},
		{"grpc active hc", `{"dialect":"grpc","hosts":["h0"],"steps":[{"at_ms":0,"active_hc":{"host":"h0","healthy":true}}]}`, "steps[0].active_hc: the grpc dialect has no active health check"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBytes([]byte(tc.trace))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRunErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name, trace, want string
	}{
		{"unknown host", `{"hosts":["h0"],"steps":[{"at_ms":0,"http":{"host":"h9","code":200}}]}`, `steps[0].http.host: unknown host "h9"`},
		{"removed host", `{"hosts":["h0"],"steps":[{"at_ms":0,"remove_host":"h0"},{"at_ms":0,"ext":{"host":"h0","result":"request_failed"}}]}`, `steps[1].ext.host: unknown host "h0"`},
		{"add twice", `{"hosts":["h0"],"steps":[{"at_ms":0,"add_host":"h0"}]}`, `steps[0].add_host: host "h0" is already`},
		{"cap over 100", `{"config":{"max_ejection_percent":101},"hosts":[],"steps":[]}`, "max_ejection_percent"},
		{"max below base", `{"config":{"base_ejection_time":"60s","max_ejection_time":"30s"},"hosts":[],"steps":[]}`, "max_ejection_time"},
		{"unknown config field", `{"config":{"consecutive5xx_typo":1},"hosts":[],"steps":[]}`, "consecutive5xx_typo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseBytes([]byte(tc.trace))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = Run(tr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// The replay output is the documented format: a snapshot lists every stat,
// zeros included, and an uneject carries no detector.
func TestOutputFormat(t *testing.T) {
	tr, err := ParseBytes([]byte(`{"name":"n","config":{"max_ejection_percent":100},"hosts":["h0","h1"],"steps":[
		{"at_ms":0,"http":{"host":"h0","code":503,"times":5}},
		{"at_ms":40000,"tick":true},
		{"at_ms":40000,"snapshot":"after"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{0, "h0", "detect", "consecutive_gateway_failure"},
		{0, "h0", "eject", "consecutive_5xx"},
		{40000, "h0", "uneject", ""},
	}
	if len(out.Events) != len(want) {
		t.Fatalf("events %+v", out.Events)
	}
	for i := range want {
		if out.Events[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, out.Events[i], want[i])
		}
	}
	s := out.Snapshots[0]
	if len(s.Stats) != 21 || s.Stats["ejections_enforced_total"] != 1 || s.Stats["ejections_overflow"] != 0 {
		t.Errorf("stats %v", s.Stats)
	}
	if _, ok := s.Stats["ejections_overflow"]; !ok {
		t.Error("zero stats must be listed")
	}
}

func FuzzParseTrace(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(ownConformanceDir, "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"hosts":["h0"],"steps":[{"at_ms":0,"local":{"host":"h0","result":"timeout","times":5}},{"at_ms":10000,"tick":true}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseBytes(b)
		if err != nil {
			return
		}
		total := 0
		for _, s := range tr.Steps {
			for _, p := range []*int{timesOf(s)} {
				total += times(p)
			}
		}
		if total > 100_000 {
			return // valid but slow; not what the fuzzer is for
		}
		if _, err := Run(tr); err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

func timesOf(s Step) *int {
	switch {
	case s.HTTP != nil:
		return s.HTTP.Times
	case s.Local != nil:
		return s.Local.Times
	case s.Ext != nil:
		return s.Ext.Times
	}
	return nil
}

// The lab's own traces (testdata/traces): an empty cluster (Envoy's
// EmptySuccessRate) and a gRPC trace on the real clock.
func TestOwnTraces(t *testing.T) {
	files, _ := filepath.Glob("testdata/traces/*.json")
	if len(files) < 2 {
		t.Fatalf("own traces: %v", files)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseBytes(b)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if err := tr.CheckNotEmpty(); err != nil {
				t.Fatalf("CheckNotEmpty: %v", err)
			}
			checkExpect(t, tr)
		})
	}
}

// "hosts": [] is a cluster with no hosts; a trace without "hosts" and no
// add_host is still refused.
func TestEmptyHosts(t *testing.T) {
	for _, tc := range []struct {
		trace string
		ok    bool
	}{
		{`{"hosts":[],"steps":[{"at_ms":10000,"tick":true}]}`, true},
		{`{"steps":[{"at_ms":10000,"tick":true}]}`, false},
		{`{"steps":[{"at_ms":0,"add_host":"h0"}]}`, true},
		{`{"hosts":[],"steps":[]}`, false},
	} {
		tr, err := ParseBytes([]byte(tc.trace))
		if err != nil {
			t.Fatalf("%s: parse: %v", tc.trace, err)
		}
		if err := tr.CheckNotEmpty(); (err == nil) != tc.ok {
			t.Errorf("%s: CheckNotEmpty = %v, want ok %v", tc.trace, err, tc.ok)
		}
	}
}

// The same grpc steps on either clock: h0, ejected at 10 s for 30 s, is
// back at 40 s on the real clock and at 50 s on the exact one (the
// default, the clock the recorded traces were taken on).
func TestGRPCTraceClock(t *testing.T) {
	steps := `"steps":[` +
		`{"at_ms":5000,"ext":{"host":"h0","result":"request_failed","times":100}},` +
		`{"at_ms":5000,"ext":{"host":"h1","result":"request_success","times":100}},` +
		`{"at_ms":5000,"ext":{"host":"h2","result":"request_success","times":100}},` +
		`{"at_ms":5000,"ext":{"host":"h3","result":"request_success","times":100}},` +
		`{"at_ms":5000,"ext":{"host":"h4","result":"request_success","times":100}},` +
		`{"at_ms":5000,"ext":{"host":"h5","result":"request_success","times":100}},` +
		`{"at_ms":10000,"tick":true},{"at_ms":20000,"tick":true},{"at_ms":30000,"tick":true},` +
		`{"at_ms":40000,"tick":true},{"at_ms":50000,"tick":true}]`
	for _, tc := range []struct{ clock, back string }{{``, "50000"}, {`"clock":"exact",`, "50000"}, {`"clock":"real",`, "40000"}} {
		tr, err := ParseBytes([]byte(`{"dialect":"grpc",` + tc.clock + `"config":{"enforcing_success_rate":0,"enforcing_failure_percentage":100},` +
			`"hosts":["h0","h1","h2","h3","h4","h5"],` + steps + `}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(tr)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Events) != 2 || out.Events[1].Event != "uneject" || fmt.Sprint(out.Events[1].AtMs) != tc.back {
			t.Errorf("clock %q: events %+v, want the uneject at %s", tc.clock, out.Events, tc.back)
		}
	}
	for _, tc := range []struct{ trace, want string }{
		{`{"clock":"real","hosts":[],"steps":[]}`, `clock: "real" is for the grpc dialect`},
		{`{"dialect":"grpc","clock":"fake","hosts":[],"steps":[]}`, `clock: "fake" is not one of real, exact`},
	} {
		if _, err := ParseBytes([]byte(tc.trace)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.trace, err, tc.want)
		}
	}
}
