// <olab-chart>: one chart box that owns its ECharts instance. The server
// builds every option (web/chart) and the stream hands them over by two
// named calls, applyCharts and advanceCharts (the script the stream runs
// carries the options as literals: one call per redraw is the cheapest
// way to give them, and the tests read the same calls off the stream).
// The element keeps the server's last option (option), fits it to its
// box (fit.js), follows its box's size and whether it is in view, draws
// itself as a table when asked, and tells the page what happened by DOM
// events (olab-drawn), never by globals.
import { fitChart, sameShape, sameTicks, chartMode, projectorType, bandLegend, bandHeight, wrapsLegend } from './fit.js';

// Charts out of the window: a chart out of view (100 px margin) keeps
// each redraw's option until it scrolls in (give), with its zrender loop
// paused, so nothing is merged or drawn off screen: a slider move on the
// lab at 1280×900 redrew six charts of which two are on screen, and that
// was most of the move's time (issue 26). Its accessible name follows
// every redraw, and getOption gives the last option.
const views = window.IntersectionObserver && new IntersectionObserver((entries) => {
  for (const e of entries) e.target.inView(e.isIntersecting);
}, { rootMargin: '100px 0px' });

// Charts follow their box's size (the projector view, a drawer, a phone
// turned): once a frame, whatever changed.
const boxes = window.ResizeObserver && new ResizeObserver((entries) => {
  requestAnimationFrame(() => { for (const e of entries) if (e.target.isConnected) e.target.refit(); });
});

class OlabChart extends HTMLElement {
  connectedCallback() {
    if (views) views.observe(this);
    if (boxes) boxes.observe(this);
  }

  // A box a morph moves is disconnected and connected in one task; one a
  // new page dropped is gone by the next microtask, and its instance too.
  disconnectedCallback() {
    queueMicrotask(() => {
      if (this.isConnected) return;
      if (views) views.unobserve(this);
      if (boxes) boxes.unobserve(this);
      if (this.chart) this.chart.dispose();
      this.chart = null;
      this.fitted = null;
      this.shown = null;
    });
  }

  // echarts is the instance, made on the first option. A box may ask for
  // SVG (the handout: vector and real text on paper, where a canvas
  // prints as a bitmap at screen resolution).
  echarts() {
    if (!this.chart && window.echarts) {
      this.chart = echarts.init(this, null, { renderer: this.dataset.renderer === 'svg' ? 'svg' : 'canvas' });
      // What reads the option (a spotlight, a test) reads the last one.
      const get = this.chart.getOption;
      this.chart.getOption = (...args) => {
        this.flush();
        return get.apply(this.chart, args);
      };
      this.chart.on('rendered', () => {
        this.fitLegend();
        this.fitTicks();
      });
      // The observer's first word on the box came before it had an
      // instance to pause (connectedCallback): a box born out of view
      // starts paused, or every redraw drew it.
      if (this.visible === false) this.inView(false);
    }
    return this.chart;
  }

  // show draws the server's option. replace drops the old option (a new
  // run may have other hosts); height follows a run's lanes (px).
  show(option, replace, height) {
    const chart = this.echarts();
    if (!chart) return;
    if (height && bandLegend(this)) this.dataset.plotBox = String(height);
    if (height && this.style.height !== (bandHeight(this) || height + 'px')) {
      this.style.height = bandHeight(this) || height + 'px';
      chart.resize();
    }
    this.option = option;
    this.dataset.mode = chartMode(this);
    // Read once: a window's resize reads it again (refit).
    if (this.dataset.mode === 'projector' && !this.dataset.fs) this.dataset.fs = projectorType(this);
    // A redraw that gives a chart the option it shows, in the box it was
    // fitted to, changes nothing on it: ECharts is not asked to draw it
    // again (a slider move that changes no decision). A played frame
    // always brings another option.
    const json = JSON.stringify(option);
    const box = this.dataset.mode + '/' + (this.dataset.fs || '');
    const last = this.shown;
    this.shown = { json, box };
    if (last && last.json === json && last.box === box && this.fitted) return;
    const fit = fitChart(this, option);
    // A redraw of the same shape as the option the chart holds (a slider
    // move: the same hosts, series and components, other numbers) is
    // merged, not replaced: ECharts then updates the views it has instead
    // of building every axis, legend and mark anew, which cost 35–120 ms
    // a move for the lab's six charts (issue 26). sameShape holds only
    // when the result is the same.
    const merge = replace && this.fitted && sameShape(this.fitted, fit, true);
    const first = !this.fitted;
    this.fitted = fit;
    this.give(fit, { notMerge: !!replace && !merge, lazyUpdate: !first }, first);
    this.describe(option);
    this.dispatchEvent(new CustomEvent('olab-drawn', { bubbles: true, detail: { fresh: !!replace && !merge, replace: !!replace, first } }));
    if (this.tableShown()) this.renderTable();
  }

