package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
		}
	}))
	defer ok.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/healthz"
	ln.Close()

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"healthy", []string{"-url", ok.URL + "/healthz"}, 0, "ok "},
		{"answers 503", []string{"-url", sick.URL + "/healthz"}, 1, "503 Service Unavailable"},
		{"nobody listening", []string{"-url", closed}, 1, "connection refused"},
		{"bad timeout", []string{"-timeout", "0s"}, 2, "-timeout: 0s is out of range"},
		{"extra argument", []string{"now"}, 2, `unexpected argument "now"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := runHealthcheck(tc.args, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errOut.String())
			}
		})
	}
}

// Without -url the check asks $PORT on loopback, the port serve listens on
// in the container.
func TestHealthcheckReadsPORT(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	t.Setenv("PORT", port)
	var out, errOut bytes.Buffer
	if code := runHealthcheck(nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), ":"+port+"/healthz") {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
}

// -ready asks for readiness: a serve whose bus is not there yet is live
// (exit 0) and not ready (exit 1, naming why); both answer at once.
func TestHealthcheckReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := "nats://" + ln.Addr().String()
	ln.Close()
	s := startServe(t, "-addr", "127.0.0.1:0", "-nats-url", nowhere)
	_, port, _ := net.SplitHostPort(s.HTTP)
	t.Setenv("PORT", port)
	var out, errOut bytes.Buffer
	if code := runHealthcheck(nil, &out, &errOut); code != 0 {
		t.Fatalf("liveness: exit %d: %s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := runHealthcheck([]string{"-ready"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "/healthz?ready answered 503") {
		t.Fatalf("readiness: exit %d: %s%s", code, out.String(), errOut.String())
	}
}

// The image's entrypoint must let $PORT choose the port (no -addr, which
// would win over it), its health check must run the healthcheck command,
// and the build context must leave a developer's fetched assets out.
func TestDockerfileHonoursPORT(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])$`).FindSubmatch(df)
	if entry == nil {
		t.Fatal("Dockerfile has no exec-form ENTRYPOINT")
	}
	var argv []string
	if err := json.Unmarshal(entry[1], &argv); err != nil {
		t.Fatalf("ENTRYPOINT: %v", err)
	}
	if len(argv) < 2 || argv[1] != "serve" || slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "addr") }) {
		t.Fatalf("ENTRYPOINT %v: want serve without -addr, so $PORT decides", argv)
	}
	env := regexp.MustCompile(`(?m)^ENV PORT=(\d+)$`).FindSubmatch(df)
	if env == nil {
		t.Fatal("Dockerfile sets no ENV PORT")
	}
	getenv := func(k string) string {
		if k == "PORT" {
			return "9090" // docker run -e PORT=9090
		}
		return ""
	}
	if got := serveAddr(defaultAddr, false, getenv); got != ":9090" {
		t.Fatalf("serve with PORT=9090 listens on %q", got)
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/outlierlab", "healthcheck"\]`).Match(df) {
		t.Error("HEALTHCHECK does not run /outlierlab healthcheck")
	}
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"node_modules", "web/static/vendor"} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
}

// The image as podman and a read-only platform need it: every FROM names
// its registry (podman refuses short names), the assets are fetched in a
// layer before the sources are copied (a source change does not fetch
// ECharts again), and the data directory serve uses is a volume.
func TestDockerfileImageAndData(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllSubmatch(df, -1) {
		if reg, _, ok := strings.Cut(string(m[1]), "/"); !ok || !strings.Contains(reg, ".") {
			t.Errorf("FROM %s: not a qualified image name (registry/…)", m[1])
		}
	}
	text := string(df)
	assets, copyAll := strings.Index(text, "\nRUN make assets"), strings.Index(text, "\nCOPY . .")
	if assets < 0 || copyAll < 0 || assets > copyAll {
		t.Error("the assets are not fetched before COPY . . (every source change would fetch them again)")
	}
	dir := regexp.MustCompile(`(?m)^ENV OUTLIERLAB_DATA_DIR=(\S+)$`).FindStringSubmatch(text)
	if dir == nil || !regexp.MustCompile(`(?m)^VOLUME `+regexp.QuoteMeta(dir[1])+`$`).MatchString(text) {
		t.Errorf("the data directory (ENV OUTLIERLAB_DATA_DIR %v) is not a VOLUME", dir)
	}
	if c, err := parseServe(nil, io.Discard, func(k string) string {
		return map[string]string{"OUTLIERLAB_DATA_DIR": dir[1], "PORT": "8080"}[k]
	}); err != nil || c.bus.DataDir != dir[1] {
		t.Errorf("serve in the image keeps workshops in %q (%v), want %s", c.bus.DataDir, err, dir[1])
	}
}
