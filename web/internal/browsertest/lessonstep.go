package browsertest

// StepInView is JavaScript, a function of a step id, true when that step of
// a lesson page is current and the transport and the step's key chart
// are both wholly in the window, drawn, the chart not under the sticky
// transport (issue 38: one idea per step on one screen); else false
// (StepWhere says why). TestBrowserLessonFocus and the lesson walk
// (web/lessonwalk) both ask it.
const StepInView = `((id) => {
	const li = document.getElementById('step-' + id), bar = document.querySelector('.lesson-lab .transport');
	const fig = li && document.getElementById('fig-' + li.dataset.key);
	if (!li || !bar || !fig || !li.classList.contains('now') || !fig.classList.contains('key') || !fig.querySelector('canvas')) return false;
	const inView = (r) => r.width > 0 && r.height > 0 && r.top >= -0.5 && r.left >= -0.5 && r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5;
	const b = bar.getBoundingClientRect(), c = fig.getBoundingClientRect();
	return fig.checkVisibility() && bar.checkVisibility() && inView(b) && inView(c) && b.bottom <= c.top + 0.5;
})`

// StepWhere is JavaScript, a function of a step id, that says where the
// step's parts are, for a failure of StepInView.
const StepWhere = `((id) => {
	const li = document.getElementById('step-' + id), bar = document.querySelector('.lesson-lab .transport');
	const fig = li && document.getElementById('fig-' + li.dataset.key);
	const r = (el) => el ? (({top, bottom, left, right}) => [top, bottom, left, right].map(Math.round).join(','))(el.getBoundingClientRect()) + (el.checkVisibility() ? '' : ' (not visible)') : 'none';
	return 'window ' + innerWidth + '×' + innerHeight + ', scrollY ' + Math.round(scrollY) + '; step ' + (li ? li.className : 'none') + ' at ' + r(li) +
		'; transport (top,bottom,left,right) ' + r(bar) + '; key chart ' + (fig ? fig.id + ' ' + fig.className : '') + ' at ' + r(fig) + ', canvas ' + !!(fig && fig.querySelector('canvas'));
})`
