// A brain's page (#/brain/<fingerprint>): its claims (paged or searched), act log and mailbox.

import { h } from './dom.js';
import { fmtNum, plural, time, base, short, badge } from './format.js';
import { S, listen, load, href, title, focusTitle, touches } from './shell.js';
import { get, call, instances, brainByFp } from './api.js';
import { claimList } from './claims.js';
import { fateCounts, letterList } from './mailbox.js';
import { checkoutList } from './roster.js';

export async function viewBrain(root, [fp, tab = 'claims'], query) {
  await instances();
  let b = brainByFp(fp);
  if (!b) {
    // Bootstrapped since the roster was read?
    await instances(true);
    b = brainByFp(fp);
  }
  if (!b) {
    root.append(...title('Unknown brain'), h('p', { class: 'error', text: `No brain with fingerprint ${fp} is on disk.` }), h('a', { href: '#/', text: 'Back to the roster' }));
    return;
  }
  const tabs = [['claims', 'Claims'], ['acts', 'Act log'], ['mailbox', 'Mailbox']];
  const body = h('div', {});
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/', text: 'Roster' }), ' / ', base(b.root)),
    ...title(base(b.root)),
    h('p', { class: 'lede' }, h('code', { text: b.root }), ' · ', h('code', { text: b.fingerprint }), ' · ',
      b.warm ? badge('warm', 'warm') : badge('dormant'), ' ',
      `${plural(b.claims, 'live claim')}, ${fmtNum(b.history_versions)} in history, ${plural(b.acts, 'act')}, ${plural(b.mailbox_open_count, 'open letter')}`),
    checkoutList(b),
    h('nav', { class: 'tabs', 'aria-label': 'Brain sections' },
      tabs.map(([t, label]) => h('a', { href: href('brain', fp, t), 'aria-current': t === tab ? 'page' : false, text: label }))),
    body);
  const brain = { fp: b.fingerprint, root: b.root };
  if (tab === 'acts') await actsPanel(body, b.fingerprint, b.root);
  else if (tab === 'mailbox') await boxPanel(body, b.fingerprint, b.root);
  else await claimsPanel(body, brain, query);
  focusTitle(root);
}

/** Search and paged claims of one brain. */
async function claimsPanel(el, brain, query) {
  const q = h('input', { type: 'search', id: 'seek-query', name: 'query', placeholder: 'what are you looking for?', value: query.get('q') || '', maxlength: 4096 });
  const tier = h('select', { id: 'seek-tier', name: 'tier' },
    h('option', { value: 'project', text: 'this brain' }),
    h('option', { value: '', text: 'this brain + the medulla (the default beat)' }),
    h('option', { value: 'medulla', text: 'the medulla only' }),
    h('option', { value: 'all-brains', text: 'every brain (explicit cross-project pull)' }));
  tier.value = query.get('tier') ?? 'project';
  const scope = h('input', { type: 'text', id: 'seek-scope', name: 'scope', placeholder: 'slug or label prefix', value: query.get('scope') || '' });
  const limit = h('input', { type: 'number', id: 'seek-limit', name: 'limit', min: 1, max: 200, value: query.get('limit') || 20 });
  const form = h('form', { class: 'toolbar', role: 'search', 'aria-label': 'Search this brain' },
    h('label', {}, 'Search', q),
    h('label', {}, 'Tier', tier),
    h('label', {}, 'Scope', scope),
    h('label', {}, 'Limit', limit),
    h('button', { type: 'submit', class: 'primary', text: 'Seek' }),
    h('button', { type: 'button', id: 'seek-clear', text: 'Clear', onclick: () => { location.hash = href('brain', brain.fp, 'claims'); } }));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = new URLSearchParams({ q: q.value, tier: tier.value, scope: scope.value, limit: limit.value });
    location.hash = `${href('brain', brain.fp, 'claims')}?${p}`;
  });
  const list = h('div', {});
  el.append(form, list);
  const searching = query.has('q');
  const ctx = { brain, open: new Set() };
  if (searching) {
    const run = async () => {
      const args = { query: q.value, limit: Number(limit.value) || 20 };
      if (tier.value) args.tier = tier.value;
      if (scope.value.trim()) args.scope = scope.value.trim();
      const v = await call('seek', args, brain.fp);
      const out = [h('p', { class: 'muted' }, `tier ${v.tier || args.tier || 'project+medulla'} · retrieval ${v.retrieval || '—'}`, v.reception ? ` · ${v.reception.message}` : '')];
      if (v.groups) {
        out[0].append(` · ${v.brains_searched} brains searched`);
        for (const g of v.groups) {
          // Each group's rows live in that group's store: act on them there.
          const other = (S.instances?.instances || []).find((x) => x.root === g.origin_brain);
          const gctx = { ...ctx, brain: other ? { fp: other.fingerprint, root: other.root } : null };
          out.push(h('h2', { text: g.origin_brain === 'medulla' ? 'the medulla' : g.origin_brain }));
          out.push(claimList(g.results, gctx));
        }
        for (const f of v.failed || []) out.push(h('p', { class: 'error', text: `${f.brain}: ${f.error?.message}` }));
        if (!v.groups.length) out.push(h('p', { class: 'empty', text: 'Nothing matched in any brain.' }));
      } else {
        out.push(v.results?.length ? claimList(v.results, ctx) : h('p', { class: 'empty', text: 'Nothing matched (memory may still exist: try fewer words, or clear the search to page through every claim).' }));
      }
      return out;
    };
    await load(list, run);
    listen(list, (batch) => { if (touches(batch, brain.root)) load(list, run); });
    return;
  }
  let offset = Number(query.get('offset')) || 0;
  const size = 50;
  const page = async () => {
    const v = await get('/api/claims', { brain: brain.fp, offset, limit: size });
    const end = offset + v.claims.length;
    const pager = () => h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: offset === 0, text: '← Newer', onclick: () => { offset = Math.max(0, offset - size); load(list, page); } }),
      h('span', { 'data-total': v.total, text: v.total ? `claims ${fmtNum(offset + 1)}–${fmtNum(end)} of ${fmtNum(v.total)}, newest first` : 'no live claims' }),
      h('button', { type: 'button', disabled: v.next_offset == null, text: 'Older →', onclick: () => { offset = v.next_offset; load(list, page); } }));
    return [pager(), v.claims.length ? claimList(v.claims, ctx) : h('p', { class: 'empty', text: 'This brain holds no live claim yet.' }), v.claims.length > 10 ? pager() : null];
  };
  await load(list, page);
  listen(list, (batch) => { if (touches(batch, brain.root)) load(list, page); });
}

