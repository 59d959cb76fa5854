// outlierlab's own browser code, kept small: the server builds every chart
// option and every sentence, and decides every lesson step; this file only
// hands options to ECharts and fits them to the box, lays out the page's
// parts (the settings drawer, the projector view, a chart as a table, the
// log's filter), maps keys to the transport, reads the status out at most
// once a second, and keeps a learner's lesson progress in this browser.
'use strict';

const $ = (id) => document.getElementById(id);

// ---- A page set up, at its load and in place ----

// onPage runs f when the page has loaded, and again whenever a room's
// stream has patched the page in place to another (web/room's repage: the
// room moved to another lesson, or to the free lab), which then calls
// olabPageShown. Each f sets up what the page's content needs and may run
// twice on the same content (an observer is started once per element:
// observeOnce).
const pageSetUps = [];
function onPage(f) {
  pageSetUps.push(f);
  document.addEventListener('DOMContentLoaded', f);
}
window.olabPageShown = function () {
  window.scrollTo(0, 0); // another page: from its top, as a load would
  // A chart the new page does not have goes with its ECharts instance.
  for (const el of chartEls) {
    if (el.isConnected) continue;
    chartEls.delete(el);
    const c = window.echarts && echarts.getInstanceByDom(el);
    if (c) c.dispose();
    delete raw[el.id];
  }
  pageSetUps.forEach((f) => f());
};
// chartEls are the boxes that have an ECharts instance (drawChart).
const chartEls = new Set();

// observeOnce starts a MutationObserver calling f on el, unless one of
// key's already watches el.
const observing = new Map();
function observeOnce(key, el, f, opts) {
  if (!el || !window.MutationObserver) return;
  if (!observing.has(key)) observing.set(key, new WeakSet());
  const seen = observing.get(key);
  if (seen.has(el)) return;
  seen.add(el);
  new MutationObserver(f).observe(el, opts);
}

// ---- Charts ----

// raw is each chart's last option as the server sent it; fitChart makes
// the one ECharts gets from it, so a change of box (projector view, a
// phone) can redo it without the server.
const raw = {};

// applyCharts is what the stream calls on a redraw: {chartId: option}.
// Each chart has one ECharts instance for the page's life; setOption
// updates it in place, so nothing flickers or re-initialises. replace
// drops the old option (a new run may have other hosts); otherwise ECharts
// merges. heights ({chartId: px}) resizes boxes that follow the run (a
// lane per host).
window.applyCharts = function (options, replace, heights) {
  for (const id in options) drawChart(id, options[id], replace, heights && heights[id]);
};

// advanceCharts is what the stream calls for a played frame: {chartId:
// patch}, what turns the option this page holds into the one at the new
// cursor (web/chart_patch.go documents the form). ECharts gets the whole
// patched option, as if it had been sent.
window.advanceCharts = function (patches) {
  for (const id in patches) {
    if (raw[id] !== undefined) drawChart(id, patchValue(raw[id], patches[id]), false);
  }
};

// patchValue is v with patch p applied; v itself is left as it was (ECharts
// may still hold it).
function patchValue(v, p) {
  if ('=' in p) return p['='];
  if (p.o || p.d) {
    const out = Object.assign({}, v);
    for (const k in p.o || {}) out[k] = patchValue(out[k], p.o[k]);
    for (const k of p.d || []) delete out[k];
    return out;
  }
  const out = Array.isArray(v) ? v.slice() : [];
  for (const i in p.a || {}) out[i] = patchValue(out[i], p.a[i]);
  if (p.p) out.push(...p.p);
  return out;
}

function drawChart(id, option, replace, height) {
  const el = $(id);
  if (!el || !window.echarts) return;
  if (height && bandLegend(el)) el.dataset.plotBox = String(height);
  if (height && el.style.height !== (bandHeight(el) || height + 'px')) {
    el.style.height = bandHeight(el) || height + 'px';
    const old = echarts.getInstanceByDom(el);
    if (old) old.resize();
  }
  raw[id] = option;
  let chart = echarts.getInstanceByDom(el);
  if (!chart) {
    // A box may ask for SVG (the handout: vector and real text on paper,
    // where a canvas prints as a bitmap at screen resolution).
    chart = echarts.init(el, null, { renderer: el.dataset.renderer === 'svg' ? 'svg' : 'canvas' });
    chartEls.add(el);
    chart.on('rendered', () => {
      fitLegend(el, chart);
      fitTicks(el, chart);
    });
    drawnInView(el, chart);
  }
  el.dataset.mode = chartMode(el);
  // Read once: a window's resize reads it again (refitCharts).
  if (el.dataset.mode === 'projector' && !el.dataset.fs) el.dataset.fs = projectorType(el);
  // A redraw that gives a chart the option it shows, in the box it was
  // fitted to, changes nothing on it: ECharts is not asked to draw it
  // again (a slider move that changes no decision: the cap at 20% or 50%
  // of six hosts). A played frame always brings another option.
  const json = JSON.stringify(option);
  const box = el.dataset.mode + '/' + (el.dataset.fs || '');
  const last = shown.get(el);
  shown.set(el, { json, box });
  if (last && last.json === json && last.box === box && fitted.has(el)) return;
  const fit = fitChart(el, option);
  // A redraw of the same shape as the option the chart holds (a slider
  // move: the same hosts, series and components, other numbers) is merged,
  // not replaced: ECharts then updates the views it has instead of
  // building every axis, legend and mark anew, which cost 35–120 ms a
  // move for the lab's six charts (issue 26). The result is the same:
  // sameShape holds only when the old option has no object key the new one
  // lacks, and ECharts' merge writes every leaf and replaces arrays whole.
  const merge = replace && fitted.has(el) && sameShape(fitted.get(el), fit, true);
  fitted.set(el, fit);
  giveOption(el, chart, fit, !!replace && !merge);
  if (replace && !merge) spotDrawn.delete(el);
  if (replace) window.applyRoomSpot(el); // a redraw from scratch drops it
  spotPickable(el, chart);
  describeChart(el, option);
  const table = $('tbl-' + id);
  if (table && !table.hidden) showTable(id);
}

// refit gives a chart its last option fitted to its box again.
function refit(el, chart, opts) {
  const fit = fitChart(el, raw[el.id]);
  fitted.set(el, fit);
  chart.setOption(fit, opts);
}

// fitted is the option each chart's ECharts instance was last given;
// shown, the server's option it was fitted from (as JSON) and the box's
// mode it was fitted for.
const fitted = new WeakMap();
const shown = new WeakMap();

// sameShape reports whether merging option b into a chart holding a
// (ECharts' setOption without notMerge) leaves what b alone would. A merge
// goes down through pairs of objects and overwrites everything else whole
// (arrays, null, numbers), so it is exact unless an object of a has a key
// b lacks (it would stay). The top level's arrays (series, axes, grids)
// are merged element by element, a series found by its name: they must
// have the same length, names, ids and types.
function sameShape(a, b, top) {
  if (top && (Array.isArray(a) || Array.isArray(b))) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a[i], y = b[i];
      if (!isObject(x) || !isObject(y)) {
        if (isObject(x) || isObject(y)) return false;
        continue; // a colour, a string: overwritten
      }
      if (x.name !== y.name || x.id !== y.id || x.type !== y.type || !sameShape(x, y, false)) return false;
    }
    return true;
  }
  if (!isObject(a) || !isObject(b)) return true; // overwritten whole
  for (const k in a) {
    if (!(k in b) || !sameShape(a[k], b[k], top && Array.isArray(a[k]))) return false;
  }
  return true;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// chartMode is how a chart's box asks for its text: projector (large
// type for a room), narrow (a phone: the legend on top, small margins) or
// '' (the server's layout as sent).
function chartMode(el) {
  if (el.closest('.projector')) return 'projector';
  return el.clientWidth > 0 && el.clientWidth < 560 ? 'narrow' : '';
}

// projectorType is the type size in px of a projector view's charts: the
// stylesheet's --chart-type, which follows the window (18 on a
// projector's own screen, less where the view shares a small window
// between six charts: app.css).
function projectorType(el) {
  return parseFloat(getComputedStyle(el).getPropertyValue('--chart-type')) || 18;
}

// fitChart is the option for the chart's box: in the projector view every
// axis label and legend entry is 18 px or larger, read from the back of a
// room; on a narrow box the legend moves from the right (where it took 40%
// of the width) to a scrolling line on top. The option sent is not changed.
function fitChart(el, o) {
  // go-echarts puts an empty toolbox ({}: no tools, nothing drawn) in every
  // option; the lab's ECharts bundle has no toolbox component
  // (web/assets/echarts-lab.js), so it is left out rather than refused.
  if (o.toolbox) {
    o = Object.assign({}, o);
    delete o.toolbox;
  }
  return withTimeTicks(el, fitBox(el, o));
}

