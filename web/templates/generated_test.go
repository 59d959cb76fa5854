package templates

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The generated *_templ.go files are committed so the repository builds
// without templ; this test fails when one is stale, naming the command that
// regenerates it.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the templ tool")
	}
	files, err := filepath.Glob("*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .templ files found: %v", err)
	}
	for _, f := range files {
		// templ only prints with -f when run from the module root; it then
		// names the file by that path in error positions, which `make templ`
		// (run over the directory) writes as the bare file name.
		cmd := exec.Command("go", "tool", "templ", "generate", "-include-version=false", "-stdout", "-f", "web/templates/"+f)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("templ generate %s: %v\n%s", f, err, stderr.String())
		}
		want = bytes.ReplaceAll(want, []byte("FileName: `web/templates/"), []byte("FileName: `"))
		gen := strings.TrimSuffix(f, ".templ") + "_templ.go"
		got, err := os.ReadFile(gen)
		if err != nil {
			t.Errorf("%s is missing: run `make templ` and commit it", gen)
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Errorf("%s is stale: run `make templ` and commit it", gen)
		}
	}
}
