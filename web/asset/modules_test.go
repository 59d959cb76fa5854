package asset

import (
	"strings"
	"testing"
	"testing/fstest"
)

func load(t *testing.T, files map[string]string) (*Assets, error) {
	t.Helper()
	m := fstest.MapFS{}
	for name, body := range files {
		m["static/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return LoadAssets(m)
}

// A module's relative imports are rewritten to their hashed URLs, and a
// change in an imported module changes the importer's hash too (the page
// names only the entry's URL).
func TestModuleImportsHashed(t *testing.T) {
	files := map[string]string{
		"js/main.js":  "import './a.js';\nimport { b } from \"./sub/b.js\";\nb();\n",
		"js/a.js":     "import { b } from './sub/b.js';\nexport const a = b;\n",
		"js/sub/b.js": "export function b() { return 1; }\n",
		"app.css":     "body { color: red; }\n",
	}
	a, err := load(t, files)
	if err != nil {
		t.Fatal(err)
	}
	b := a.byName["js/sub/b.js"]
	main := string(a.byName["js/main.js"].body)
	for _, want := range []string{"'./a.js?v=" + a.byName["js/a.js"].hash + "'", `"./sub/b.js?v=` + b.hash + `"`} {
		if !strings.Contains(main, want) {
			t.Errorf("main.js does not import %s:\n%s", want, main)
		}
	}
	if ct := a.byName["js/main.js"].ctype; !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("a module served as %q", ct)
	}
	if got := a.Modules("js/main.js"); len(got) != 2 || got[0] != a.URL("js/a.js") || got[1] != a.URL("js/sub/b.js") {
		t.Errorf("the modules to preload: %v", got)
	}
	before := a.URL("js/main.js")
	files["js/sub/b.js"] = "export function b() { return 2; }\n"
	a2, err := load(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if a2.URL("js/main.js") == before {
		t.Errorf("main.js kept its URL %s when a module it imports through a.js changed", before)
	}
	if a2.URL("app.css") != a.URL("app.css") {
		t.Errorf("a file that imports nothing changed its URL")
	}
}

func TestModuleImportsRefused(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"missing": {"js/main.js": "import './gone.js';\n"},
		"cycle":   {"js/a.js": "import './b.js';\n", "js/b.js": "import './a.js';\n"},
	} {
		if _, err := load(t, files); err == nil {
			t.Errorf("%s: loaded, want an error", name)
		}
	}
}