/** A brain's (or the medulla's) act log, paged by `next_before`. */
export async function actsPanel(el, brainName, label) {
  const stack = [];
  let before;
  const page = async () => {
    const v = await get('/api/acts', { brain: brainName, before, limit: 50 });
    const pager = h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: !stack.length, text: '← Newer', onclick: () => { before = stack.pop(); load(el, page); } }),
      h('span', { text: v.acts.length ? `acts ${v.acts[0].seq} down to ${v.acts[v.acts.length - 1].seq}, newest first` : 'no acts' }),
      h('button', { type: 'button', disabled: v.next_before == null, text: 'Older →', onclick: () => { stack.push(before); before = v.next_before; load(el, page); } }));
    return [pager, h('div', { class: 'tablewrap' }, h('table', { class: 'acts' },
      h('caption', { text: `The act log of ${label}: every change of state, who, when, content hashes before and after` }),
      h('thead', {}, h('tr', {}, ['seq', 'when', 'kind', 'subject', 'actor', 'before → after', 'note'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, v.acts.map((a) => h('tr', { 'data-seq': a.seq },
        h('td', { class: 'num', text: a.seq }),
        h('td', {}, time(a.at)),
        h('td', {}, badge(a.kind)),
        h('td', {}, h('code', { text: a.subject })),
        h('td', {}, h('code', { text: a.actor })),
        h('td', {}, h('code', { class: 'mono', title: `${a.before_hash || 'none'} → ${a.after_hash || 'none'}`, text: `${short(a.before_hash)} → ${short(a.after_hash)}` })),
        h('td', { text: a.note || '' })))))),
    ];
  };
  await load(el, page);
  listen(el, (batch) => { if (!stack.length && touches(batch, brainName === 'medulla' ? 'medulla' : label)) load(el, page); });
}

export async function boxPanel(el, brainName, label) {
  const draw = async () => {
    const v = await get('/api/mailbox', { brain: brainName });
    return [
      fateCounts(v.counts),
      h('p', { class: 'muted' }, 'box ', h('code', { text: v.box })),
      v.letters.length ? letterList(v.letters) : h('p', { class: 'empty', text: `No letter in the box of ${label}.` }),
    ];
  };
  await load(el, draw);
  listen(el, (batch) => { if (batch.some((e) => e.kind === 'mail')) load(el, draw); });
}
