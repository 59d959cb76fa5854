package web

import (
	"net/http"
	"strings"
	"testing"
)

// postCommand sends one command for the test tab to a running test server
// and requires the 204 every accepted command answers.
func postCommand(t *testing.T, base, verb, rest string) {
	t.Helper()
	res, err := http.Post(base+"/lab/cmd/"+verb, "application/json", strings.NewReader(`{"tab":"`+testTab+`"`+rest+`}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("%s: status %d", verb, res.StatusCode)
	}
}
