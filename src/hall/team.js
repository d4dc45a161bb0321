// The team panel of the doctor page: the link's state, members, shared brains, conflicts, the team medulla.

import { h } from './dom.js';
import { fmtNum, fmtDate } from './format.js';
import { load } from './shell.js';
import { get } from './api.js';
import { claimList } from './claims.js';

/** The team link (SPEC §13): status, queue, members, shared brains, conflicts, and the team medulla's claims. */
export function teamPanel(t) {
  const ctx = { brain: null, open: new Set(), flags: new Map() };
  const claims = h('div', {});
  load(claims, async () => {
    const c = await get('/api/claims', { brain: 'team', limit: 200 });
    return [h('h3', { text: `Team medulla (${fmtNum(c.total)})` }),
      c.claims.length ? claimList(c.claims, ctx) : h('p', { class: 'empty', text: 'The team medulla holds no claim yet.' })];
  });
  const ok = t.status === 'connected';
  return h('section', { class: 'panel', id: 'team' }, h('h2', { text: 'Team' }),
    h('dl', { class: 'kv' },
      h('dt', { text: 'database' }), h('dd', {}, h('code', { text: t.url }), ' as ', h('code', { text: t.member })),
      h('dt', { text: 'link' }), h('dd', { class: ok ? 'good' : 'error', 'data-stat': 'team-status', text: ok ? 'connected' : `${t.status}${t.since ? ` since ${fmtDate(t.since)}` : ''}${t.error ? `: ${t.error}` : ''}` }),
      h('dt', { text: 'queued here' }), h('dd', { 'data-stat': 'team-queued', text: fmtNum(t.queued) }),
      h('dt', { text: 'kept here by the floor' }), h('dd', { text: fmtNum(t.refused) }),
      h('dt', { text: 'log not yet applied' }), h('dd', { text: fmtNum(t.lag) }),
      h('dt', { text: 'members' }), h('dd', { text: (t.members || []).join(', ') || 'none yet' }),
      h('dt', { text: 'shared brains' }), h('dd', {}, (t.shared || []).length
        ? h('ul', {}, t.shared.map((s) => h('li', {}, h('code', { text: s.root }), ' as ', h('code', { text: s.label || s.key }))))
        : 'none (run `medulla team share` in a repository)')),
    (t.conflicts || []).length
      ? [h('h3', { text: `Conflicts (${t.conflicts.length})` }), claimList(t.conflicts, ctx)]
      : h('p', { class: 'good', text: 'No conflicting versions between members.' }),
    (t.purge_requests || []).length
      ? [h('h3', { text: `Purges asked of the admin (${t.purge_requests.length})` }),
        h('ul', { class: 'purge-requests' }, t.purge_requests.map((r) => h('li', { class: 'warnline' },
          `${r.member} asked to erase `, h('code', { text: r.slug }), ` in ${r.store}: `, h('code', { text: r.fix }))))]
      : null,
    claims);
}
