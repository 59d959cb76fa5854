// Package browsertest drives a headless Chromium against a test server
// for the browser tests of every web package: one browser per test, with
// helpers that fail the test with what they were waiting for, and a check
// that the page asked no other host for anything.
package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium on a test server, with helpers that
// fail the test with what they were waiting for.
type Browser struct {
	T   *testing.T
	Ctx context.Context
	URL string

	mu                     sync.Mutex
	foreign, consoleErrors []string
}

// Start serves h on a test server and starts Chromium on it, or skips
// the test (in -short mode, or without Chromium); shutdown ends the
// server's open streams before it closes.
func Start(t *testing.T, h http.Handler, shutdown func(), width, height int) *Browser {
	t.Helper()
	SkipWithoutChromium(t)
	ts := httptest.NewServer(h)
	// Cleanups run last-registered first: the browser goes, then the
	// streams end, then the server closes. The other order hangs Close on
	// the open stream (stack-notes §5).
	t.Cleanup(ts.Close)
	t.Cleanup(shutdown)

	bctx := StartChromium(t, width, height)
	b := &Browser{T: t, URL: ts.URL}
	if err := b.listen(bctx); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	t.Cleanup(cancel)
	b.Ctx = ctx
	return b
}

// Tab is a tab of its own (a new browser context: a laptop of a room) in
// the Chromium of bctx, on base, for limit.
func Tab(t *testing.T, bctx context.Context, base string, limit time.Duration) *Browser {
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &Browser{T: t, URL: base}
	if err := b.listen(ctx); err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, limit)
	t.Cleanup(cancelT)
	b.Ctx = ctx
	return b
}

// listen records what the page of ctx asks of other hosts than b.URL's,
// and the errors it throws or logs (CheckOffline).
func (b *Browser) listen(ctx context.Context) error {
	origin, _ := url.Parse(b.URL)
	return chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(e.Request.URL)
			if err != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Host != origin.Host) {
				b.foreign = append(b.foreign, e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			b.consoleErrors = append(b.consoleErrors, e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.consoleErrors = append(b.consoleErrors, strings.Join(parts, " "))
			}
		}
	})
}

// On is the browser for a subtest: its failures are the subtest's.
func (b *Browser) On(t *testing.T) *Browser { return &Browser{T: t, Ctx: b.Ctx, URL: b.URL} }

// Step runs actions, failing the test with what they were for.
func (b *Browser) Step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates js on the page.
func (b *Browser) Eval(js string) string {
	b.T.Helper()
	v, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.T.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// Poll waits for js to be true on the page.
func (b *Browser) Poll(what, js string) {
	b.T.Helper()
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		b.T.Fatalf("waiting for %s (%s): %v", what, js, err)
	}
}

// CheckOffline fails the test if the page asked another host for anything
// or logged an error.
func (b *Browser) CheckOffline() {
	b.T.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.foreign) > 0 {
		b.T.Errorf("the page made requests to other hosts: %v", b.foreign)
	}
	if len(b.consoleErrors) > 0 {
		b.T.Errorf("console errors: %v", b.consoleErrors)
	}
}

// SkipWithoutChromium skips a browser test in -short mode or where
// Chromium is not installed.
func SkipWithoutChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	if FindChromium() == "" {
		t.Skip("chromium not found (install it with `apt-get install -y chromium`; .ci/run does): browser test skipped")
	}
}

// StartChromium starts a headless Chromium with its own profile, a window
// of width×height, and returns its context (skipping the test where it
// cannot run); it ends with the test. Pages of their own (a room's
// laptops) are new contexts of it (roomBrowser).
func StartChromium(t *testing.T, width, height int) context.Context {
	t.Helper()
	SkipWithoutChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(FindChromium()),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	return bctx
}

// FindChromium is the path of a Chromium, or "".
func FindChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
