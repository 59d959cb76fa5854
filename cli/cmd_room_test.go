package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoomReplay(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "rec.json")
	rec := `{"room":"K7QX2M","entries":[
{"t":1000,"kind":"start","state":{"preset":"search-cache","anchor":0,"anchorAt":0,"playing":false,"speed":"1"}},
{"t":65000,"kind":"reveal","state":{"preset":"search-cache","anchor":5,"anchorAt":65000,"playing":true,"speed":"16",
 "question":{"id":"abc","kind":"ejected","host":"h5","text":"Is h5 ejected at 60 s?","choices":["yes","no"],"atMs":60000,"hold":5,
 "revealed":true,"answer":"no","hist":[{"answer":"yes","n":19},{"answer":"no","n":11,"right":true}],"total":30}}}]}`
	if err := os.WriteFile(p, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if rc := Dispatch([]string{"room", "replay", p}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for _, want := range []string{"workshop K7QX2M: 2 entries", "00:00  start    preset search-cache, paused at frame 0",
		"01:04  reveal   preset search-cache, playing ×16 at frame 5; question Is h5 ejected at 60 s? — engine: no; room: yes 19, no 11"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if rc := Dispatch([]string{"room", "replay", filepath.Join(t.TempDir(), "none.json")}, &out, &errb); rc != 2 {
		t.Errorf("missing file: rc %d", rc)
	}
	for name, body := range map[string]string{"broken.json": `{"room":`, "entries.json": `{"room":"ABCDEF","entries":[1]}`} {
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		errb.Reset()
		if rc := Dispatch([]string{"room", "replay", f}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "not a") {
			t.Errorf("%s: rc %d, %q", name, rc, errb.String())
		}
	}
	if rc := Dispatch([]string{"room"}, &out, &errb); rc != 2 {
		t.Errorf("no subcommand: rc %d", rc)
	}
}
