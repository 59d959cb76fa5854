// Package gosrc reads the web layer's own Go source for the tests that
// hold rules no compiler checks (no hand-picked status, no embedding
// between features).
package gosrc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Each calls visit with every Go file below root but tests, parsed, and
// the file set that places its nodes; skip names directories to leave out
// (as root joined with them, slash-separated). It fails the test when it
// read fewer than least files: a rule checked over nothing holds
// vacuously.
func Each(t *testing.T, root string, least int, skip []string, visit func(fset *token.FileSet, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			for _, s := range skip {
				if filepath.ToSlash(p) == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		visit(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < least {
		t.Fatalf("read %d Go files below %s (want at least %d): not the tree this test is meant for", files, root, least)
	}
}
