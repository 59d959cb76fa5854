package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"outlierlab/web/internal/gosrc"
)

// The web layer's packages are layered as ARCHITECTURE.md draws them: a
// package may import the ones below it, never one above (nor web itself).
// Checked over each package's dependencies as go list gives them, so an
// indirect import is caught too. The
// feature packages are at the top: the tools' pages (web/tools) stand on
// the page core and the charts, the rooms (web/room) on the lab, and no
// lower package knows of them: the lab imports no room code, and the
// rooms' own parts below them (a room's record, the scenes of a plan, the
// spotlight, the questions, the recording) import neither the rooms nor
// each other's higher ones.
func TestWebLayers(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	// Lowest first; each may import only those before it.
	layers := []string{"outlierlab/web/httperr", "outlierlab/web/memo", "outlierlab/web/clientaddr", "outlierlab/web/tabid", "outlierlab/web/addrlimit", "outlierlab/web/qr", "outlierlab/web/roombus", "outlierlab/web/tabrelay",
		"outlierlab/web/gzipstream", "outlierlab/web/csp", "outlierlab/web/guard", "outlierlab/web/asset", "outlierlab/web/view", "outlierlab/web/glossary", "outlierlab/web/templates", "outlierlab/web/budget", "outlierlab/web/tabstate", "outlierlab/web/lessonbook",
		"outlierlab/web/chart", "outlierlab/web/page", "outlierlab/web/labview", "outlierlab/web/tools", "outlierlab/web/challenges", "outlierlab/web/handout", "outlierlab/web/lab", "outlierlab/web/room/record",
		"outlierlab/web/room/scenes", "outlierlab/web/room/spotlight", "outlierlab/web/room/question", "outlierlab/web/room/recording", "outlierlab/web/room"}
	// Every package of the web layer has its place (a new one is placed
	// here, and so in the house), but web itself, on top, the tests'
	// helpers, and packages of tests only (web/workshopday), which no
	// build imports.
	all, err := exec.Command("go", "list", "-f", "{{if .GoFiles}}{{.ImportPath}}{{end}}", "outlierlab/web/...").Output()
	if err != nil {
		t.Fatalf("go list outlierlab/web/...: %v", err)
	}
	for _, pkg := range strings.Fields(string(all)) {
		if pkg != "outlierlab/web" && !strings.HasPrefix(pkg, "outlierlab/web/internal/") && !slices.Contains(layers, pkg) {
			t.Errorf("%s has no place in the layers", pkg)
		}
	}
	// Every layer's dependencies from one go list (a call a package took
	// a second or so each on a loaded machine): a line a package, its
	// path, then its dependencies, direct or not.
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, layers...)...).Output()
	if err != nil {
		t.Fatalf("go list the layers' dependencies: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f[1:]
	}
	for i, pkg := range layers {
		if _, ok := deps[pkg]; !ok {
			t.Fatalf("go list named no dependencies of %s", pkg)
		}
		allowed := map[string]bool{pkg: true}
		for _, below := range layers[:i] {
			allowed[below] = true
		}
		for _, dep := range deps[pkg] {
			if (dep == "outlierlab/web" || strings.HasPrefix(dep, "outlierlab/web/")) && !allowed[dep] {
				t.Errorf("%s depends on %s, which is not below it", pkg, dep)
			}
		}
	}
}

// No feature reaches another through embedding (issue 37): a type that
// embeds another feature's type reads its fields unseen and shadows its
// methods (Workshops.Routes hid Lab.Routes). The features are the lab
// (web/lab), the rooms (web/room and its parts), the tools (web/tools)
// and the server that holds them (web); a struct of any web package that
// embeds a type of a feature other than its own package fails here. A
// feature names what it uses: a field, or an interface of its own.
func TestNoEmbeddingBetweenFeatures(t *testing.T) {
	t.Parallel()
	feature := func(path string) bool {
		return path == "outlierlab/web" || path == "outlierlab/web/lab" || path == "outlierlab/web/tools" ||
			path == "outlierlab/web/room" || strings.HasPrefix(path, "outlierlab/web/room/")
	}
	gosrc.Each(t, ".", 100, nil, func(fset *token.FileSet, f *ast.File) {
		imports := map[string]string{} // the file's name for a package → its path
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if len(field.Names) > 0 {
					continue
				}
				typ := field.Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				sel, ok := typ.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); ok && feature(imports[x.Name]) {
					t.Errorf("%s: embeds %s.%s, a type of the feature %s: give it a named field (or an interface of its own)", fset.Position(field.Pos()), x.Name, sel.Sel.Name, imports[x.Name])
				}
			}
			return true
		})
	})
}

// The packages make test runs without the race detector (the Makefile's
// RACELESS) share nothing between goroutines: no file of theirs, tests
// included, imports sync or sync/atomic, starts a goroutine or calls
// t.Parallel. A package that starts to goes back under -race by leaving
// the list; until then this fails.
func TestRacelessPackagesShareNothing(t *testing.T) {
	t.Parallel()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, line := range strings.Split(string(mk), "\n") {
		if rest, ok := strings.CutPrefix(line, "RACELESS :="); ok {
			dirs = strings.Fields(rest)
		}
	}
	if len(dirs) == 0 {
		t.Fatal("the Makefile has no RACELESS line: the test reads nothing")
	}
	for _, d := range dirs {
		dir, ok := strings.CutPrefix(d, "./web/")
		if !ok {
			t.Fatalf("RACELESS names %s, not a package under ./web/", d)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Errorf("RACELESS names %s, which has no Go files", d)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == "sync" || p == "sync/atomic" {
					t.Errorf("%s imports %s: its package shares state between goroutines, take it out of RACELESS", fset.Position(im.Pos()), p)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s starts a goroutine: take its package out of RACELESS", fset.Position(n.Pos()))
				case *ast.SelectorExpr:
					if n.Sel.Name == "Parallel" {
						t.Errorf("%s runs tests in parallel: take its package out of RACELESS", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
}