// fitBox is the option with its type, legend and grid fitted to the box's
// mode.
function fitBox(el, o) {
  const mode = el.dataset.mode || '';
  const band = bandLegend(el);
  if (!mode && !band) return o;
  // A band's type is the server's on a wide box (12 px at least).
  const fs = mode === 'projector' ? +el.dataset.fs || 18 : mode === 'narrow' ? 12 : Math.max(12, (o.legend && o.legend.textStyle && o.legend.textStyle.fontSize) || 12);
  const out = Object.assign({}, o);
  const axes = (list) => [].concat(list || []).map((a) => Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel, { fontSize: fs }) }));
  if (mode) {
    out.xAxis = axes(o.xAxis);
    out.yAxis = axes(o.yAxis);
  }
  const legend = o.legend && o.legend.show !== false;
  // A chart of stacked plots (the Envoy/gRPC strip) keeps its grids, which
  // its axes and titles are placed against, and its legend beside them;
  // only the type grows. The others get one grid fitted to the box and the
  // legend on top.
  const grids = [].concat(o.grid || []);
  // On a projector no legend is paged (issue 25: "threshold", "mean" and
  // the hosts were on a second page nobody turns): it wraps, and the plot
  // starts under the lines it took (fitLegend measures them). Its text is
  // 4 px below the box's top, where 18 px type at 0 was cut. A box with
  // its legend in a band (bandLegend) lays it out the same way.
  const projector = mode === 'projector';
  const measured = projector || band;
  const legendH = measured ? +(el.dataset.legendH || 0) : 0;
  if (grids.length > 1) {
    if (projector) return fitStrip(el, o, out, fs, legendH);
    if (o.legend) out.legend = [].concat(o.legend).map((l) => Object.assign({}, l, { textStyle: Object.assign({}, l.textStyle, { fontSize: fs }) }));
    return out;
  }
  if (o.legend) {
    out.legend = Object.assign({}, o.legend, {
      type: measured ? 'plain' : 'scroll', orient: 'horizontal', top: 4, left: 0, right: 0, bottom: 'auto',
      // A paged legend clips its line to the item's height: 8 px cut the
      // top off 12 px text on a phone. A projector's small window packs
      // its legend closer, so that it takes fewer lines.
      itemWidth: fs >= 16 ? 24 : 16, itemHeight: 12, itemGap: fs >= 16 ? 10 : 6,
      pageIconSize: 12,
      textStyle: Object.assign({}, o.legend.textStyle, { fontSize: fs }),
    });
  }
  // A band's plot starts lower by half a value label (centred on the
  // plot's top line, it touched the legend's last line).
  const top = legend ? (legendH ? legendH + 10 + (band ? bandGap : 0) : fs + 22) : 10;
  out.grid = [{ left: 16, right: 12, top, bottom: 6, containLabel: true }];
  // A projector's small window leaves a plot a few lines of type tall:
  // where ECharts' six or so value labels would touch, three (50, 75,
  // 100%: a fixed range is halved, ECharts' nice steps put 90 by 100);
  // where the hosts' lanes are thinner than the type, the hosts' names
  // as large as the lanes (12 px at least), past that every kth host, so
  // that no labels overlap.
  // Every key is set either way: a refit is merged into the chart, where
  // a key left out would keep the last fit's value. The box's height is
  // kept so that a new height fits it again (refitCharts).
  const plotH = Math.max(1, (el.clientHeight || 240) - top - 6 - (fs + 10));
  if (projector) {
    el.dataset.fitH = String(el.clientHeight);
    out.yAxis = out.yAxis.map((a) => {
      if (a.type === 'category') {
        const n = Math.max(1, [].concat(a.data || []).length);
        const size = Math.max(12, Math.min(fs, Math.floor(plotH / n)));
        const k = Math.max(0, Math.ceil((size * n) / plotH) - 1);
        return Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel, { fontSize: size, interval: k }) });
      }
      const crowded = plotH < 6 * (fs + 4);
      // A bound may come as a number or its string ("50"), or a word.
      const lo = a.min == null || a.min === '' ? NaN : +a.min, hi = a.max == null || a.max === '' ? NaN : +a.max;
      const fixed = hi > lo; // false for NaN
      return Object.assign({}, a, { splitNumber: crowded ? 2 : 5, interval: crowded && fixed ? (hi - lo) / 2 : null });
    });
  }
  return out;
}

// ---- Time axes: labels at round times and at the faults ----
// A time axis is a category axis of the run's sweeps ("10 s", "20 s" …).
// ECharts' own choice (interval 'auto', or a number) labels every nth
// category counting from the first, so a 10 s run read 10, 40, 70 … and
// the presets' fault start, 30 s, was never labelled (issue 25). Here the
// labels (and the ticks, which follow them) fall on round times counted
// from 0 s: the smallest of roundMs that is a whole number of sweeps and
// leaves room between two labels (20 s is not one: it would skip 30 s);
// a run whose sweep divides none (7 s) gets every kth sweep from 0 s.
// Where a shaded fault begins (once the cursor reached it) is labelled
// too, and the round labels too close to it give way. The test is a
// function, which JSON cannot carry: it is added here, after the
// server's option, so the server's options and patches stay data.
const roundMs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].map((s) => s * 1000);

// timeMs is a time category's milliseconds ("12.5 s" → 12500), or NaN
// for a category that is not a time.
function timeMs(v) {
  const m = /^(\d+(?:\.\d+)?) s$/.exec(v !== null && typeof v === 'object' ? v.value : v);
  return m ? Math.round(parseFloat(m[1]) * 1000) : NaN;
}

// timesOf is a time axis's categories in ms, its sweep (the least gap)
// and its widest name, or null for an axis of something else (a sweep of
// settings); remembered by the data array, which patches keep while the
// run does.
const axisTimes = new WeakMap();
function timesOf(data) {
  if (!Array.isArray(data) || data.length < 2) return null;
  if (!axisTimes.has(data)) {
    const ms = data.map(timeMs);
    let step = Infinity;
    for (let i = 1; i < ms.length; i++) step = Math.min(step, ms[i] - ms[i - 1]);
    const widest = data.reduce((a, d) => (String(d).length > a.length ? String(d) : a), '');
    axisTimes.set(data, ms.every((t) => t >= 0) && step > 0 ? { ms, step, widest } : null);
  }
  return axisTimes.get(data);
}

// faultStarts are the categories where the option's shaded faults begin
// (the events series' mark areas: web/chart/chartmarks.go faultAreas).
function faultStarts(o) {
  const out = [];
  for (const s of [].concat(o.series || [])) {
    if (!s || s.name !== 'events' || !s.markArea) continue;
    for (const area of s.markArea.data || []) if (area && area[0] && area[0].xAxis != null) out.push(area[0].xAxis);
  }
  return out;
}

// ticksTest is the axisLabel.interval test: a multiple of step ms at
// least gap sweeps from every fault start, or a fault start; below index
// `below` only (the last sweep's label, centred on its band at the
// plot's end, would stick out of a narrow right margin, which clips it).
// One function a set of arguments, so that ECharts' label cache sees the
// same test again.
const ticksTests = new Map();
function ticksTest(step, gap, below, starts) {
  const key = [step, gap, below].concat(starts).join('/');
  if (!ticksTests.has(key)) {
    ticksTests.set(key, (i, v) => i < below && (starts.includes(i) || (timeMs(v) % step === 0 && starts.every((j) => Math.abs(i - j) >= gap))));
  }
  return ticksTests.get(key);
}

// textWidth is how wide text is in ECharts' type (sans-serif) at fs px,
// measured once a text and size (it is asked on every frame).
let measureCtx = null;
const widths = new Map();
function textWidth(text, fs) {
  const key = fs + '/' + text;
  if (!widths.has(key)) {
    measureCtx = measureCtx || document.createElement('canvas').getContext('2d');
    measureCtx.font = fs + 'px sans-serif';
    widths.set(key, measureCtx.measureText(text).width);
  }
  return widths.get(key);
}

// plotSpan is how wide the grid of an axis is in the box, and its right
// margin: as drawn last (fitTicks measured it), else estimated from the
// grid's margins and, with containLabel, the value axes' labels.
function plotSpan(el, o, gridIndex, fs) {
  const w = el.clientWidth || 600;
  const g = [].concat(o.grid || [])[gridIndex || 0] || {};
  const px = (v, d) => (typeof v === 'number' ? v : /^\d+(\.\d+)?$/.test(v) ? +v : /%$/.test(v) ? (w * parseFloat(v)) / 100 : d);
  const right = px(g.right, w / 10);
  let plot = +el.dataset.plotW || 0;
  if (!plot) {
    plot = w - px(g.left, w / 10) - right;
    if (g.containLabel) plot -= [].concat(o.yAxis || []).filter((a) => (a.gridIndex || 0) === (gridIndex || 0)).length * (2.6 * fs + 8);
  }
  return { plot: Math.max(plot, 40), right };
}