  // advance applies a played frame's patch (web/chart/chart_patch.go
  // documents the form) to the option the element holds.
  advance(patch) {
    if (this.option !== undefined) this.show(patchValue(this.option, patch), false);
  }

  // inView pauses or resumes the drawing; a resumed loop draws the last
  // option given.
  inView(on) {
    this.visible = on;
    const c = this.chart;
    if (!c) return;
    if (on) {
      this.flush();
      c.getZr().animation.resume();
    } else c.getZr().animation.pause();
  }

  // give hands ECharts a fitted option. A chart out of the window gets it
  // once it scrolls in (inView), unless now: merging it into ECharts'
  // model took about 1 ms a chart, for six of a slider move's eight
  // charts on the lab (issue 26). Options held meanwhile are one: the
  // last, replacing the model if any of them did. Whatever reads the
  // instance's option gets it first (getOption).
  give(fit, opts, now) {
    const p = this.pending;
    if (!now && this.visible === false) {
      this.pending = { fit, opts: p ? { notMerge: p.opts.notMerge || !!opts.notMerge, lazyUpdate: true } : opts };
      return;
    }
    this.pending = null;
    this.chart.setOption(fit, p && p.opts.notMerge ? Object.assign({}, opts, { notMerge: true }) : opts);
  }

  // flush gives ECharts the option held back while out of view.
  flush() {
    const p = this.pending;
    if (p && this.chart) this.give(p.fit, p.opts, true);
  }

  // refit redoes the chart when its box changed mode (the projector view
  // toggled, a window crossing the narrow width) or, on a projector, its
  // height, and resizes it in any case.
  refit() {
    const chart = this.chart;
    if (!chart || !this.option) return;
    const mode = chartMode(this);
    const fs = mode === 'projector' ? String(projectorType(this)) : undefined;
    if (mode !== (this.dataset.mode || '') || fs !== this.dataset.fs) {
      this.dataset.mode = mode;
      if (fs) this.dataset.fs = fs;
      else delete this.dataset.fs;
      delete this.dataset.legendH; // measured in the other mode
      delete this.dataset.plotW;
      this.fitAgain({ notMerge: true });
      this.dispatchEvent(new CustomEvent('olab-drawn', { bubbles: true, detail: { fresh: true, replace: true } }));
    } else if (mode === 'projector' && ([].concat(this.option.grid || []).length > 1 || Math.abs(this.clientHeight - +this.dataset.fitH) > 2)) {
      this.fitAgain(); // a strip laid out in pixels, or labels fitted to another height
    }
    chart.resize(); // fitTicks then fits the time labels to the new width
  }

  fitAgain(opts) {
    this.fitted = fitChart(this, this.option);
    this.give(this.fitted, opts || {}, false);
  }

