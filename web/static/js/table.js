// A chart as a table: the chart's data up to the cursor, newest first,
// for a reader who cannot see the chart (the box's Table button).

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
export function renderTable(box, o, title, n) {
  const t = tableRows(o, n);
  const head = '<tr>' + t.head.map((h) => '<th scope="col">' + esc(h) + '</th>').join('') + '</tr>';
  const body = t.rows.map((r) => '<tr><th scope="row">' + esc(r[0]) + '</th>' + r.slice(1).map((c) => '<td>' + esc(c) + '</td>').join('') + '</tr>').join('');
  box.innerHTML = '<table><caption>' + esc(title) + ', newest first</caption><thead>' + head + '</thead><tbody>' +
    (body || '<tr><td colspan="' + t.head.length + '">No interval yet.</td></tr>') + '</tbody></table>';
}
