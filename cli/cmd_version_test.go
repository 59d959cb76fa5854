package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"outlierlab/web"
)

// syncBuffer is a log both serve and the test use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveIn runs serve in this process with args until the test ends (its
// log in stderr, its human lines in stdout) and returns where it listens.
func serveIn(t *testing.T, stdout, stderr io.Writer, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := parseServe(append([]string{"-addr", "127.0.0.1:0", "-data-dir", dir}, args...), io.Discard, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan serving, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, stdout, stderr, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case s := <-ready:
		return "http://" + s.HTTP
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return ""
}

// jsonLines parses every line of a JSON log, failing on one that is not.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON log line: %q (%v)", line, err)
		}
		out = append(out, m)
	}
	return out
}

// The version is one thing wherever it shows: `outlierlab version`
// (and -version), the first line serve logs, and outlierlab_build_info
// on /metrics.
func TestVersionAgrees(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-4-gabcdef0-dirty"
	var out bytes.Buffer
	if code := Dispatch([]string{"version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "outlierlab v1.2.3-4-gabcdef0-dirty (go") {
		t.Fatalf("version: exit %d, %q", code, out.String())
	}
	var dash bytes.Buffer
	if code := Dispatch([]string{"-version"}, &dash, io.Discard); code != 0 || dash.String() != out.String() {
		t.Errorf("-version: exit %d, %q, want %q", code, dash.String(), out.String())
	}
	var logs syncBuffer
	base := serveIn(t, io.Discard, &logs, "-log-format", "json")
	first := jsonLines(t, logs.String())[0]
	if first["msg"] != "outlierlab starting" || first["version"] != version {
		t.Errorf("serve's first log line: %v", first)
	}
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`(?m)^outlierlab_build_info\{(.*)\} 1$`).FindSubmatch(body)
	if m == nil || !strings.Contains(string(m[1]), `version="`+version+`"`) || !strings.Contains(string(m[1]), `go_version="go`) {
		t.Errorf("no outlierlab_build_info with version %q: %s", version, m)
	}
}

// Where the version comes from: the linker's, else the toolchain's
// stamp, else the commit (-dirty), else (devel).
func TestResolveBuild(t *testing.T) {
	vcs := func(main string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "outlierlab", Version: main}}
		for i := 0; i < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		stamp string
		bi    *debug.BuildInfo
		want  web.BuildInfo
	}{
		{"v1.0.0", vcs("(devel)", "vcs.revision", rev), web.BuildInfo{Version: "v1.0.0", Revision: rev}},
		{"", vcs("v0.0.0-20260101000000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"), web.BuildInfo{Version: "v0.0.0-20260101000000-0123456789ab+dirty", Revision: rev}},
		{"", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"), web.BuildInfo{Version: "0123456789ab-dirty", Revision: rev}},
		{"", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "false"), web.BuildInfo{Version: "0123456789ab", Revision: rev}},
		{"", vcs("(devel)"), web.BuildInfo{Version: "(devel)"}},
		{"", nil, web.BuildInfo{Version: "(devel)"}},
	} {
		if got := resolveBuild(tt.stamp, tt.bi, tt.bi != nil); got != tt.want {
			t.Errorf("resolveBuild(%q, %v) = %+v, want %+v", tt.stamp, tt.bi, got, tt.want)
		}
	}
}