  // fitTicks measures the plot the time labels were chosen for; when it
  // is another width than supposed (containLabel's value labels are only
  // estimated) the chart is fitted again with it, once a width, and given
  // the fit only if it chose other labels (a redraw cost a frame).
  fitTicks() {
    const chart = this.chart;
    if (!chart || !this.option || !this.dataset.ticksW) return;
    const g = chart.getModel() && chart.getModel().getComponent('grid');
    const w = g && g.coordinateSystem ? Math.round(g.coordinateSystem.getRect().width) : 0;
    if (w <= 0) return;
    this.dataset.plotW = String(w);
    if (Math.abs(w - +this.dataset.ticksW) <= 2) return;
    // Not from inside ECharts' own drawing, which ignores a setOption.
    setTimeout(() => {
      if (!this.chart) return;
      const was = this.fitted;
      this.fitted = fitChart(this, this.option);
      if (!was || !sameTicks(was, this.fitted)) this.give(this.fitted, {}, false);
    }, 0);
  }

  // fitLegend measures a projector's (or a band's) legend each time it is
  // drawn; when it took another height than the plot left it, the chart
  // is fitted again around it (at most once a height: the loop ends).
  fitLegend() {
    const chart = this.chart;
    if (!chart || !this.option || (this.dataset.mode !== 'projector' && !bandLegend(this) && !(this.dataset.mode && wrapsLegend(this.option)))) return;
    const m = chart.getModel() && chart.getModel().getComponent('legend');
    const v = m && chart.getViewOfComponentModel(m);
    if (!v || !v.group) return;
    const h = Math.ceil(v.group.getBoundingRect().height);
    if (h <= 0 || Math.abs(h - (+this.dataset.legendH || 0)) <= 2) return;
    this.dataset.legendH = String(h);
    setTimeout(() => {
      if (!this.chart) return;
      const grow = bandHeight(this);
      if (grow && this.style.height !== grow) {
        this.style.height = grow;
        this.chart.resize();
      }
      this.fitAgain();
    }, 0);
  }

  // describe makes the box's accessible name the chart's title and the
  // sentence the server wrote for the cursor (ECharts' own aria is off).
  describe(o) {
    const alt = o.aria && o.aria.label && o.aria.label.description;
    if (alt) this.setAttribute('aria-label', this.dataset.title + '. ' + alt);
  }

  // The table the box's Table button shows (its signal, in the template,
  // unhides it and calls renderTable).
  tableBox() { return document.getElementById('tbl-' + this.id); }
  tableShown() { const t = this.tableBox(); return !!t && !t.hidden; }
  renderTable() {
    const box = this.tableBox();
    const scrub = document.getElementById('scrub');
    if (box && this.option) renderTable(box, this.option, this.dataset.title, scrub ? Number(scrub.value) : 0);
  }
}

customElements.define('olab-chart', OlabChart);

// patchValue is v with patch p applied; v itself is left as it was
// (ECharts may still hold it).
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

const box = (id) => {
  const el = document.getElementById(id);
  return el instanceof OlabChart ? el : null;
};

// applyCharts is what the stream calls on a redraw: {chartId: option},
// replace, and heights ({chartId: px}) for boxes that follow the run.
window.applyCharts = function (options, replace, heights) {
  for (const id in options) {
    const el = box(id);
    if (el) el.show(options[id], replace, heights && heights[id]);
  }
};

// advanceCharts is what the stream calls for a played frame: {chartId:
// patch}, what turns the option the page holds into the one at the new
// cursor.
window.advanceCharts = function (patches) {
  for (const id in patches) {
    const el = box(id);
    if (el) el.advance(patches[id]);
  }
};

// ---- A chart as a table: its data up to the cursor, newest first, for
// a reader who cannot see the chart (the box's Table button) ----

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

// renderTable fills box with option o's table at cursor n. The box is the
// page's own (the server renders it empty and hidden), not the stream's.
function renderTable(box, o, title, n) {
  const t = tableRows(o, n);
  const head = '<tr>' + t.head.map((h) => '<th scope="col">' + esc(h) + '</th>').join('') + '</tr>';
  const body = t.rows.map((r) => '<tr><th scope="row">' + esc(r[0]) + '</th>' + r.slice(1).map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join('');
  box.innerHTML = '<table><caption>' + esc(title) + ', newest first</caption><thead>' + head + '</thead><tbody>' +
    (body || '<tr><td colspan="' + t.head.length + '">No interval yet.</td></tr>') + '</tbody></table>';
}
