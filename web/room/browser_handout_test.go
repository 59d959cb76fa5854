package room

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"outlierlab/web/internal/browsertest"
)

// TestBrowserHandoutPrints: a room ran the lightning plan and revealed its
// first question; its handout, in headless Chromium, draws every chart in
// SVG, and prints (Chromium's print to PDF, A4 and Letter) to a PDF of a
// reasonable number of pages in which no figure is cut across two pages
// (read back with pdftotext: each figure's number and the sentence under
// its chart on one page) and no text is under 9 pt (in the print media's
// layout, HTML and the charts' own SVG text alike). The Print button is
// reached by keyboard; the page is looked at on a phone, a small laptop
// and a desktop (screenshots in $TMPDIR).
func TestBrowserHandoutPrints(t *testing.T) {
	browsertest.SkipWithoutChromium(t)
	l := planLab(t)
	_, code, key, _ := startPlanRoom(t, l, "plan:lightning")
	askScene1(t, l, code, key, `{"scene":0}`, nil)
	scenes := len(l.S.plans.Plan("lightning").Scenes)
	b := browsertest.Laptops(t, l.TS.URL, 1)[0]

	b.Step("1280×720, the present page", chromedp.EmulateViewport(1280, 720), chromedp.Navigate(b.URL+"/r/"+code+"/present?key="+key),
		chromedp.WaitVisible(chromedp.CSS("#room-handout-link")))
	if got := b.Eval(`document.getElementById('room-handout-link').getAttribute('href')`); got != "/r/"+code+"/handout" {
		t.Errorf("the present page's handout link goes to %q", got)
	}
	viewShot(t, b, "outlierlab-handout-present.png")
	b.Step("the handout", chromedp.Navigate(b.URL+"/r/"+code+"/handout"))
	b.Poll("every chart drawn in SVG", drawnInSVG)
	if got := b.Eval(`String(document.querySelectorAll('.handout .chart svg').length)`); got != fmt.Sprint(3*scenes) {
		t.Fatalf("%s SVG charts, want %d", got, 3*scenes)
	}
	if got := b.Eval(`document.querySelector('#scene-one-bad-host .room-hist').textContent.replace(/\s+/g, ' ').trim()`); got != "yes 1 no 2 ✓ the engine's answer" {
		t.Errorf("the room's histogram reads %q", got)
	}
	viewShot(t, b, "outlierlab-handout-1280.png")
	b.CheckOffline()

	// Keyboard: the Print button is among the first few stops.
	const maxTabs = 12
	for i := 0; i < maxTabs && b.Eval(`document.activeElement ? document.activeElement.id : ''`) != "btn-print"; i++ {
		b.Step("tab", chromedp.KeyEvent("\t"))
	}
	if b.Eval(`document.activeElement.id`) != "btn-print" {
		t.Errorf("the Print button is not reached by %d tabs", maxTabs)
	}

	b.Step("print media", emulateMedia("print"))
	// The print layout: the site's header is gone, every figure keeps to
	// a page (it is shorter than one, and asks not to be broken) and fits
	// the narrowest page's width (A4 inside 12 mm margins: 703 px).
	layout := b.Eval(`(() => {
		const out = [];
		if (getComputedStyle(document.querySelector('header.top')).display !== 'none') out.push('the site header prints');
		for (const f of document.querySelectorAll('.handout-fig, .handout-q')) {
			const r = f.getBoundingClientRect();
			if (getComputedStyle(f).breakInside !== 'avoid') out.push(f.id + ' may break');
			if (r.height > 900 || r.width > 703) out.push(f.id + ' is ' + Math.round(r.width) + '×' + Math.round(r.height));
		}
		for (const svg of document.querySelectorAll('.handout .chart svg')) {
			const box = svg.parentElement.parentElement.getBoundingClientRect(), r = svg.getBoundingClientRect();
			if (r.right > box.right + 1 || r.bottom > box.bottom + 1) out.push(svg.closest('.chart').id + ' overflows its box');
		}
		return out.join('; ');
	})()`)
	if layout != "" {
		t.Errorf("print layout: %s", layout)
	}
	// The look test's rule (browser_look_pages_test.go), in print: the
	// SVG charts' own text is text on the page.
	if small := b.Eval(browsertest.SmallText); small != "" {
		t.Errorf("text under 9 pt (12 px) in print: %s", small)
	}

	for _, paper := range []struct {
		name string
		size chromedp.PaperSize
	}{{"A4", chromedp.PaperA4}, {"Letter", chromedp.PaperLetter}} {
		pdf, err := chromedp.Run(b.Ctx, chromedp.PrintToPDF(chromedp.PDFPaper(paper.size)))
		if err != nil {
			t.Fatalf("print to PDF (%s): %v", paper.name, err)
		}
		pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(pdf, -1))
		// A scene is its title, three charts, its question and its YAML:
		// more than a page, less than three.
		if !strings.HasPrefix(string(pdf), "%PDF-") || pages < scenes || pages > 3*scenes {
			t.Errorf("%s: %d pages for %d scenes", paper.name, pages, scenes)
		}
		path := filepath.Join(t.TempDir(), "handout-"+paper.name+".pdf")
		if err := os.WriteFile(path, pdf, 0o644); err != nil {
			t.Fatal(err)
		}
		if keep := os.Getenv("OUTLIERLAB_HANDOUT_PDF"); keep != "" {
			_ = os.WriteFile(keep+"-"+paper.name+".pdf", pdf, 0o644)
		}
		checkFiguresWhole(t, b, path, paper.name)
	}

	b.Step("screen media", emulateMedia(""))
	for _, size := range [][2]int64{{853, 480}, {390, 844}} {
		b.Step(fmt.Sprintf("%d×%d", size[0], size[1]), chromedp.EmulateViewport(size[0], size[1]), chromedp.Reload())
		b.Poll("every chart drawn in SVG", drawnInSVG)
		if got := b.Eval(`String(document.documentElement.scrollWidth <= window.innerWidth)`); got != "true" {
			t.Errorf("%d×%d: the page scrolls sideways", size[0], size[1])
		}
		viewShot(t, b, fmt.Sprintf("outlierlab-handout-%d.png", size[0]))
	}
	b.CheckOffline()
}

