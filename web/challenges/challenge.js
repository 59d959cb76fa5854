// The challenges' pages (web/challenges): "Grade my settings" posts the
// form and shows the answer in place, and this browser keeps each
// challenge's best result, which /challenges and the course page show.
//
// The post is a fetch of the form rather than a Datastar @post: Datastar
// drops the body of an answer that is not a 200, and a refused value's
// 422 (or a 429 naming the wait) must reach the learner in the server's
// words. Without script the form posts as a page and the server answers
// with the page and its result.

const KEY = 'outlierlab.challenges';

// load is {id: {title, pass, passed, total, at}} as this browser keeps it.
export function load() {
  try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (_) { return {}; }
}

// record keeps a result: a pass is never overwritten by a later failure
// (the best result is the one shown), a failure keeps the most goals.
function record(id, title, r) {
  const all = load();
  const prev = all[id];
  const better = !prev || (r.pass && !prev.pass) || (!prev.pass && r.passed >= prev.passed);
  if (!better) return;
  all[id] = { title, pass: r.pass, passed: r.passed, total: r.total, at: new Date().toISOString() };
  try { localStorage.setItem(KEY, JSON.stringify(all)); } catch (_) { /* private mode: not kept */ }
}

function words(p) {
  if (!p) return '';
  return p.pass ? 'passed' : `${p.passed} of ${p.total} goals`;
}

// keep reads a result box's data attributes into the progress.
function keep(box, title) {
  if (!box || box.dataset.pass === undefined) return;
  record(box.dataset.challenge, title, {
    pass: box.dataset.pass === 'true', passed: Number(box.dataset.passed), total: Number(box.dataset.total),
  });
}

function showProgress() {
  const all = load();
  document.querySelectorAll('[data-challenge] > .challenge-progress').forEach((el) => {
    const p = all[el.parentElement.dataset.challenge];
    el.textContent = p ? '(' + words(p) + ')' : '';
    el.classList.toggle('done', !!(p && p.pass));
  });
}

// courseList fills the course page's card: each challenge this browser
// has graded, best result first among equals as kept.
function courseList() {
  const list = document.getElementById('challenge-progress');
  if (!list) return;
  const all = load();
  list.replaceChildren(...Object.keys(all).sort().map((id) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = '/challenges/' + encodeURIComponent(id);
    a.textContent = all[id].title || id;
    li.append(a, ' (' + words(all[id]) + ')');
    return li;
  }));
}

function problemBox(id, text) {
  const box = document.createElement('div');
  box.id = 'grade-result';
  box.dataset.challenge = id;
  box.setAttribute('aria-live', 'polite');
  const card = document.createElement('div');
  card.className = 'card problem';
  card.setAttribute('role', 'alert');
  const h = document.createElement('h2');
  h.textContent = 'Not graded';
  const pre = document.createElement('pre');
  pre.textContent = text;
  card.append(h, pre);
  box.append(card);
  return box;
}

// markInvalid flags the fields a refusal names ("max_ejection_percent: …").
function markInvalid(form, text) {
  form.querySelectorAll('[name]').forEach((el) => {
    const bad = text.split('\n').some((l) => l.startsWith(el.name + ':'));
    if (bad) el.setAttribute('aria-invalid', 'true'); else el.removeAttribute('aria-invalid');
  });
}

async function grade(form, page) {
  const button = form.querySelector('#grade-button');
  const status = document.getElementById('grade-status');
  button.disabled = true;
  status.textContent = 'Grading…';
  let box;
  try {
    const res = await fetch(form.action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Challenge-Fragment': '1' },
      body: new URLSearchParams(new FormData(form)),
    });
    const text = await res.text();
    if (res.ok) {
      const t = document.createElement('template');
      t.innerHTML = text;
      box = t.content.getElementById('grade-result');
      markInvalid(form, '');
    } else {
      box = problemBox(page.dataset.challenge, text.trim());
      markInvalid(form, text);
    }
  } catch (err) {
    box = problemBox(page.dataset.challenge, 'The server could not be reached: ' + err.message);
  }
  document.getElementById('grade-result').replaceWith(box);
  keep(box, page.dataset.title);
  status.textContent = '';
  button.disabled = false;
  // The verdict takes the focus: a keyboard's next Tab reaches its links.
  const verdict = box.querySelector('#grade-verdict') || box.querySelector('[role=alert]');
  if (verdict) { verdict.tabIndex = -1; verdict.focus(); }
}

const page = document.querySelector('.challenge[data-challenge]');
if (page) {
  const form = document.getElementById('grade-form');
  form.addEventListener('submit', (ev) => { ev.preventDefault(); grade(form, page); });
  keep(document.getElementById('grade-result'), page.dataset.title); // a page posted without script
}
showProgress();
courseList();