function withTimeTicks(el, o) {
  const axes = [].concat(o.xAxis || []);
  if (!axes.some((a) => a && a.type === 'category' && timesOf(a.data))) {
    delete el.dataset.ticksW;
    return o;
  }
  const out = Object.assign({}, o);
  const faults = faultStarts(o);
  out.xAxis = axes.map((a) => {
    const t = a && a.type === 'category' && timesOf(a.data);
    if (!t) return a;
    const label = a.axisLabel || {};
    const fs = label.fontSize || 12;
    const span = plotSpan(el, o, a.gridIndex, fs);
    el.dataset.ticksW = String(Math.round(span.plot));
    const perSweep = span.plot / t.ms.length;
    const room = textWidth(t.widest, fs) + fs / 2; // a label and a gap half the type's size
    const round = roundMs.filter((s) => s % t.step === 0);
    const steps = round.length ? round : [1, 2, 3, 5, 10, 20, 50, 100].map((k) => k * t.step);
    const step = steps.find((s) => (s / t.step) * perSweep >= room) || steps[steps.length - 1];
    const below = (room - fs / 2) / 2 > perSweep / 2 + span.right - 2 ? t.ms.length - 1 : t.ms.length;
    const starts = faults.map((f) => a.data.indexOf(f)).filter((i) => i >= 0 && i < below);
    const test = ticksTest(step, Math.ceil(room / perSweep), below, starts);
    return Object.assign({}, a, { axisLabel: Object.assign({}, label, { interval: test }) });
  });
  return out;
}

// fitTicks measures the plot a chart's time labels were chosen for; when
// it is another width than the one supposed (containLabel's value labels
// are only estimated), the chart is fitted again with it (once a width:
// the labels' choice does not change the plot's width, so this ends).
function fitTicks(el, chart) {
  if (!raw[el.id] || !el.dataset.ticksW) return;
  const g = chart.getModel() && chart.getModel().getComponent('grid');
  const w = g && g.coordinateSystem ? Math.round(g.coordinateSystem.getRect().width) : 0;
  if (w <= 0) return;
  el.dataset.plotW = String(w);
  if (Math.abs(w - +el.dataset.ticksW) > 2) {
    // Not from inside ECharts' own drawing, which ignores a setOption.
    setTimeout(() => {
      const fit = fitChart(el, raw[el.id]);
      const was = fitted.get(el);
      fitted.set(el, fit);
      // The width only chooses the time labels (ticksTest: one function
      // a choice): when it chose the same ones, the chart is left as it
      // is drawn. A value axis whose labels grew a digit moves the plot
      // a few pixels on most slider moves, and drawing the chart again
      // cost a frame and a render (issue 26).
      if (!was || !sameTicks(was, fit)) chart.setOption(fit);
    }, 0);
  }
}

// sameTicks reports whether two fits of one option chose the same time
// labels: fitChart changes nothing else with the plot's width.
function sameTicks(a, b) {
  const ax = [].concat(a.xAxis || []), bx = [].concat(b.xAxis || []);
  return ax.length === bx.length && ax.every((x, i) => (x && x.axisLabel && x.axisLabel.interval) === (bx[i] && bx[i].axisLabel && bx[i].axisLabel.interval));
}

// fitStrip fits a chart of stacked plots (the Envoy/gRPC strip, laid out
// in pixels for the lab's box: web/chart_compare.go) to a projector's
// box: the plots share its height, the titles are cut to its width, the
// axes' type is 18 px, and the legend wraps under the plots.
function fitStrip(el, o, out, fs, legendH) {
  const grids = [].concat(o.grid);
  const h = el.clientHeight || 240, w = el.clientWidth || 300;
  const title = fs + 8, xlab = fs + 10, gap = 6;
  const legendRoom = o.legend ? (legendH || fs + 8) + 6 : 0;
  const plot = Math.max(16, Math.floor((h - grids.length * (title + gap) - xlab - legendRoom) / grids.length));
  const top = (i) => title + i * (plot + gap + title);
  out.grid = grids.map((g, i) => Object.assign({}, g, { left: 4 * fs, right: 8, top: top(i), height: plot }));
  // A host named on every lane only where the lanes are as tall as the
  // type; else every second (third…) lane, so that no two labels overlap
  // (ECharts' 'auto' let them overlap on an empty strip).
  out.yAxis = out.yAxis.map((a) => Object.assign({}, a, { axisLabel: Object.assign({}, a.axisLabel,
    { interval: Math.max(0, Math.ceil((fs + 2) * [].concat(a.data || []).length / plot) - 1) }) }));
  out.title = [].concat(o.title || []).map((t, i) => Object.assign({}, t, { left: 4 * fs, top: top(i) - title + 2,
    textStyle: Object.assign({}, t.textStyle, { fontSize: fs - 2, width: w - 4 * fs - 8, overflow: 'truncate' }) }));
  if (o.legend) {
    out.legend = [].concat(o.legend).map((l) => Object.assign({}, l, { type: 'plain', orient: 'horizontal', left: 0, right: 0, top: 'auto', bottom: 2,
      textStyle: Object.assign({}, l.textStyle, { fontSize: fs }) }));
  }
  return out;
}

// fitLegend measures a projector chart's legend each time ECharts has drawn
// it; when it took another height than the plot left it, the chart is
// fitted again around it (at most once a height: the loop ends).
function fitLegend(el, chart) {
  if ((el.dataset.mode !== 'projector' && !bandLegend(el)) || !raw[el.id]) return;
  const m = chart.getModel() && chart.getModel().getComponent('legend');
  const v = m && chart.getViewOfComponentModel(m);
  if (!v || !v.group) return;
  const h = Math.ceil(v.group.getBoundingRect().height);
  if (h > 0 && Math.abs(h - (+el.dataset.legendH || 0)) > 2) {
    el.dataset.legendH = String(h);
    // Not from inside ECharts' own drawing, which ignores a setOption.
    setTimeout(() => {
      const grow = bandHeight(el);
      if (grow && el.style.height !== grow) {
        el.style.height = grow;
        chart.resize();
      }
      refit(el, chart);
    }, 0);
  }
}

// bandLegend reports whether the box lays its chart's legend in a band of
// its own above the plot, at every width (data-legend="band": the
// handout). A column beside the plot (the lab's) is as wide and as tall
// as the type's metrics make it: where a line of text is taller (a font
// with CJK glyphs: ECharts measures a line by "国") it wrapped into a
// second column over the plot. A band wraps, unpaged (paper shows no
// second page), the plot starts under the lines it took, measured
// (fitLegend), and the box grows by them, so that the plot keeps the
// height the server gave the box.
function bandLegend(el) {
  return el.dataset.legend === 'band';
}

// bandHeight is a band box's height once its legend is measured: the
// height the server gave it (kept in data-plot-box) and the legend's
// lines; '' before, and for another box.
function bandHeight(el) {
  const h = +el.dataset.legendH || 0;
  if (!bandLegend(el) || !el.dataset.plotBox || !h) return '';
  return +el.dataset.plotBox + h + bandGap + 'px';
}

// bandGap is the room between a band's legend and its plot's top line
// over the projector's: half a value label.
const bandGap = 8;

// refitCharts redoes every chart whose box changed mode (the projector
// view toggled, a window crossing the narrow width) and resizes the rest.
function refitCharts() {
  document.querySelectorAll('.chart').forEach((el) => {
    const chart = window.echarts && echarts.getInstanceByDom(el);
    if (!chart) return;
    const mode = chartMode(el);
    const fs = mode === 'projector' ? String(projectorType(el)) : undefined;
    if ((mode !== (el.dataset.mode || '') || fs !== el.dataset.fs) && raw[el.id]) {
      el.dataset.mode = mode;
      if (fs) el.dataset.fs = fs;
      else delete el.dataset.fs;
      delete el.dataset.legendH; // measured in the other mode
      delete el.dataset.plotW;
      refit(el, chart, { notMerge: true });
      spotDrawn.delete(el);
      window.applyRoomSpot(el);
    } else if (mode === 'projector' && raw[el.id] && [].concat(raw[el.id].grid || []).length > 1) {
      refit(el, chart); // a strip laid out in pixels for its old box
    } else if (mode === 'projector' && raw[el.id] && Math.abs(el.clientHeight - +el.dataset.fitH) > 2) {
      refit(el, chart); // its value and host labels fitted to another height
    }
    chart.resize(); // fitTicks then fits the time labels to the new width
  });
}

// describeChart makes the box's accessible name the chart's title and the
// sentence the server wrote for the cursor (ECharts' own aria is off).
function describeChart(el, o) {
  const alt = o.aria && o.aria.label && o.aria.label.description;
  if (alt) el.setAttribute('aria-label', el.dataset.title + '. ' + alt);
}

