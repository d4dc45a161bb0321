// The mailbox page (#/mailbox): every letter once with its fate, by box; letter lists for other pages.

import { h, replace } from './dom.js';
import { fmtNum, time, badge } from './format.js';
import { listen, load, title, focusTitle } from './shell.js';
import { get } from './api.js';

const FATES = {
  wet_ink: { mark: '◌', name: 'wet ink', says: 'unanswered' },
  in_flight: { mark: '➶', name: 'in flight', says: 'answered, not yet closed' },
  fired_clay: { mark: '●', name: 'fired clay', says: 'closed by a triage or receipt' },
  external: { mark: '↗', name: 'external', says: 'about another tool' },
  settled: { mark: '·', name: 'closing letter', says: 'a triage or receipt itself' },
};

function fateMark(state) {
  const key = state || 'settled';
  const f = FATES[key] || { mark: '?', name: key, says: '' };
  return h('span', { class: 'fate', 'data-fate': key, title: f.says }, h('span', { 'aria-hidden': 'true', text: f.mark }), f.name);
}

export function fateCounts(c) {
  if (!c) return null;
  return h('ul', { class: 'summary', 'aria-label': 'Letters by fate' },
    ['wet_ink', 'in_flight', 'fired_clay', 'external'].map((k) => h('li', {}, h('b', { text: fmtNum(c[k]) }), fateMark(k))),
    h('li', {}, h('b', { text: fmtNum(c.open) }), 'open (wet ink + in flight)'));
}

export function letterList(letters) {
  return h('ul', { class: 'letters' }, letters.map((l) => h('li', { class: 'letter', 'data-letter': l.id, 'data-fate': l.state || 'settled' },
    h('div', { class: 'line1' },
      fateMark(l.state),
      h('code', { text: l.id }),
      l.class ? badge(l.class) : null,
      l.kind ? badge(l.kind, l.class === 'memory_misdelivery' ? 'flag' : '') : null,
      l.tool && l.tool !== 'medulla' ? badge(`tool ${l.tool}`) : null,
      h('span', { class: 'muted' }, l.agent ? h('code', { text: l.agent }) : null, ' ', time(typeof l.ts === 'number' ? l.ts : l.ts ?? null))),
    l.what ? h('p', { class: 'what', text: l.what }) : null,
    h('p', { class: 'meta muted' },
      l.repo ? ['repo ', h('code', { text: l.repo }), ' '] : null,
      l.answers?.length ? ['answers ', l.answers.map((a) => h('code', { text: a + ' ' }))] : null,
      l.answered_by?.length ? ['answered by ', l.answered_by.map((a) => h('code', { text: a + ' ' }))] : null),
    h('details', {}, h('summary', { text: 'the letter as written' }), h('pre', { class: 'mono', text: JSON.stringify(l.letter, null, 2) })))));
}

export async function viewMailbox(root) {
  const body = h('div', {});
  const fateFilter = new Set();
  root.append(
    ...title('Mailbox'),
    h('p', { class: 'lede', text: 'Field reports: every letter once (the spool and every known box), with its fate. Fates are derived, never stored: wet ink is unanswered, in flight is answered but not closed, fired clay is closed by a triage or receipt, external is about another tool.' }),
    body);
  let sweep;
  const draw = () => {
    const letters = sweep.letters.filter((l) => !fateFilter.size || fateFilter.has(l.state || 'settled'));
    const boxes = new Map();
    for (const l of letters) {
      // The box a letter was filed into; a letter only in the spool is not delivered yet.
      const boxesOf = (l.found_in || []).filter((f) => f !== 'spool');
      const where = boxesOf.length ? boxesOf[0] : 'the spool only (not filed in a box)';
      if (!boxes.has(where)) boxes.set(where, []);
      boxes.get(where).push(l);
    }
    const filters = h('fieldset', { class: 'toolbar' }, h('legend', { text: 'Show fates' }),
      Object.keys(FATES).map((k) => h('label', {}, h('span', {}, h('input', { type: 'checkbox', checked: fateFilter.has(k), onchange: (e) => { e.target.checked ? fateFilter.add(k) : fateFilter.delete(k); replace(body, draw()); } }), ' ', fateMark(k)))));
    return [
      fateCounts(sweep.counts),
      h('div', { class: 'grid2' },
        h('div', { class: 'panel' }, h('h2', { text: 'Not delivered' }), h('dl', { class: 'kv' },
          h('dt', { text: 'pending distribution' }), h('dd', { 'data-stat': 'pending', text: fmtNum(sweep.pending_distribution) }),
          h('dt', { text: 'refused at the floor' }), h('dd', { 'data-stat': 'refused', text: fmtNum(sweep.refused_at_floor) }),
          h('dt', { text: 'spool lines not letters' }), h('dd', { text: fmtNum(sweep.spool_garbage_lines) }))),
        h('div', { class: 'panel' }, h('h2', { text: `Unreachable boxes (${sweep.unreachable.length})` }),
          sweep.unreachable.length
            ? h('ul', {}, sweep.unreachable.map((u) => h('li', {}, h('code', { text: u.box }), ': ', u.why)))
            : h('p', { class: 'empty', text: 'Every known box could be read.' }))),
      filters,
      [...boxes].map(([where, ls]) => h('section', { class: 'box', 'aria-label': `box ${where}` },
        h('h3', { text: `${where} (${ls.length})` }),
        letterList(ls.slice(0, 300)),
        ls.length > 300 ? h('p', { class: 'muted', text: `and ${ls.length - 300} more` }) : null)),
      letters.length ? null : h('p', { class: 'empty', text: 'No letter.' }),
    ];
  };
  const fetchDraw = async () => { sweep = await get('/api/mailbox/sweep'); return draw(); };
  await load(body, fetchDraw);
  focusTitle(root);
  listen(body, (batch) => { if (batch.some((e) => e.kind === 'mail' || e.verb === 'report')) load(body, fetchDraw); });
}
