package templates

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The generated *_templ.go files are committed so the repository builds
// without templ; this test fails when one is stale, naming the command that
// regenerates it.
var fileNames = regexp.MustCompile("FileName: `[^`]*?([^/`]+\\.templ)`")

func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the templ tool")
	}
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .templ files found: %v", err)
	}
	// templ prints nothing with -stdout when the file next to the .templ
	// already holds the same code, so each .templ is generated from a copy
	// in an empty folder. templ only prints with -f when run from the
	// module root. Error positions name the file by the path templ was
	// given, which differs by how it was run, so only the base name is
	// compared.
	tmp := t.TempDir()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(tmp, f)
		if err := os.WriteFile(copyPath, src, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "tool", "templ", "generate", "-include-version=false", "-stdout", "-f", copyPath)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("templ generate %s: %v\n%s", f, err, stderr.String())
		}
		if len(want) == 0 {
			t.Fatalf("templ generate %s printed nothing\n%s", f, stderr.String())
		}
		want = fileNames.ReplaceAll(want, []byte("FileName: `$1`"))
		gen := strings.TrimSuffix(f, ".templ") + "_templ.go"
		got, err := os.ReadFile(gen)
		if err != nil {
			t.Errorf("%s is missing: run `make templ` and commit it", gen)
			continue
		}
		got = fileNames.ReplaceAll(got, []byte("FileName: `$1`"))
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Errorf("%s is stale: run `make templ` and commit it", gen)
		}
	}
}
