package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve -plans DIR offers the directory's plans on the home page instead
// of the shipped ones; a malformed plan stops serve, naming the field.
func TestServePlansDir(t *testing.T) {
	dir := t.TempDir()
	plan := "---\ntitle: My own\nsummary: S\nminutes: 5\nscenes:\n  - id: one\n    title: One\n    minutes: 3\n    preset: search-cache\n    cursor: 30s\n---\nOverview.\n"
	if err := os.WriteFile(filepath.Join(dir, "mine.md"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "-addr", "127.0.0.1:0", "-plans", dir)
	res, err := http.Get("http://" + s.HTTP + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), `<option value="plan:mine">My own (5 min)</option>`) || strings.Contains(string(b), "plan:lightning") {
		t.Errorf("the home page's plans: %d\n%s", res.StatusCode, b)
	}

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "bad.md"), []byte(strings.Replace(plan, "preset: search-cache", "preset: nope", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServe([]string{"-addr", "127.0.0.1:0", "-plans", bad, "-data-dir", t.TempDir()}, io.Discard, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := serve(t.Context(), cfg, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "scenes[0] (one).preset") {
		t.Errorf("a malformed plan: %v", err)
	}
}