// ---- Charts out of the window ----
// A chart out of the window is not given each redraw's option: the last
// one waits (its accessible name and its table follow the run at once),
// and ECharts takes and draws it once the chart comes within 100 px of
// the window, or anything asks the chart for its option, model or
// pixels. Its zrender loop is paused meanwhile, so that nothing else is
// drawn off screen either. A slider move on the lab at 1280×900 updated
// and drew six charts of which two are on screen, and that was most of
// the move's time (issue 26). A chart takes and draws its first option
// wherever it is.
const outOfView = new WeakSet();
const waiting = new WeakMap(); // el → {fit, notMerge}, the option a chart out of view waits with

// giveOption hands a fitted option to ECharts, which draws it on the next
// frame, or keeps it while the chart is out of view (notMerge sticks: the
// chart still holds the option before the first kept one).
function giveOption(el, chart, fit, notMerge) {
  if (outOfView.has(el)) {
    const w = waiting.get(el);
    waiting.set(el, { fit, notMerge: notMerge || !!(w && w.notMerge) });
    return;
  }
  waiting.delete(el);
  chart.setOption(fit, { notMerge, lazyUpdate: true });
}

// takeWaiting gives a chart the option it waits with, if any.
function takeWaiting(el, chart, setOption) {
  const w = waiting.get(el);
  if (!w) return;
  waiting.delete(el);
  setOption.call(chart, w.fit, { notMerge: w.notMerge, lazyUpdate: true });
}

let viewObserver = null;
function drawnInView(el, chart) {
  if (!window.IntersectionObserver) return;
  // Whatever reads the chart, or gives it an option of its own (a refit,
  // the spotlight), sees it with its last option first.
  const setOption = chart.setOption;
  for (const name of ['setOption', 'getOption', 'getModel', 'resize', 'dispatchAction', 'convertToPixel', 'convertFromPixel', 'containPixel', 'getDataURL']) {
    const f = chart[name];
    chart[name] = function (...args) {
      takeWaiting(el, chart, setOption);
      return f.apply(this, args);
    };
  }
  viewObserver = viewObserver || new IntersectionObserver((entries) => {
    for (const e of entries) {
      const c = window.echarts && echarts.getInstanceByDom(e.target);
      if (!c) continue;
      if (e.isIntersecting) {
        outOfView.delete(e.target);
        c.getZr().animation.resume();
        takeWaiting(e.target, c, c.setOption);
      } else {
        outOfView.add(e.target);
        c.getZr().animation.pause();
      }
    }
  }, { rootMargin: '100px 0px' });
  viewObserver.observe(el);
}

// Charts follow their box's size.
if (window.ResizeObserver) {
  const ro = new ResizeObserver(() => requestAnimationFrame(refitCharts));
  onPage(() => {
    document.querySelectorAll('.chart').forEach((el) => ro.observe(el));
  });
}

// ---- A chart as a table ----

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// tableRows are a chart's data, one row per tick up to the cursor, newest
// first: a line or bar series gives its value, a series of marks (the
// swimlanes' [tick, host] points) the hosts it marks at that tick.
function tableRows(o, n) {
  const x = (o.xAxis && o.xAxis[0] && o.xAxis[0].data) || [];
  const lanes = (o.yAxis && o.yAxis[0] && o.yAxis[0].type === 'category' && o.yAxis[0].data) || null;
  const series = (o.series || []).filter((s) => s.name !== 'events' && s.type !== undefined);
  const cells = series.map((s) => {
    const col = new Array(n).fill('');
    (s.data || []).forEach((d, i) => {
      const v = d && typeof d === 'object' ? (Array.isArray(d) ? d : d.value) : d;
      if (lanes && Array.isArray(v)) {
        if (v[0] < n) col[v[0]] = (col[v[0]] ? col[v[0]] + ', ' : '') + String(lanes[v[1]]).split(' ')[0];
      } else if (i < n) col[i] = v === null || v === undefined ? '–' : String(v);
    });
    return col;
  });
  const rows = [];
  for (let i = n - 1; i >= 0; i--) rows.push([x[i]].concat(cells.map((c) => c[i])));
  return { head: ['time'].concat(series.map((s) => s.name)), rows };
}

function showTable(id) {
  const box = $('tbl-' + id);
  const o = raw[id];
  const scrub = $('scrub');
  if (!box || !o) return;
  const t = tableRows(o, scrub ? Number(scrub.value) : 0);
  const head = '<tr>' + t.head.map((h) => '<th scope="col">' + esc(h) + '</th>').join('') + '</tr>';
  const body = t.rows.map((r) => '<tr><th scope="row">' + esc(r[0]) + '</th>' + r.slice(1).map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join('');
  box.innerHTML = '<table><caption>' + esc($(id).dataset.title) + ', newest first</caption><thead>' + head + '</thead><tbody>' +
    (body || '<tr><td colspan="' + t.head.length + '">No interval yet.</td></tr>') + '</tbody></table>';
}

document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-table-for]');
  if (!btn) return;
  const id = btn.dataset.tableFor;
  const on = btn.getAttribute('aria-pressed') !== 'true';
  btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  btn.textContent = on ? 'Chart' : 'Table';
  $('fig-' + id).classList.toggle('as-table', on);
  $('tbl-' + id).hidden = !on;
  if (on) showTable(id);
  else requestAnimationFrame(refitCharts);
});

// ---- The log's filter: everything, or the decisions only ----

const logKey = 'outlierlab.log';

function setLogFilter(show) {
  document.querySelectorAll('.log-panel').forEach((p) => {
    p.dataset.filter = show; // not data-show: a Datastar attribute
    p.querySelectorAll('[data-log-show]').forEach((b) => b.setAttribute('aria-pressed', b.dataset.logShow === show ? 'true' : 'false'));
  });
}

document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-log-show]');
  if (!btn) return;
  setLogFilter(btn.dataset.logShow);
  try { localStorage.setItem(logKey, btn.dataset.logShow); } catch (_) { /* not kept */ }
});

// ---- The settings: a sidebar when there is room, else a drawer ----

function settingsShown() {
  const c = $('controls');
  return !!c && getComputedStyle(c).display !== 'none';
}

// syncSettings tells the Settings button what the page shows.
function syncSettings() {
  const btn = $('btn-settings');
  if (btn) btn.setAttribute('aria-expanded', settingsShown() ? 'true' : 'false');
}

// setSettings opens or closes the settings. As a drawer (a phone, a
// narrow window, the projector view) it takes the focus when it opens and
// gives it back to the button when it closes.
function setSettings(open, focus) {
  const lab = $('lab');
  if (!lab) return;
  lab.dataset.drawer = open ? 'open' : 'closed';
  syncSettings();
  // The focus goes to the drawer's Close button, not a control: the key
  // that opened it must not land in a menu (s would pick a scenario).
  const drawer = getComputedStyle($('controls')).position === 'fixed';
  if (open && drawer && focus) $('controls').querySelector('[data-drawer-close]').focus();
  else if (!open && focus) $('btn-settings').focus();
  if (open && drawer) showChartAboveSheet();
  requestAnimationFrame(refitCharts);
}

// showChartAboveSheet: on a phone the settings are a sheet over the
// bottom half; the page scrolls the first chart up under the transport
// (which stays at the top), so a slider and a chart are seen together.
function showChartAboveSheet() {
  const sheet = $('controls').getBoundingClientRect();
  const tr = document.querySelector('#timeline .transport');
  const fig = document.querySelector('.chart-box');
  if (sheet.top <= 0 || !tr || !fig) return;
  window.scrollBy(0, fig.getBoundingClientRect().top - tr.getBoundingClientRect().height - 8);
}

document.addEventListener('click', (ev) => {
  const t = ev.target.closest && ev.target.closest('#btn-settings, [data-drawer-close]');
  if (!t) return;
  setSettings(t.id === 'btn-settings' ? !settingsShown() : false, true);
});
if (window.matchMedia) matchMedia('(max-width: 1099px)').addEventListener('change', syncSettings);

// ---- The projector view ----

function isProjector() {
  const lab = $('lab');
  return !!lab && lab.classList.contains('projector');
}

// withView is an address with the projector view on or off.
function withView(url, on) {
  const u = new URL(url, location.href);
  if (on) u.searchParams.set('view', 'projector');
  else u.searchParams.delete('view');
  return u.pathname + u.search + u.hash;
}

// The stream keeps a free lab's address on the tab's permalink, which
// knows nothing of the view: the view stays in the address while it is on.
// It does so on every redraw (a slider move), and Chrome's replaceState
// waited 3–12 ms on the browser process there, before the charts were
// drawn (issue 26): the address follows once the frame that shows the
// redraw is painted, the last of the calls made meanwhile (a replaced
// address leaves no history entry to keep), unless it is the address
// already shown.
const replaceState = history.replaceState.bind(history);
let addressNext = null;
history.replaceState = function (state, title, url) {
  const first = !addressNext;
  addressNext = { state, title, url };
  if (first) afterPaint(() => {
    let { state: s, title: t, url: u } = addressNext;
    addressNext = null;
    if (u !== undefined && u !== null && isProjector()) u = withView(String(u), true);
    if (u === location.pathname + location.search + location.hash) return; // a permalink opened
    try { replaceState(s, t, u); } catch (_) { /* too many in a row: the next redraw's address follows */ }
  });
};

