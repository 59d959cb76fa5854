package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeRecipe is target's recipe in the Makefile: its lines, tab removed.
func makeRecipe(t *testing.T, makefile, target string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:[^\n]*\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatalf("the Makefile has no target %s", target)
	}
	var out []string
	for line := range strings.SplitSeq(strings.TrimSuffix(m[1], "\n"), "\n") {
		out = append(out, strings.TrimPrefix(line, "\t"))
	}
	return out
}

// The Makefile works in a clone on its own and does what the README says:
// no target reaches outside the repository (../shared is not in every
// clone), make golden rewrites every package's golden files, make build
// and make run stamp the version, make check is the fast loop, and the
// image build passes its VERSION argument to make build; make check and
// make test run staticcheck as go.mod pins it.
func TestMakefile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(raw)
	for i, line := range strings.Split(mk, "\n") {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, "../") {
			t.Errorf("Makefile:%d reaches outside the repository: %s", i+1, line)
		}
	}
	// Every package whose tests use engine/internal/golden (-update; only
	// engine/... may import it).
	var want []string
	err = filepath.WalkDir("engine", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), `"outlierlab/engine/internal/golden"`) {
			if pkg := "./" + filepath.Dir(p); !slices.Contains(want, pkg) {
				want = append(want, pkg)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := strings.Join(makeRecipe(t, mk, "golden"), "\n")
	if len(want) == 0 {
		t.Fatal("no package uses engine/internal/golden")
	}
	for _, pkg := range want {
		if !regexp.MustCompile(regexp.QuoteMeta(pkg) + `( |$)`).MatchString(golden) {
			t.Errorf("make golden does not rewrite %s's golden files: %s", pkg, golden)
		}
	}
	if !strings.Contains(golden, "-update") {
		t.Errorf("make golden: %s", golden)
	}
	if !regexp.MustCompile(`(?m)^VERSION +\?= \$\(shell git describe --tags --always --dirty`).MatchString(mk) ||
		!regexp.MustCompile(`(?m)^LDFLAGS +:= -X outlierlab/cli\.version=\$\(VERSION\)$`).MatchString(mk) {
		t.Error("the Makefile does not take VERSION from git describe into -X outlierlab/cli.version")
	}
	for _, target := range []string{"build", "run"} {
		if r := strings.Join(makeRecipe(t, mk, target), "\n"); !strings.Contains(r, "$(LDFLAGS)") {
			t.Errorf("make %s does not stamp the version: %s", target, r)
		}
	}
	if r := makeRecipe(t, mk, "check"); !slices.Contains(r, "$(GO) vet ./...") || !slices.Contains(r, "$(STATICCHECK) ./...") || !slices.Contains(r, "$(GO) test -short ./...") {
		t.Errorf("make check: %q", r)
	}
	if r := makeRecipe(t, mk, "test"); !slices.Contains(r, "$(STATICCHECK) ./...") {
		t.Errorf("make test runs no staticcheck: %q", r)
	}
	if !regexp.MustCompile(`(?m)^STATICCHECK +:= \$\(GO\) tool staticcheck$`).MatchString(mk) {
		t.Error("the Makefile's staticcheck is not go.mod's tool (go tool staticcheck)")
	}
	for _, f := range regexp.MustCompile(`\S+\.json`).FindAllString(strings.Join(makeRecipe(t, mk, "conformance"), " "), -1) {
		f = strings.ReplaceAll(f, "$(CONFORMANCE)", "engine/replay/testdata/conformance")
		if m, _ := filepath.Glob(f); len(m) == 0 {
			t.Errorf("make conformance: %s matches no trace", f)
		}
	}
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ARG VERSION`).Match(df) || !regexp.MustCompile(`(?m)^RUN make build VERSION="\$VERSION"$`).Match(df) {
		t.Error(`the Dockerfile does not pass its VERSION build argument to make build`)
	}
}
