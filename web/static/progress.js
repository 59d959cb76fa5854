// progress.js: the learner's course progress as a file to keep or carry to
// another browser (issue 38: progress lived only in one browser). No
// account and nothing on the server: app.js keeps the progress in
// localStorage["outlierlab.progress"] = {lessonId: {steps: {stepId: true},
// predict: place, quiz: {index: place}, right: {index: bool}}}; this
// module saves that object as outlierlab-progress.json and merges such a
// file back in. The home page holds the box (#progress-io), hidden until
// this module runs, so a browser without scripts is offered nothing.

const KEY = 'outlierlab.progress';
const ID = /^[a-z0-9-]{1,64}$/;

// problem says what is wrong with a parsed file, or '' if it is progress.
export function problem(v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'it holds no lessons';
  for (const [id, p] of Object.entries(v)) {
    if (!ID.test(id)) return 'a lesson is named ' + JSON.stringify(id.slice(0, 40));
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return 'lesson ' + id + ' is not a record';
    for (const part of ['steps', 'quiz', 'right']) {
      if (p[part] !== undefined && (typeof p[part] !== 'object' || p[part] === null || Array.isArray(p[part]))) return 'lesson ' + id + "'s " + part + ' is not a record';
    }
    for (const [k, x] of Object.entries(p.steps || {})) if (!ID.test(k) || typeof x !== 'boolean') return 'lesson ' + id + "'s step " + JSON.stringify(k.slice(0, 40)) + ' is not true or false';
    for (const x of Object.values(p.quiz || {})) if (!Number.isInteger(x) || x < 0 || x > 9) return 'lesson ' + id + ' has a quiz answer that is not a choice (0–9)';
    for (const x of Object.values(p.right || {})) if (typeof x !== 'boolean') return 'lesson ' + id + ' has a quiz mark that is not true or false';
    if (p.predict !== undefined && (!Number.isInteger(p.predict) || p.predict < 0 || p.predict > 9)) return 'lesson ' + id + "'s prediction is not a choice (0–9)";
  }
  return '';
}

// merge lays a file's progress over this browser's: a step done in either
// is done; an answer this browser already has stands (the first answer
// stands, as on the lesson page).
export function merge(mine, theirs) {
  for (const [id, p] of Object.entries(theirs)) {
    const m = mine[id] || (mine[id] = {});
    m.steps = Object.assign({}, m.steps, Object.fromEntries(Object.entries(p.steps || {}).filter(([, x]) => x)), Object.fromEntries(Object.entries(m.steps || {}).filter(([, x]) => x)));
    m.quiz = Object.assign({}, p.quiz, m.quiz);
    m.right = Object.assign({}, p.right, m.right);
    if (m.predict === undefined && p.predict !== undefined) m.predict = p.predict;
  }
  return mine;
}

function stored() {
  try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch (_) { return {}; }
}

function setup() {
  const box = document.getElementById('progress-io');
  if (!box) return;
  const say = (text) => { box.querySelector('[data-progress-status]').textContent = text; };
  box.querySelector('[data-progress-export]').addEventListener('click', () => {
    const url = URL.createObjectURL(new Blob([JSON.stringify(stored(), null, 1)], { type: 'application/json' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: 'outlierlab-progress.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    say('Saved as outlierlab-progress.json.');
  });
  const input = box.querySelector('[data-progress-import]');
  input.addEventListener('change', async () => {
    const file = input.files && input.files[0];
    if (!file) return;
    let theirs;
    try { theirs = JSON.parse(await file.text()); } catch (_) { say('Not imported: the file is not JSON.'); return; }
    const bad = problem(theirs);
    if (bad) { say('Not imported: ' + bad + '.'); return; }
    try {
      localStorage.setItem(KEY, JSON.stringify(merge(stored(), theirs)));
    } catch (_) { say('Not imported: this browser keeps no storage (private mode?).'); return; }
    say('Imported ' + Object.keys(theirs).length + ' lessons’ progress. The list shows it when the page reloads.');
    input.value = '';
  });
  box.hidden = false;
}

setup();