// afterPaint runs fn once the next frame is painted, or after 100 ms in a
// tab that paints no frames (hidden).
function afterPaint(fn) {
  let done = false;
  const run = () => { if (!done) { done = true; fn(); } };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, 100);
}

function setProjector(on) {
  const lab = $('lab');
  if (!lab) return;
  lab.classList.toggle('projector', on);
  document.querySelectorAll('.lesson-page').forEach((p) => p.classList.toggle('projector', on));
  delete lab.dataset.drawer;
  const btn = $('btn-projector');
  if (btn) btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  replaceState(history.state, '', withView(location.href, on));
  syncSettings();
  requestAnimationFrame(refitCharts);
}

document.addEventListener('click', (ev) => {
  if (ev.target.closest && ev.target.closest('#btn-projector')) setProjector(!isProjector());
});

// ---- Keys ----

// typing: the key belongs to the field that has the focus (a text or
// number field, a menu, an editable area), so no shortcut fires.
function typing(t) {
  if (!t || !t.tagName) return false;
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  return t.tagName === 'INPUT' && !['range', 'checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
}

// pressable: space and Enter already mean something on it (a link
// follows, a button presses, a scrolling box scrolls).
function pressable(t) {
  return !!(t && t.closest && t.closest('a[href], button, summary, input, select, textarea, [tabindex]:not(#lab)'));
}

const isRange = (t) => t && t.tagName === 'INPUT' && t.type === 'range';

function click(id) {
  const el = typeof id === 'string' ? (id[0] === '[' ? document.querySelector(id) : $(id)) : id;
  if (el) el.click();
  return !!el;
}

// scrubTo moves the cursor as the scrubber would: the bound signal and
// its post follow the input event.
function scrubTo(n) {
  const s = $('scrub');
  if (!s) return;
  s.value = String(Math.max(0, Math.min(Number(s.max), n)));
  s.dispatchEvent(new Event('input', { bubbles: true }));
}

// shortcut is the action of a key on the lab, or null.
function shortcut(ev, t) {
  switch (ev.key) {
    case ' ': return pressable(t) && !isRange(t) ? null : () => click('btn-play');
    case 'ArrowRight': return isRange(t) ? null : () => click('btn-step');
    case 'ArrowLeft': return isRange(t) ? null : () => click('btn-back');
    case 'Home': return isRange(t) ? null : () => scrubTo(0);
    case 'End': return isRange(t) ? null : () => scrubTo(Infinity);
    case 'r': return () => click('btn-reset');
    case '1': case '4': case '6': case 'i':
      return () => click('[data-speed="' + ({ 1: '1', 4: '4', 6: '16', i: 'instant' })[ev.key] + '"]');
    case 'g': return openGoto;
    case '?': return () => { const d = $('keys'); if (d && !d.open) d.showModal(); };
    case 's': return () => setSettings(!settingsShown(), true);
    case 'p': return () => setProjector(!isProjector());
  }
  return null;
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key === 'Escape') return escape(ev, t);
  if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.defaultPrevented || !$('btn-play')) return;
  if (typing(t) || document.querySelector('dialog[open]')) return;
  const act = shortcut(ev, t);
  if (!act) return;
  ev.preventDefault();
  act();
});

// escape leaves what the focus is in: the copy fallback's field, the
// go-to box, the settings drawer.
function escape(ev, t) {
  if (t && t.id === 'copy-link-field') {
    t.hidden = true;
    $('btn-copy-link').focus();
  } else if (t && t.closest && t.closest('#goto')) {
    closeGoto();
  } else if (t && t.closest && t.closest('#controls') && getComputedStyle($('controls')).position === 'fixed') {
    setSettings(false, true);
  } else return;
  ev.preventDefault();
}

// A menu chosen with the mouse lets go of the focus: it would otherwise
// take the arrows meant for the timeline (→ switched the scenario). A
// menu worked with the keyboard keeps it.
let pointedSelect = null;
document.addEventListener('pointerdown', (ev) => { pointedSelect = ev.target.closest && ev.target.closest('select'); }, true);
document.addEventListener('keydown', () => { pointedSelect = null; }, true);
document.addEventListener('change', (ev) => {
  if (ev.target.tagName === 'SELECT' && ev.target === pointedSelect) {
    pointedSelect = null;
    ev.target.blur();
  }
});

// ---- Go to a time (g) ----

let gotoReturn = null;

function openGoto() {
  const f = $('goto');
  if (!f) return;
  gotoReturn = document.activeElement;
  f.hidden = false;
  $('goto-time').value = '';
  $('goto-time').focus();
}

function closeGoto() {
  const f = $('goto');
  if (!f || f.hidden) return;
  f.hidden = true;
  const back = gotoReturn && document.contains(gotoReturn) && gotoReturn !== document.body ? gotoReturn : $('btn-play');
  back.focus();
}

document.addEventListener('submit', (ev) => {
  if (ev.target.id !== 'goto') return;
  ev.preventDefault();
  const st = $('status');
  const every = Number(st && st.dataset.intervalMs);
  const s = Number($('goto-time').value);
  if (every > 0 && Number.isFinite(s)) scrubTo(Math.floor((s * 1000 + 0.5) / every));
  closeGoto();
});
document.addEventListener('click', (ev) => {
  if (ev.target.closest && ev.target.closest('[data-goto-close]')) closeGoto();
});

// ---- The status, read out at most once a second ----

// The status line changes with every frame (16 times a second at 16×);
// a live region that busy is never finished being read. The words go to
// #announce instead, no more than once a second, and only when they
// changed.
const announcer = { last: 0, timer: 0, said: '' };

function statusWords() {
  const st = $('status');
  if (!st) return '';
  // innerText: what the page shows (a projector hides where to answer).
  const part = (sel) => { const el = st.querySelector(sel); return el ? el.innerText.trim() : ''; };
  const words = [part('.clock'), part('.state')];
  if (!st.querySelector('.state.playing')) words.push(part('.summary'));
  return words.filter(Boolean).join('. ');
}

function announce() {
  const wait = 1000 - (Date.now() - announcer.last);
  if (wait > 0) {
    if (!announcer.timer) announcer.timer = setTimeout(() => { announcer.timer = 0; announce(); }, wait);
    return;
  }
  const words = statusWords();
  if (!words || words === announcer.said) return;
  announcer.last = Date.now();
  announcer.said = words;
  $('announce').textContent = words;
}

onPage(() => {
  const stage = $('timeline');
  if (stage && $('announce')) {
    announcer.said = statusWords();
    observeOnce('announce', stage, (ms) => {
      if (ms.some((m) => { const n = m.target.nodeType === 1 ? m.target : m.target.parentElement; return n && n.closest('#status'); })) announce();
    }, { subtree: true, childList: true, characterData: true });
  }
  let show = 'all';
  try { show = localStorage.getItem(logKey) || 'all'; } catch (_) { /* default */ }
  setLogFilter(show === 'decisions' ? 'decisions' : 'all');
  syncSettings();
});

// ---- Copy ----

// Copy buttons: data-copy="#selector" copies that element's text. The
// clipboard API needs a secure context; on a room's LAN address (plain
// http) fall back to selecting the text and the old copy command.
document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-copy]');
  if (!btn) return;
  const src = document.querySelector(btn.getAttribute('data-copy'));
  if (!src) return;
  const done = () => {
    btn.textContent = 'Copied';
    setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(src.textContent).then(done, () => {});
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(src);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  try { if (document.execCommand('copy')) done(); } catch (_) { /* selected: the reader can copy by hand */ }
});

// Copy link: the stream keeps the address bar on the tab's permalink
// (inputs plus cursor), so the link is the address at the click, without
// the projector view (the room opens the lab). Without the clipboard API
// (plain http on a room's LAN) the link is shown selected in a field
// beside the button, and the old copy command is tried; if it fails too,
// the reader copies the selection by hand, and Escape (or leaving the
// field) puts the field away.
document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('[data-copy-link]');
  if (!btn) return;
  const url = new URL(withView(location.href, false), location.href).href;
  const status = $('copy-link-status');
  const field = $('copy-link-field');
  const say = (msg) => {
    if (!status) return;
    status.textContent = msg;
    clearTimeout(say.timer);
    say.timer = setTimeout(() => { status.textContent = ''; }, 4000);
  };
  const fallback = () => {
    if (!field) return;
    field.value = url;
    field.hidden = false;
    field.focus();
    field.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (_) { /* selected: copy by hand */ }
    say(ok ? 'Link copied (Esc to go on)' : 'Press Ctrl+C to copy the link, Esc to go on');
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(url).then(() => say('Link copied'), fallback);
  } else {
    fallback();
  }
});
document.addEventListener('focusout', (ev) => {
  if (ev.target.id === 'copy-link-field') ev.target.hidden = true;
});