// drawnInSVG holds once every chart box of the handout holds an SVG with
// text (ECharts has drawn it with the SVG renderer).
const drawnInSVG = `(() => { const c = [...document.querySelectorAll('.handout .chart')]; return c.length > 0 && c.every(el => el.querySelector('svg text') && +el.dataset.legendH > 0) })()`

// checkFiguresWhole reads the PDF's text page by page (pdftotext) and
// fails the test for a figure whose number ("Figure 2.3") stands on one
// page and the sentence under its chart not after it on the same page:
// the figure was cut across two pages.
func checkFiguresWhole(t *testing.T, b *browser, path, paper string) {
	t.Helper()
	tool, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext not found: .ci/run installs poppler-utils")
		}
		t.Logf("pdftotext not found (apt-get install poppler-utils; .ci/run does): the PDF's pages not read back")
		return
	}
	out, err := exec.Command(tool, path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	pages := strings.Split(string(out), "\f")
	figs := b.Eval(`JSON.stringify([...document.querySelectorAll('.handout-fig')].map(f => [f.querySelector('.handout-n').textContent, f.querySelector('.handout-alt').textContent]))`)
	var list [][2]string
	if err := json.Unmarshal([]byte(figs), &list); err != nil || len(list) == 0 {
		t.Fatalf("figures %s: %v", figs, err)
	}
	for _, f := range list {
		label, alt := norm(f[0])+" ", norm(f[1])
		found := false
		for i, p := range pages {
			p = norm(p)
			at := strings.Index(p, label)
			if at < 0 {
				continue
			}
			found = true
			if !strings.Contains(p[at:], alt) {
				t.Errorf("%s: %s starts on page %d and its chart's sentence %q is not under it there", paper, strings.TrimSpace(label), i+1, alt)
			}
		}
		if !found {
			t.Errorf("%s: %s is on no page", paper, label)
		}
	}
}

// emulateMedia has the page laid out for media ("print"; "" for the
// screen again).
func emulateMedia(media string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: media})
		return chromedp.Void{}, err
	}
}
