// The medulla page (#/medulla): the cap, the doctrine with witness changes and flags, its act log and mailbox.

import { h, replace } from './dom.js';
import { plural, badge } from './format.js';
import { listen, load, href, title, focusTitle, touches } from './shell.js';
import { get, instances } from './api.js';
import { claimList } from './claims.js';
import { SOFT_CAP, WARN_FROM, capStatus, capMeter } from './roster.js';
import { actsPanel, boxPanel } from './brain.js';

export async function viewMedulla(root, [tab = 'doctrine']) {
  const inst = await instances();
  const live = inst.medulla?.claims ?? 0;
  const [st, cls, says] = capStatus(live);
  const body = h('div', {});
  root.append(
    ...title('The medulla'),
    h('p', { class: 'lede', text: 'What belongs to no single repository: doctrine, preferences, findings confirmed across projects. Every brain’s default recall reads it; only the audit actor writes it.' }),
    h('div', { class: 'panel' },
      h('p', {}, h('strong', { 'data-stat': 'medulla-live', text: `${plural(live, 'live claim')}` }), ` against a soft cap of ${SOFT_CAP} (warn from ${WARN_FROM}) `, badge(st, cls, says)),
      capMeter(live),
      h('p', { class: 'muted', text: `${plural(inst.medulla?.history_versions ?? 0, 'outdated version')} in history · ${plural(inst.medulla?.acts ?? 0, 'act')}` })),
    h('nav', { class: 'tabs', 'aria-label': 'Medulla sections' },
      [['doctrine', 'Doctrine'], ['acts', 'Act log'], ['mailbox', 'Mailbox']].map(([t, label]) => h('a', { href: href('medulla', t), 'aria-current': t === tab ? 'page' : false, text: label }))),
    body);
  if (tab === 'acts') await actsPanel(body, 'medulla', 'the medulla');
  else if (tab === 'mailbox') await boxPanel(body, 'medulla', 'the medulla');
  else await doctrinePanel(body);
  focusTitle(root);
}

async function doctrinePanel(el) {
  const filter = h('input', { type: 'search', id: 'doctrine-filter', placeholder: 'label, text, origin, agent…', autocomplete: 'off' });
  const list = h('div', {});
  el.append(h('div', { class: 'toolbar', role: 'search' }, h('label', {}, 'Filter doctrine', filter)), list);
  const ctx = { brain: null, open: new Set(), flags: new Map() };
  let rows = [];
  let total = 0;
  const fetchAll = async () => {
    const [claims, audit] = await Promise.all([get('/api/claims', { brain: 'medulla', limit: 5000 }), get('/api/audit', { limit: 500 })]);
    rows = claims.claims;
    total = claims.total;
    ctx.flags = new Map();
    for (const e of audit.entries || []) if (!ctx.flags.has(e.slug) && e.kind !== 'demote' && e.kind !== 'witness_superseded') ctx.flags.set(e.slug, e);
  };
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = rows.filter((r) => !q || [r.label, r.text, r.origin_brain, r.source_agent, r.promotion?.chain].some((s) => s && s.toLowerCase().includes(q)));
    const changed = shown.filter((r) => r.witness_superseded);
    const flagged = shown.filter((r) => ctx.flags.get(r.slug)?.flag);
    return [
      changed.length ? [h('h2', { text: `Witness changed since promotion (${changed.length})` }),
        h('p', { class: 'muted', text: 'These medulla copies say what their project claim said when promoted; the project has since written a new version.' }),
        claimList(changed, ctx)] : null,
      flagged.length ? h('p', { class: 'warnline', text: `${flagged.length} claim${flagged.length === 1 ? '' : 's'} arrived by an agent not expected to promote (etiquette is audited, not enforced): see the flags below and the Audit view.` }) : null,
      h('h2', { text: `Doctrine (${shown.length}${shown.length !== total ? ` of ${total}` : ''})` }),
      shown.length ? claimList(shown, ctx) : h('p', { class: 'empty', text: rows.length ? 'Nothing matches the filter.' : 'The medulla holds no claim yet.' }),
    ];
  };
  await load(list, async () => { await fetchAll(); return draw(); });
  filter.addEventListener('input', () => replace(list, draw()));
  listen(list, (batch) => { if (touches(batch, 'medulla')) load(list, async () => { await fetchAll(); return draw(); }); });
}
