// The roster page (#/): a card per brain and one for the medulla, filter and sort; the medulla's cap meter; what waits for review.

import { h, replace } from './dom.js';
import { fmtNum, plural, time, base, badge } from './format.js';
import { S, listen, href, title, focusTitle, markDrawn } from './shell.js';
import { instances } from './api.js';

export const SOFT_CAP = 200;
export const WARN_FROM = 300;

export async function viewRoster(root) {
  const grid = h('ul', { class: 'cards', 'aria-label': 'Brains' });
  const summary = h('ul', { class: 'summary', 'aria-label': 'Totals' });
  const filter = h('input', { type: 'search', id: 'roster-filter', placeholder: 'a root, a fingerprint…', autocomplete: 'off' });
  const sort = h('select', { id: 'roster-sort' },
    h('option', { value: 'root', text: 'root' }),
    h('option', { value: 'claims', text: 'live claims' }),
    h('option', { value: 'activity', text: 'activity (writes, recalls)' }),
    h('option', { value: 'mail', text: 'open letters' }),
    h('option', { value: 'unreviewed', text: 'claims to review' }));
  const foot = h('p', { class: 'muted' });
  root.append(
    ...title('Roster'),
    h('p', { class: 'lede', text: 'Every brain on disk, warm or dormant, and the medulla. A card carries that brain’s own numbers only: claims and acts from its store, sessions, recalls, writes and beats counted since the owner started.' }),
    summary,
    h('div', { class: 'toolbar', role: 'search' },
      h('label', {}, 'Filter brains', filter),
      h('label', {}, 'Sort by', sort)),
    grid,
    foot,
  );
  const draw = () => {
    const inst = S.instances;
    const rows = inst.instances || [];
    const brains = rows.filter((r) => r.root);
    const broken = rows.filter((r) => !r.root);
    const q = filter.value.trim().toLowerCase();
    const shown = brains.filter((b) => !q || b.root.toLowerCase().includes(q) || b.fingerprint.startsWith(q));
    const key = sort.value;
    shown.sort((a, b) => {
      if (key === 'claims') return b.claims - a.claims;
      if (key === 'activity') return (b.writes + b.recalls) - (a.writes + a.recalls);
      if (key === 'mail') return b.mailbox_open_count - a.mailbox_open_count;
      if (key === 'unreviewed') return (b.unreviewed || 0) - (a.unreviewed || 0);
      return a.root.localeCompare(b.root);
    });
    replace(summary,
      h('li', {}, h('b', { text: fmtNum(brains.length) }), 'brains'),
      h('li', {}, h('b', { text: fmtNum(brains.filter((b) => b.warm).length) }), 'warm'),
      h('li', {}, h('b', { text: fmtNum(brains.reduce((n, b) => n + (b.claims || 0), 0)) }), 'live claims in brains'),
      h('li', {}, h('b', { text: fmtNum(inst.medulla?.claims) }), 'in the medulla'),
      h('li', {}, h('a', { href: '#/review', class: 'review-total' }, h('b', { 'data-stat': 'unreviewed-total', text: fmtNum(brains.reduce((n, b) => n + (b.unreviewed || 0), inst.medulla?.unreviewed || 0)) }), 'to review')),
      broken.length ? h('li', { class: 'error' }, h('b', { text: fmtNum(broken.length) }), 'unreadable') : null);
    const cards = [medullaCard(inst.medulla)];
    if (!q) for (const u of broken) cards.push(unreadableCard(u));
    for (const b of shown) cards.push(brainCard(b));
    replace(grid, cards);
    if (!brains.length) grid.append(h('li', { class: 'empty', text: 'No brain yet: run `medulla bootstrap` in a project.' }));
    else if (!shown.length) grid.append(h('li', { class: 'empty', text: `No brain matches “${filter.value}”.` }));
    replace(foot, `retrieval: ${inst.retrieval || '—'}`, S.health ? ` · owner ${S.health.version}, pid ${S.health.pid}, home ${S.health.home}` : '');
  };
  filter.addEventListener('input', draw);
  sort.addEventListener('change', draw);
  await instances();
  draw();
  markDrawn('roster');
  focusTitle(root);
  listen(root, async () => {
    await instances(true);
    if (root.isConnected) draw();
  });
}

export function capStatus(live) {
  if (live >= WARN_FROM) return ['warn', 'bad', `at or past ${WARN_FROM}: prune or demote`];
  if (live > SOFT_CAP) return ['over soft cap', 'stale', `past the soft cap of ${SOFT_CAP}`];
  return ['ok', 'good', `within the soft cap of ${SOFT_CAP}`];
}

export function capMeter(live) {
  return h('meter', {
    min: 0, max: Math.max(WARN_FROM + 100, live), low: SOFT_CAP, high: WARN_FROM, optimum: 0, value: live,
    'aria-label': `medulla live claims: ${live} against a soft cap of ${SOFT_CAP}, warning from ${WARN_FROM}`,
  });
}

