package tools

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"outlierlab/web/httperr"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 34, item 3: a what-if upload over 1 MiB was spilled to
// os.TempDir() by multipart's parser and failed with 400 in a container
// whose root is read-only. The form is read as it streams in, within the
// 4 MiB bound: a 2 MiB log arrives whole with no writable $TMPDIR, beside
// the form's other fields; past the bound it is still a 413.
func TestWhatifUploadNeedsNoTempDir(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(notADir, "tmp")) // nothing can be made under a file, root or not
	if _, err := os.CreateTemp("", "probe-"); err == nil {
		t.Fatal("the temporary directory can be written")
	}
	line := `[2024-05-01T10:00:00.000Z] "GET /search HTTP/1.1" 200 - 0 10 3 2 "-" "curl" "id" "search" "10.0.0.5:8080"` + "\n"
	post := func(log []byte, events string) (whatifForm, int, error) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.WriteField("cluster", " search ")
		_ = mw.WriteField("seed", "7")
		fw, _ := mw.CreateFormFile("log", "access.log")
		_, _ = fw.Write(log)
		if events != "" {
			fw, _ = mw.CreateFormFile("events", "events.txt")
			_, _ = fw.Write([]byte(events))
		}
		_ = mw.WriteField("config", "clusters: []")
		_ = mw.Close()
		r := httptest.NewRequest(http.MethodPost, "/whatif", &b)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		f, k, err := readWhatifForm(httptest.NewRecorder(), r)
		return f, httperr.Status[k], err
	}
	log := bytes.Repeat([]byte(line), (2<<20)/len(line)+1)
	f, status, err := post(log, "20.9 eject 10.0.0.5\n")
	if err != nil {
		t.Fatalf("a %d-byte log with no writable TMPDIR: %d %v", len(log), status, err)
	}
	if !bytes.Equal(f.log, log) || f.cluster != "search" || f.seed != 7 || f.config != "clusters: []" || string(f.events) != "20.9 eject 10.0.0.5\n" {
		t.Errorf("the form read: log %d bytes (want %d), cluster %q, seed %d, config %q, events %q", len(f.log), len(log), f.cluster, f.seed, f.config, f.events)
	}
	if _, status, err := post(bytes.Repeat([]byte(line), MaxWhatifBytes/len(line)+10), ""); status != http.StatusRequestEntityTooLarge || err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("a log past the bound: %d %v", status, err)
	}
}