// ---- Lessons: progress kept in this browser only ----
// localStorage["outlierlab.progress"] = {lessonId: {steps: {stepId: true},
// predict: choice, quiz: {questionIndex: choice}, right: {questionIndex:
// bool}}}. The server never sees it; it only decides, run by run, whether
// a step's check holds now. A lesson is done when every step is; the quiz
// is a score beside it, never "done".
const progress = {
  key: 'outlierlab.progress',
  all() {
    try { return JSON.parse(localStorage.getItem(this.key)) || {}; } catch (_) { return {}; }
  },
  lesson(id) {
    const p = this.all()[id] || {};
    p.steps = p.steps || {};
    p.quiz = p.quiz || {};
    p.right = p.right || {};
    return p;
  },
  update(id, fn) {
    const all = this.all();
    const p = this.lesson(id);
    fn(p);
    all[id] = p;
    try { localStorage.setItem(this.key, JSON.stringify(all)); } catch (_) { /* private mode: progress is not kept */ }
  },
};

// A prediction answered on an earlier visit: tell the server with the first
// request (the "predicted" signal), so playback does not pause for it again.
// This runs before Datastar reads data-signals (deferred scripts run in
// document order, and the Datastar module comes after this file).
(function restorePrediction() {
  const page = document.querySelector('.lesson-page');
  const lab = page && page.querySelector('.lab[data-signals]');
  if (!lab || progress.lesson(page.dataset.lesson).predict === undefined) return;
  try {
    const sig = JSON.parse(lab.getAttribute('data-signals'));
    sig.predicted = true;
    lab.setAttribute('data-signals', JSON.stringify(sig));
  } catch (_) { /* leave the page as served */ }
})();

// showPrediction brings the prediction into view when the run stops at
// its pause while the page is open (played or stepped into it here, or by
// the room's instructor), not when the page opens on a run already held
// there: a page opens at its top, where its transport is (an instructor's
// page of a room waiting at the pause opened scrolled past the room's
// controls, issue 33). The stream's first redraw clears the drawn signal
// and brings the held state the page opens on; what changes after it is
// the run moving.
window.showPrediction = function (el, held, drawn) {
  if (drawn !== '') return; // the page as served, before its first redraw
  const was = el.dataset.held;
  el.dataset.held = held ? 'yes' : 'no';
  if (held && was === 'no') el.scrollIntoView({ block: 'nearest' });
};

// answer shows what a choice means: the choice picked, the right one, the
// verdict and the explanation (a prediction's reveal, a quiz answer).
function answer(box, choice) {
  const right = Number(box.dataset.answer);
  box.querySelectorAll('.choice').forEach((b) => {
    const i = Number(b.dataset.choice);
    b.classList.toggle('picked', i === choice);
    b.classList.toggle('right', i === right);
    b.classList.toggle('wrong', i === choice && i !== right);
    b.setAttribute('aria-pressed', i === choice ? 'true' : 'false');
  });
  const letter = String.fromCharCode(65 + right);
  const verdict = box.querySelector('.verdict');
  if (verdict) verdict.textContent = choice === right ? 'Right.' : 'Not quite: the answer is ' + letter + '.';
  box.classList.add('answered');
  box.querySelectorAll('.choice').forEach((b) => b.setAttribute('aria-disabled', 'true'));
  const reveal = box.querySelector('.reveal');
  if (reveal) reveal.hidden = false;
  // The prose kept back until the prediction is answered.
  if (box.dataset.kind === 'predict') {
    document.querySelectorAll('.after-prediction[hidden]').forEach((el) => { el.hidden = false; });
  }
}

document.addEventListener('click', (ev) => {
  const btn = ev.target.closest && ev.target.closest('.choice[data-choice]');
  const box = btn && btn.closest('[data-kind]');
  const page = document.querySelector('.lesson-page');
  if (!box || !page) return;
  // The first answer stands: a prediction or a quiz question, once
  // answered, keeps that answer (and its verdict); another click changes
  // nothing, so a wrong guess cannot be turned into a right one.
  if (box.classList.contains('answered')) return;
  const choice = Number(btn.dataset.choice);
  answer(box, choice);
  progress.update(page.dataset.lesson, (p) => {
    if (box.dataset.kind === 'predict') p.predict = choice;
    else {
      p.quiz[box.dataset.index] = choice;
      p.right[box.dataset.index] = choice === Number(box.dataset.answer);
    }
  });
  showLessonProgress();
});

// Steps: the stream re-renders a step's status; once a step is done it is
// remembered, and shown as done before on later visits.
function noteDoneSteps() {
  const page = document.querySelector('.lesson-page');
  if (!page) return;
  const done = [...page.querySelectorAll('.step-status[data-done="true"]')].map((el) => el.id.replace(/^st-/, ''));
  const p = progress.lesson(page.dataset.lesson);
  if (done.some((id) => !p.steps[id])) {
    progress.update(page.dataset.lesson, (q) => done.forEach((id) => { q.steps[id] = true; }));
  }
  showLessonProgress();
}

// progressWords says how far a lesson is: "✓ done" once every step is
// done, else how many are; the quiz as a score beside it ("quiz 2/3"),
// once a question is answered. complete is every step done.
function progressWords(p, ids, quizTotal) {
  const n = ids.filter((id) => p.steps && p.steps[id]).length;
  const complete = ids.length > 0 && n === ids.length;
  let words = complete ? '✓ done' : n + ' of ' + ids.length + ' steps done';
  const answered = Object.keys(p.quiz || {}).length;
  if (quizTotal > 0 && answered > 0) {
    const right = Object.values(p.right || {}).filter(Boolean).length;
    words += ' · quiz ' + right + '/' + quizTotal;
  }
  return { words, complete, started: n > 0 || answered > 0 };
}

function showLessonProgress() {
  const page = document.querySelector('.lesson-page');
  if (!page) return;
  const p = progress.lesson(page.dataset.lesson);
  const ids = page.dataset.steps.split(' ').filter(Boolean);
  page.querySelectorAll('.step').forEach((li) => {
    const before = !!p.steps[li.dataset.step];
    li.classList.toggle('was-done', before);
    // A step done on an earlier visit (or earlier in this one) whose check
    // does not hold in the run on screen shows a tick, "done before": the
    // header counts it done, so the step must not say ○ "not yet". The
    // stream re-renders the status; set it only where it differs, so the
    // observer that calls this does not loop.
    const st = li.querySelector('.step-status');
    if (!before || !st || st.classList.contains('done')) return;
    const mark = st.querySelector('.mark');
    const word = st.querySelector('.word');
    if (mark && mark.textContent !== '✓') mark.textContent = '✓';
    if (word && word.textContent !== 'done before') word.textContent = 'done before';
  });
  const note = page.querySelector('[data-lesson-progress]');
  if (note) note.textContent = progressWords(p, ids, Number(page.dataset.quiz)).words;
  const short = page.querySelector('[data-lesson-progress-short]');
  if (short) short.textContent = '(' + ids.filter((id) => p.steps[id]).length + '/' + ids.length + ')';
}

onPage(() => {
  const page = document.querySelector('.lesson-page');
  if (page) {
    const p = progress.lesson(page.dataset.lesson);
    const predict = page.querySelector('[data-kind="predict"]');
    if (predict && p.predict !== undefined) answer(predict, p.predict);
    page.querySelectorAll('[data-kind="quiz"]').forEach((q) => {
      if (p.quiz[q.dataset.index] !== undefined) answer(q, p.quiz[q.dataset.index]);
    });
    // characterData too: the stream's morph may rewrite a status's text
    // in place (○ over a "done before" ✓), which showLessonProgress undoes.
    observeOnce('steps', page.querySelector('.steps'), noteDoneSteps, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['data-done'] });
    noteDoneSteps();
  }

  // The course list: each lesson's progress in words.
  const all = progress.all();
  document.querySelectorAll('.lesson-card[data-lesson]').forEach((card) => {
    const p = all[card.dataset.lesson];
    const out = card.querySelector('[data-progress]');
    if (!p || !out) return;
    const ids = card.dataset.steps.split(' ').filter(Boolean);
    const w = progressWords(p, ids, Number(card.dataset.quiz));
    out.textContent = w.words;
    card.classList.toggle('complete', w.complete);
    card.classList.toggle('started', !w.complete && w.started);
  });
});

// The server could not keep a session for this tab (it is full of open
// streams): rather than acknowledge a command no stream would show, it
// answers with a call to this, and the page reloads from its address.
window.outlierlabReload = () => location.reload();

// ---- Explore timer ----
// A plan scene's "explore on your own for N min" (web/room/explore.go):
// the room's state carries when it ends, and the stream patches the
// explore signal once when it starts or stops, with how long was left as
// the server reckoned it. The page counts down from that on its own
// monotonic clock (not Date.now(), which a laptop may have wrong), so no
// event per second is needed and every page of the room agrees to the
// second. An attendee exploring on their own still sees it: the room's
// bar is not theirs to change.