function medullaCard(m) {
  const live = m?.claims ?? 0;
  const [st, cls, says] = capStatus(live);
  return h('li', { class: 'card medulla', 'data-brain': 'medulla' },
    h('div', { class: 'head' },
      h('h3', {}, h('a', { href: '#/medulla', text: 'the medulla' })),
      m?.fault ? faultBadge(m.fault) : badge(st, cls, says)),
    h('div', { class: 'sub', text: 'doctrine, preferences, findings confirmed across projects' }),
    m?.fault ? faultNote(m.fault) : null,
    capMeter(live),
    reviewLine(m?.unreviewed, 'medulla', 'the medulla'),
    h('p', { class: 'foot' }, h('span', { 'data-stat': 'medulla-live', text: `${fmtNum(live)} live · soft cap ${SOFT_CAP} · warn from ${WARN_FROM}` })),
    h('dl', { class: 'stats' },
      stat('live', live), stat('history', m?.history_versions), stat('acts', m?.acts)));
}

/** Claims agents wrote that no person has looked at, linking to their review page. */
function reviewLine(n, id, name) {
  if (!n) return null;
  return h('p', { class: 'review-line' },
    h('a', { href: href('review', id), 'aria-label': `${plural(n, 'claim')} of ${name} to review` },
      h('b', { 'data-stat': 'unreviewed', text: fmtNum(n) }), ' to review'));
}

function stat(name, value, title) {
  return h('div', { title }, h('dt', { text: name }), h('dd', { 'data-stat': name, text: fmtNum(value) }));
}

const FAULT_WORDS = {
  damaged: ['quarantined', 'nothing reads or writes it until it is restored'],
  disk_full: ['disk full', 'it recovers by itself once there is room'],
  io: ['file fault', 'it recovers by itself once the cause is gone'],
};

function faultBadge(f) {
  const [word, says] = FAULT_WORDS[f.kind] || [f.kind, ''];
  return badge(word, 'bad', says);
}

function faultNote(f) {
  return h('p', { class: 'error', 'data-fault': f.kind, text: f.detail });
}

function brainCard(b) {
  const activity = b.warm
    ? h('span', { text: 'warm: live counts' })
    : h('span', {}, 'dormant, counts as of ', time(b.counts_as_of));
  return h('li', { class: 'card', 'data-fp': b.fingerprint, 'data-root': b.root },
    h('div', { class: 'head' },
      h('h3', {}, h('a', { href: href('brain', b.fingerprint), text: base(b.root) })),
      b.fault ? faultBadge(b.fault)
        : b.warm ? badge('warm', 'warm', 'loaded now') : badge('dormant', '', 'not loaded: numbers from its manifest')),
    h('div', { class: 'root', text: b.root }),
    checkoutList(b),
    b.fault ? faultNote(b.fault) : null,
    reviewLine(b.unreviewed, b.fingerprint, base(b.root)),
    h('dl', { class: 'stats' },
      stat('claims', b.claims, 'live claims'),
      stat('history', b.history_versions, 'outdated versions kept'),
      stat('acts', b.acts, 'recorded acts'),
      stat('open mail', b.mailbox_open_count, 'letters wet ink or in flight'),
      stat('sessions', b.sessions, 'since the owner started'),
      stat('recalls', b.recalls, 'since the owner started'),
      stat('writes', b.writes, 'since the owner started'),
      stat('beats', b.memory_beats_served, 'north beats served since the owner started')),
    h('p', { class: 'foot' }, activity, h('code', { text: b.fingerprint })));
}

/** The checkouts a brain serves (its root first), when there is more than its root. */
export function checkoutList(b) {
  const cs = b.checkouts || [];
  if (cs.length < 2 && cs.every((c) => c.exists) && !b.own) return null;
  return h('div', { class: 'checkouts' },
    b.repository ? h('p', { class: 'muted' }, 'repository ', h('code', { text: b.repository.label }), b.own ? ' · this checkout\'s own brain' : '') : null,
    h('ul', { 'aria-label': 'checkouts' }, cs.map((c) => h('li', { class: c.exists ? '' : 'warn', 'data-checkout': c.path },
      h('code', { text: c.path }),
      c.bootstrapped ? ' · bootstrapped here' : '',
      c.exists ? '' : ' · no longer exists'))));
}

function unreadableCard(u) {
  return h('li', { class: 'card unreadable', 'data-fp': u.fingerprint },
    h('div', { class: 'head' }, h('h3', { text: 'unreadable brain' }), badge('problem', 'bad')),
    h('div', { class: 'root', text: u.dir }),
    h('p', { class: 'error', text: u.problem || 'its manifest could not be read' }),
    h('p', { class: 'foot' }, h('code', { text: u.fingerprint })));
}
