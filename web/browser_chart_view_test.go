package web

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserChartHeldOutOfView: a chart out of the window is given no
// option while it is out (js/chart.js give: a slider move merged six
// charts nobody saw, issue 26), and scrolled in it shows the last one
// whole. On 8 hosts, the hosts slider moves to 6 while the chart is out
// (a new shape: ECharts must drop the old option, not merge into it),
// then the cap (the same shape: merged); scrolled in, the chart must
// have exactly the 6 hosts' series, none of the 8's left over.
func TestBrowserChartHeldOutOfView(t *testing.T) {
	b := startBrowser(t, 1280, 800)
	step, eval, poll := b.Step, b.Eval, b.Poll
	step("open /lab on 8 hosts at 300 s", chromedp.Navigate(b.URL+"/lab?preset=search-cache&hosts=8&t=300"), chromedp.WaitVisible(chromedp.CSS("#chart-lanes canvas")))
	// A chart with a series per host, shown on the page, out of view.
	id := eval(`(() => { const el = [...document.querySelectorAll('olab-chart')].reverse().find((e) =>
		e.chart && e.visible === false && e.checkVisibility() && e.option && e.option.series.some((s) => /^h\d+$/.test(s.name)));
		return el ? el.id : '' })()`)
	if id == "" {
		t.Fatal("no chart with a line per host out of view at 1280×800")
	}
	el := `document.getElementById('` + id + `')`
	hostSeries := func(of string) string {
		return `(` + of + `).series.filter((s) => /^h\d+$/.test(s.name)).map((s) => s.name).join(' ')`
	}
	eval(`(() => { const c = ` + el + `.chart, set = c.setOption; window.t_sets = 0;
		c.setOption = function (...a) { window.t_sets++; return set.apply(this, a) }; return 'ok' })()`)
	hosts := func(n string) {
		t.Helper()
		eval(`(() => { const s = document.getElementById('c-hosts'); s.value = '` + n + `'; s.dispatchEvent(new Event('input', { bubbles: true })); return 'ok' })()`)
		poll("the lanes at "+n+" hosts", `echarts.getInstanceByDom(document.getElementById('chart-lanes')).getOption().yAxis[0].data.length === `+n)
		poll(id+"'s option from the server at "+n+" hosts", hostSeries(el+`.option`)+`.split(' ').length === `+n)
	}
	hosts("6")
	// Then a move of the same shape (merged; at 34% the cap lets h5 go):
	// the chart must still drop the 8 hosts' option it was given last.
	eval(`(() => { window.t_was = JSON.stringify(` + el + `.option); const s = document.getElementById('c-max_ejection_percent');
		s.value = '34'; s.dispatchEvent(new Event('input', { bubbles: true })); return 'ok' })()`)
	poll(id+"'s option at the cap of 34%", `JSON.stringify(`+el+`.option) !== window.t_was`)
	if got := eval(`String(window.t_sets) + ' ' + String(!!` + el + `.pending)`); got != "0 true" {
		t.Errorf("%s out of view: %s setOption calls, held option (want 0 true)", id, got)
	}
	step("scroll "+id+" in", chromedp.ScrollIntoView(chromedp.CSS("#"+id)))
	poll(id+" given its option", `!`+el+`.pending && window.t_sets > 0`)
	want := "h0 h1 h2 h3 h4 h5"
	// getOption is ECharts' own (the wrapper has nothing left to give).
	if got := eval(hostSeries(el + `.chart.getOption()`)); got != want {
		t.Errorf("%s scrolled in shows the host series %q, want %q (an 8 hosts' option merged into?)", id, got, want)
	}
	if got, want := eval(`String(`+el+`.chart.getOption().series.length)`), eval(`String(`+el+`.fitted.series.length)`); got != want {
		t.Errorf("%s scrolled in has %s series, its last option %s", id, got, want)
	}
}