const explore = { deadline: 0, timer: 0, key: '', up: false };

window.setRoomExplore = function (e) {
  const key = e && e.endMs ? e.endMs + '|' + e.minutes : '';
  clearInterval(explore.timer);
  explore.timer = 0;
  explore.deadline = key ? performance.now() + Math.max(0, e.leftMs || 0) : 0;
  const clock = $('room-explore');
  if (!clock) return;
  clock.hidden = !key;
  if (key && key !== explore.key) {
    $('room-explore-of').textContent = ' (' + e.minutes + ' min)';
    sayExplore(e.leftMs > 0 ? 'Explore on your own: ' + e.minutes + ' minutes' : '');
  }
  explore.key = key;
  explore.up = false;
  if (!key) return;
  tickExplore();
  explore.timer = setInterval(tickExplore, 250);
};

// mmss is a duration left as mm:ss, counting whole seconds up (4:59.2
// left shows 05:00 until it is 04:59).
function mmss(ms) {
  const s = Math.ceil(ms / 1000);
  return String(Math.floor(s / 60)).padStart(2, '0') + ':' + String(s % 60).padStart(2, '0');
}

function tickExplore() {
  const clock = $('room-explore');
  if (!clock || !explore.deadline) return;
  const left = explore.deadline - performance.now();
  const up = left <= 0;
  const text = up ? 'time is up' : mmss(left) + ' left';
  const out = $('room-explore-left');
  if (out.textContent !== text) out.textContent = text;
  clock.classList.toggle('up', up);
  if (up && !explore.up) sayExplore('Explore time is up');
  explore.up = up;
  if (up) {
    clearInterval(explore.timer);
    explore.timer = 0;
  }
}

// say tells a screen reader the timer's start and end (the clock itself
// is a timer, which is not read out each second).
function sayExplore(words) {
  const el = $('room-explore-say');
  if (el) el.textContent = words;
}

// ---- Spotlight ----
// A workshop's spotlight (web/room/spotlight.go): the instructor points at
// a host, a time range or a decision-log line, and every page of the room
// shows it. The room's state carries it; the stream patches the spot
// signal, and the room page's effect calls setRoomSpot. On the
// instructor's page (#room-bar.present) the pointer picks it: a host's
// lane, point, legend entry or table row, a drag across a chart's time
// axis, a log line; each pick is a POST to the room's spotlight address
// (the instructor key is an HttpOnly cookie the same-origin request
// carries). The strip's form is the keyboard's way. Attendees' clicks do
// nothing new.

const spot = { cur: {}, scrolled: '', url: null };

// setRoomSpot is the spot signal's effect: {host, from, to} as the charts
// name them (x-axis labels "40 s"), fromMs and toMs the range for the log,
// log the id of the line picked. Empty strings and zeros clear it.
window.setRoomSpot = function (sp) {
  window.roomSpot = sp;
  spot.cur = sp || {};
  document.body.dataset.spot = (sp.host || '') + '|' + (sp.from || '') + '|' + (sp.to || '');
  document.body.classList.add('in-room');
  document.querySelectorAll('.chart').forEach((el) => window.applyRoomSpot(el));
  markSpotLog();
  sayRoomSpot();
};

// spotKey names a spotlight, so the log scrolls once to each.
const spotKey = (sp) => [sp.host, sp.fromMs, sp.toMs, sp.log].join('|');
const spotOn = (sp) => !!(sp && (sp.host || sp.toMs || sp.log));

// applyRoomSpot draws the spotlight on one chart: the time range shaded on
// a series of its own, the host emphasised (its series highlighted; on a
// chart of lanes, its lane banded and its label bold). A chart redrawn
// from scratch gets it again, so the spotlight outlives the frames that
// follow it. The range's ends are x-axis labels; one the axis lacks (0 s,
// before the first sweep) is its first label. The lane is named by its
// index, which stays while the labels change ("h5 ×2").
window.applyRoomSpot = function (el) {
  const sp = window.roomSpot;
  const c = sp && window.echarts && echarts.getInstanceByDom(el);
  if (!c) return;
  // A chart that shows no spotlight, while the room shows none, is left
  // alone: every follower's chart was given (and drew at once) an empty
  // one on each of the instructor's moves, as many renders again as the
  // move's own (issue 26).
  const drawn = !!(sp.host || sp.from);
  if (!drawn && !spotDrawn.get(el)) return;
  spotDrawn.set(el, drawn);
  try {
    const labels = spotLabels(c, 0);
    const at = (l) => (labels.length && labels.indexOf(l) < 0 ? labels[0] : l);
    const lane = spotLane(c, sp.host);
    const ys = [].concat(c.getOption().yAxis || []);
    c.setOption({
      series: [{ id: 'room-spot', type: 'line', data: [], silent: true, z: 0,
        markArea: { silent: true, itemStyle: { color: 'rgba(230,159,0,0.28)', borderColor: '#e69f00', borderWidth: 1 },
          data: sp.from ? [[{ xAxis: at(sp.from) }, { xAxis: at(sp.to) }]] : [] },
        markLine: { silent: true, z: 0, symbol: ['none', 'none'], label: { show: false }, animation: false,
          lineStyle: { type: 'solid', width: lane ? lane.px : 1, color: 'rgba(230,159,0,0.28)' },
          data: lane ? [{ yAxis: lane.i }] : [] } }],
      yAxis: ys.map((a) => (a.type === 'category' ? { axisLabel: { formatter: spotLaneLabel, rich: { spot: { fontWeight: 'bold', color: '#8a4b00' } } } } : {})),
    });
    c.dispatchAction({ type: 'downplay' });
    if (sp.host) c.dispatchAction({ type: 'highlight', seriesName: sp.host });
  } catch (e) { /* a chart without a time axis (none today) keeps no spotlight */ }
};

// spotDrawn is whether a chart was given a spotlight that draws something
// (a range, a host) since it was last drawn from scratch.
const spotDrawn = new WeakMap();

// spotLane is the spotlit host's lane on a chart of lanes (a category y
// axis): its index and its height in pixels.
function spotLane(c, host) {
  const y = [].concat(c.getOption().yAxis || [])[0];
  if (!host || !y || y.type !== 'category' || !y.data) return null;
  const i = y.data.findIndex((l) => String(l).split(' ')[0] === host);
  if (i < 0) return null;
  const step = y.data.length > 1 ? Math.abs(c.convertToPixel({ yAxisIndex: 0 }, 1) - c.convertToPixel({ yAxisIndex: 0 }, 0)) : 20;
  return { i, px: Math.max(4, Math.round(step * 0.9)) };
}

// spotLaneLabel is a lane's label, in bold when it is the spotlit host's.
function spotLaneLabel(v) {
  const sp = window.roomSpot;
  return sp && sp.host && String(v).split(' ')[0] === sp.host ? '{spot|' + v + '}' : v;
}

// spotLabels are the time labels of the x axis of grid g.
function spotLabels(c, g) {
  const axes = [].concat(c.getOption().xAxis || []);
  const a = axes.find((x) => (x.gridIndex || 0) === g) || axes[0];
  return (a && a.data) || [];
}

// ---- Spotlight: the decision log ----

// markSpotLog marks the log's lines the spotlight speaks of (class spot):
// the line picked, and every line of its host (if it names one) in its
// range (if it has one); a line at t speaks of the interval that ended at
// t, so it is in the range when fromMs < t ≤ toMs (a folded run when any
// of its intervals is). The newest visible one is scrolled into view
// inside the log's own box, once per spotlight: the page itself does not
// move, and the attendee may scroll away after.
function markSpotLog() {
  const sp = spot.cur;
  const on = spotOn(sp);
  let first = null;
  document.querySelectorAll('.log-list > li.entry').forEach((li) => {
    const hit = on && spotHits(li, sp);
    li.classList.toggle('spot', hit);
    if (hit && !first && li.offsetParent !== null) first = li;
  });
  if (!on) { spot.scrolled = ''; return; }
  if (!first || spot.scrolled === spotKey(sp)) return;
  spot.scrolled = spotKey(sp);
  const box = first.closest('.log');
  if (!box) return;
  const top = first.getBoundingClientRect().top - box.getBoundingClientRect().top;
  if (top < 0 || top + first.offsetHeight > box.clientHeight) box.scrollTop += top - 8;
}

function spotHits(li, sp) {
  if (sp.log && li.id === sp.log) return true;
  if (sp.host && li.dataset.host !== sp.host) return false;
  if (sp.toMs) {
    const t = Number(li.dataset.tMs);
    const from = li.dataset.tFromMs ? Number(li.dataset.tFromMs) : t;
    if (!(t > sp.fromMs && from <= sp.toMs)) return false;
  }
  return true;
}

