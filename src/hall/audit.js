// The audit page (#/audit): the medulla's audit log, filtered by origin, agent and flags.

import { h, replace } from './dom.js';
import { time, badge } from './format.js';
import { listen, load, title, focusTitle, touches } from './shell.js';
import { get, instances } from './api.js';

export async function viewAudit(root, _parts, query) {
  const inst = await instances();
  const brain = h('select', { id: 'audit-brain', name: 'brain' },
    h('option', { value: '', text: 'every origin' }),
    h('option', { value: 'medulla', text: 'medulla (doctrine births)' }),
    (inst.instances || []).filter((b) => b.root).map((b) => h('option', { value: b.root, text: b.root })));
  brain.value = query.get('brain') || '';
  const agent = h('input', { type: 'text', id: 'audit-agent', name: 'agent', list: 'audit-agents', placeholder: 'vendor:role', value: query.get('agent') || '' });
  const agents = h('datalist', { id: 'audit-agents' });
  const limit = h('select', { id: 'audit-limit', name: 'limit' }, [50, 100, 500].map((n) => h('option', { value: n, text: n })));
  limit.value = query.get('limit') || '100';
  const flagsOnly = h('input', { type: 'checkbox', id: 'audit-flags', checked: query.get('flags') === '1' });
  const form = h('form', { class: 'toolbar', 'aria-label': 'Filter the audit log' },
    h('label', {}, 'Origin brain', brain),
    h('label', {}, 'Agent', agent), agents,
    h('label', {}, 'Entries', limit),
    h('label', {}, h('span', {}, flagsOnly, ' flags only')),
    h('button', { type: 'submit', class: 'primary', text: 'Filter' }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = new URLSearchParams({ brain: brain.value, agent: agent.value.trim(), limit: limit.value, flags: flagsOnly.checked ? '1' : '' });
    location.hash = `#/audit?${p}`;
  });
  const table = h('div', {});
  root.append(
    ...title('Audit'),
    h('p', { class: 'lede', text: 'The medulla’s audit log: promotions, doctrine births and demotions, newest first. Only *:orchestrator and human:founder are expected to promote; others land flagged. Agent ids are self-declared: this is an audit trail, not a lock.' }),
    form, table);
  const draw = async () => {
    const v = await get('/api/audit', { brain: brain.value, agent: agent.value.trim(), limit: limit.value });
    const seen = new Set((v.entries || []).map((e) => e.agent));
    replace(agents, [...seen].map((a) => h('option', { value: a })));
    const entries = (v.entries || []).filter((e) => !flagsOnly.checked || e.flag);
    if (!entries.length) return h('p', { class: 'empty', text: 'No entry matches.' });
    return h('div', { class: 'tablewrap' }, h('table', { class: 'audit' },
      h('caption', { text: v.caption || `${entries.length} entries` }),
      h('thead', {}, h('tr', {}, ['when', 'kind', 'claim', 'agent', 'origin', 'reason', 'etiquette'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, entries.map((e) => h('tr', { 'data-slug': e.slug, 'data-kind': e.kind },
        h('td', {}, time(e.at)),
        h('td', {}, badge(e.kind.replaceAll('_', ' '))),
        h('td', {}, h('code', { text: e.slug }), e.origin_claim ? h('div', { class: 'muted mono', text: e.origin_claim }) : null),
        h('td', {}, h('code', { text: e.agent })),
        h('td', {}, h('code', { text: e.origin_brain })),
        h('td', { text: e.reason || '' }),
        h('td', {}, e.flag ? badge(e.flag.replaceAll('_', ' '), 'flag', 'this agent was not expected to do this') : e.etiquette_expected ? badge('expected', 'good') : badge('—')))))));
  };
  await load(table, draw);
  focusTitle(root);
  listen(table, (batch) => { if (touches(batch, 'medulla')) load(table, draw); });
}