// The stream replaces and prepends log lines as the room plays (and a
// morph drops the class it did not send): mark them again.
document.addEventListener('DOMContentLoaded', () => {
  if (!window.MutationObserver) return;
  new MutationObserver((ms) => {
    if (!spotOn(spot.cur) && !document.querySelector('.log-list > li.spot')) return;
    if (ms.some((m) => { const n = m.target.nodeType === 1 ? m.target : m.target.parentElement; return n && n.closest && n.closest('.log'); })) markSpotLog();
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
});

// ---- Spotlight: picking it on the instructor's page ----

function spotURL() {
  if (spot.url === null) {
    const bar = document.querySelector('#room-bar.present[data-spot-url]');
    spot.url = bar ? bar.dataset.spotUrl : '';
    if (spot.url) document.body.classList.add('spot-picker');
  }
  return spot.url;
}

// sayRoomSpot shows the instructor what the room is shown.
function sayRoomSpot(msg) {
  const out = $('room-spot-now');
  if (!out) return;
  if (msg) { out.textContent = msg; out.classList.add('error'); return; }
  out.classList.remove('error');
  const sp = spot.cur;
  const parts = [];
  if (sp.host) parts.push(sp.host);
  if (sp.toMs) parts.push(sp.from.replace(/ s$/, '') + '–' + sp.to);
  out.textContent = parts.length ? 'Spotlight: ' + parts.join(', ') : '';
}

// postSpot sends a pick ({host}, {from, to} in seconds, {log}); a refusal
// is shown beside the hint in the server's words.
function postSpot(q) {
  const url = spotURL();
  if (!url) return;
  fetch(url + '?' + new URLSearchParams(q), { method: 'POST', credentials: 'same-origin' })
    .then((r) => (r.ok ? null : r.text().then((t) => sayRoomSpot(t.trim() || 'The spotlight was refused.'))))
    .catch(() => sayRoomSpot('The spotlight did not reach the server.'));
}

// spotHosts are the run's hosts, as the swimlanes and the hosts table
// name them.
function spotHosts() {
  const out = new Set();
  const lanes = raw['chart-lanes'];
  const y = lanes && lanes.yAxis && [].concat(lanes.yAxis)[0];
  ((y && y.data) || []).forEach((l) => out.add(String(l).split(' ')[0]));
  document.querySelectorAll('#envoy-hosts tbody th code').forEach((c) => out.add(c.textContent.trim()));
  return out;
}

// spotAt is where a pixel of a chart falls: the grid, the x label's index
// and, on a chart of lanes (a category y axis), the lane's host.
function spotAt(c, x, y) {
  const grids = c.getOption().grid || [{}];
  for (let g = 0; g < grids.length; g++) {
    if (!c.containPixel({ gridIndex: g }, [x, y])) continue;
    const v = c.convertFromPixel({ gridIndex: g }, [x, y]);
    const labels = spotLabels(c, g);
    const i = Math.max(0, Math.min(labels.length - 1, Math.round(v[0])));
    const ya = [].concat(c.getOption().yAxis || []).find((a) => (a.gridIndex || 0) === g);
    let host = '';
    if (ya && ya.type === 'category' && ya.data && ya.data[Math.round(v[1])] !== undefined) host = String(ya.data[Math.round(v[1])]).split(' ')[0];
    return { g, i, labels, host };
  }
  return null;
}

// spotPickable makes a chart of the instructor's page pick the spotlight
// (once per chart). A press and release in one place is a click: a host's
// point or series (ECharts' click names it), else the lane under it (the
// swimlanes' category y axis: a cell, a mark or the empty lane). A
// drag of more than a few pixels across the time axis is a range,
// outlined while it is drawn.
function spotPickable(el, c) {
  if (el.dataset.spotPick || !spotURL()) return;
  el.dataset.spotPick = '1';
  let down = null;
  let named = '';
  const band = document.createElement('div');
  band.className = 'spot-band';
  band.hidden = true;
  el.appendChild(band);
  const zr = c.getZr();
  c.on('click', (p) => { if (spotHosts().has(p.seriesName)) named = p.seriesName; });
  c.on('legendselectchanged', (p) => {
    if (!spotHosts().has(p.name)) return;
    c.dispatchAction({ type: 'legendSelect', name: p.name }); // a pick, not a hide
    postSpot({ host: p.name });
  });
  zr.on('mousedown', (e) => {
    const at = spotAt(c, e.offsetX, e.offsetY);
    down = at && { at, x: e.offsetX, y: e.offsetY };
    named = '';
  });
  zr.on('mousemove', (e) => {
    if (!down || Math.abs(e.offsetX - down.x) < 6) { band.hidden = true; return; }
    band.hidden = false;
    band.style.left = Math.min(down.x, e.offsetX) + 'px';
    band.style.width = Math.abs(e.offsetX - down.x) + 'px';
  });
  zr.on('mouseup', (e) => {
    const d = down;
    down = null;
    band.hidden = true;
    if (!d) return;
    const end = spotAt(c, e.offsetX, e.offsetY);
    if (Math.abs(e.offsetX - d.x) >= 6 && end && end.g === d.at.g && end.i !== d.at.i) {
      const [a, b] = [d.at.i, end.i].sort((m, n) => m - n);
      postSpot({ from: parseFloat(d.at.labels[a]), to: parseFloat(d.at.labels[b]) });
      return;
    }
    // ECharts' click comes after the release: let it name the series.
    setTimeout(() => {
      const host = named || (spotHosts().has(d.at.host) ? d.at.host : '');
      if (host) postSpot({ host });
    }, 0);
  });
}

// A log line, or a host's row in Envoy's hosts table, on the instructor's
// page; a click that ends a selection (text copied from the log) picks
// nothing.
document.addEventListener('click', (ev) => {
  if (!ev.target.closest || !spotURL() || String(window.getSelection && getSelection()).trim()) return;
  const li = ev.target.closest('.log-list > li.entry[id]');
  if (li) { postSpot({ log: li.id }); return; }
  const row = ev.target.closest('#envoy-hosts tbody tr');
  const name = row && row.querySelector('th code');
  if (name) postSpot({ host: name.textContent.trim() });
});

// By keyboard, on the instructor's page: the decision log is one tab
// stop (its newest line, or the one last focused); ↑ and ↓ move along its
// lines, Home and End to the newest and oldest, and Enter spotlights the
// focused line, as a click does. The lab's own keys are not taken there.
function spotLogLines() {
  return Array.from(document.querySelectorAll('.log-list > li.entry[id]')).filter((li) => li.offsetParent !== null);
}

function spotLogStops() {
  if (!spotURL()) return;
  const lines = spotLogLines();
  if (!lines.length) return;
  const cur = lines.find((li) => li.getAttribute('tabindex') === '0') || lines[0];
  for (const li of lines) {
    const want = li === cur ? '0' : '-1';
    if (li.getAttribute('tabindex') !== want) li.setAttribute('tabindex', want);
  }
}

onPage(() => {
  const panel = document.querySelector('.log-panel');
  if (!panel || !spotURL()) return;
  spotLogStops();
  // A redraw morphs the log's lines in place: lines that stay lose the
  // tabindex the server never renders, with no child added or removed
  // (the log had no tab stop after a spotlight's redraw, CI under load).
  observeOnce('spot-log', panel, spotLogStops, { childList: true, subtree: true, attributes: true, attributeFilter: ['tabindex'] });
});

document.addEventListener('keydown', (ev) => {
  const li = ev.target.closest && ev.target.closest('.log-list > li.entry[id]');
  if (!li || !spotURL() || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const lines = spotLogLines();
  const i = lines.indexOf(li);
  let to = -1;
  switch (ev.key) {
    case 'ArrowDown': to = Math.min(i + 1, lines.length - 1); break;
    case 'ArrowUp': to = Math.max(i - 1, 0); break;
    case 'Home': to = 0; break;
    case 'End': to = lines.length - 1; break;
    case 'Enter': postSpot({ log: li.id }); break;
    default: return;
  }
  ev.preventDefault();
  ev.stopImmediatePropagation();
  if (to >= 0 && lines[to]) {
    for (const l of lines) l.setAttribute('tabindex', l === lines[to] ? '0' : '-1');
    lines[to].focus();
  }
}, true);

// ---- Recording player ----

// On a recording's page the keys drive the replay, not the lab under it
// (whose transport is hidden, and whose state the recording sets): space
// plays or pauses the replay; the lab's other keys do nothing there.
document.addEventListener('keydown', (ev) => {
  const play = $('rec-play');
  if (!play || ev.altKey || ev.ctrlKey || ev.metaKey || ev.key === 'Escape' || ev.key === '?') return;
  const t = ev.target;
  if (typing(t) || document.querySelector('dialog[open]')) return;
  if (ev.key === ' ' && !(pressable(t) && !isRange(t))) {
    ev.preventDefault();
    play.click();
  }
  ev.stopImmediatePropagation();
}, true);
