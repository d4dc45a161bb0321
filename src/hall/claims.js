// A claim as the Hall shows it: badges, text, provenance, history, and the founder's buttons on it.

import { h, append, replace } from './dom.js';
import { fmtAge, fmtDate, time, short, versionRef, badge } from './format.js';
import { load } from './shell.js';
import { call } from './api.js';
import { promoteDialog, gradeDialog, retireDialog } from './actions.js';

export function claimList(rows, ctx) {
  return h('ul', { class: 'claims' }, rows.map((r) => claimItem(r, ctx)));
}

/** One claim: its badges, text, provenance, and what the founder may do with it. */
function claimItem(r, ctx) {
  const medulla = r.tier === 'medulla';
  const ws = r.witness_superseded;
  const li = h('li', { class: `claim${ws ? ' witness-changed' : ''}`, 'data-slug': r.slug, 'data-tier': r.tier });
  const text = h('p', { class: 'text clamped', text: r.text });
  const hist = h('div', { class: 'history' });
  const trust = typeof r.trust === 'number' ? r.trust.toFixed(2) : '—';
  const tc = r.trust_counts;
  const histBtn = h('button', { type: 'button', 'aria-expanded': 'false', text: 'History' });
  const toggleHistory = async () => {
    const open = histBtn.getAttribute('aria-expanded') !== 'true';
    histBtn.setAttribute('aria-expanded', String(open));
    if (!open) { replace(hist); ctx.open.delete(r.slug); return; }
    ctx.open.add(r.slug);
    await load(hist, () => historyOf(r, ctx));
  };
  histBtn.addEventListener('click', toggleHistory);
  const actions = [histBtn];
  if (r.text && r.text.length > 280) {
    actions.push(h('button', { type: 'button', text: 'Full text', onclick: (e) => { text.classList.toggle('clamped'); e.target.textContent = text.classList.contains('clamped') ? 'Full text' : 'Less'; } }));
  }
  if (!medulla && ctx.brain && r.state !== 'outdated') {
    actions.push(h('button', { type: 'button', class: 'act-promote', text: r.promoted_to ? 'Promote again…' : 'Promote…', onclick: () => promoteDialog(r, ctx) }));
    actions.push(h('button', { type: 'button', class: 'act-grade', text: 'Grade…', onclick: () => gradeDialog(r, ctx, false) }));
    actions.push(h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(r, ctx) }));
  }
  if (medulla && r.state !== 'outdated') {
    actions.push(h('button', { type: 'button', class: 'act-grade', text: 'Grade…', onclick: () => gradeDialog(r, ctx, false) }));
    actions.push(h('button', { type: 'button', class: 'act-demote danger', text: 'Demote…', onclick: () => gradeDialog(r, ctx, true) }));
    actions.push(h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(r, ctx) }));
  }
  const flag = ctx.flags?.get(r.slug);
  append(li, [
    h('div', { class: 'line1' },
      h('h3', { class: 'label', text: r.label }),
      h('code', { class: 'slug', text: r.slug }),
      medulla ? badge('medulla', 'promoted') : null,
      r.tier === 'team' ? badge('team', 'promoted', 'the team medulla') : null,
      r.member ? badge(`by ${r.member}`, '', 'the team member who wrote it (the database says so)') : null,
      r.conflict ? badge('conflict', 'flag', `${r.conflict.member} superseded the same version at the same time: ${r.conflict.with}`) : null,
      r.races?.length ? badge('conflict', 'flag', r.races.map((x) => `${x.member} (${x.act}) meant ${x.version}`).join('; ')) : null,
      r.strength ? badge(r.strength, `strength-${r.strength}`, 'strength') : null,
      badge(`trust ${trust}`, '', tc ? `graded correct ${tc.correct}, partial ${tc.partial}, wrong ${tc.wrong}` : 'trust'),
      typeof r.version === 'number' ? badge(`v${r.version}`, '', 'version') : null,
      badge(`${fmtAge(r.age_ms)} old`, '', r.created ? `created ${fmtDate(r.created)}` : ''),
      r.stale ? badge('stale', 'stale', 'older than 30 days') : null,
      r.aged_out ? badge('aged out', 'aged', 'older than the 720 h half-life') : null,
      r.promoted_to ? badge('promoted', 'promoted', r.promoted_to) : null,
      typeof r.score === 'number' ? badge(`score ${r.score.toFixed(3)}`, '', 'recall score') : null,
      flag?.flag ? badge(flag.flag.replaceAll('_', ' '), 'flag', `${flag.kind} by ${flag.agent}: not expected of this agent (audited, not enforced)`) : null,
      r.state === 'outdated' ? badge('outdated', 'aged') : null),
    text,
    h('p', { class: 'meta' },
      'by ', h('code', { text: r.source_agent || 'unknown' }),
      ' · ', time(r.created),
      ' · origin ', h('code', { text: r.origin_brain || 'unknown' }),
      r.evidence?.length ? [' · evidence ', r.evidence.join(', ')] : null,
      r.supersedes ? [' · supersedes ', versionRef(r.supersedes)] : null,
      r.content_hash ? [' · ', h('code', { title: r.content_hash, text: short(r.content_hash) })] : null),
    r.promotion ? chainLine(r.promotion) : null,
    ws ? witnessLine(ws) : null,
    r.evidence_changed?.length ? evidenceLine(r.evidence_changed) : null,
    r.outdated_reason ? h('p', { class: 'warnline', text: `outdated: ${r.outdated_reason}` }) : null,
    r.conflict ? h('p', { class: 'warnline conflict', text: `conflict: ${r.conflict.member} wrote ${r.conflict.with} over the same version at the same time; this one is ${r.state === 'outdated' ? 'kept in history' : 'live (later in the team\'s log)'}. Read both, then write the version that holds.` }) : null,
    ...(r.races || []).map((x) => h('p', { class: 'warnline conflict', text: `conflict: ${x.member} (${x.act}) meant ${x.version}, which another member superseded meanwhile; the act is kept here, not applied to the live version. Read both, then grade or retire the version that holds.` })),
    h('div', { class: 'actions' }, actions),
    hist,
  ]);
  if (ctx.open.has(r.slug)) queueMicrotask(() => { histBtn.setAttribute('aria-expanded', 'true'); load(hist, () => historyOf(r, ctx)); });
  return li;
}

/** A medulla copy's origin chain: learned in, by, when; promoted by, when, why. */
function chainLine(p) {
  if (p.chain) return h('p', { class: 'chain', text: p.chain });
  return h('p', { class: 'chain' },
    `learned in ${p.origin_claim || 'unknown'} by ${p.origin_agent || 'unknown'} (${p.origin_created ? fmtDate(p.origin_created) : 'unknown'}); `,
    `promoted by ${p.promoted_by || 'unknown'} (${fmtDate(p.promoted_at)}): ${p.promotion_reason || 'no reason recorded'}`);
}

/** Anchored evidence files that changed or disappeared since the claim was written. */
function evidenceLine(changes) {
  return h('p', { class: 'warnline evidence-changed' },
    h('strong', { text: 'Verify before relying on it: its evidence changed' }), ' — ',
    changes.map((c, i) => [
      i ? ', ' : '',
      h('code', { text: c.lines ? `${c.path}:${c.lines[0]}-${c.lines[1]}` : c.path }),
      ` ${c.state} since `, time(c.since),
    ]),
    '. Grade it correct to re-anchor it, or retire it.');
}

function witnessLine(ws) {
  return h('p', { class: 'warnline witness' },
    h('strong', { text: 'Its project witness changed since the promotion' }),
    ws.at ? [' on ', time(ws.at)] : null,
    ws.by_version != null ? ` (now v${ws.by_version})` : null,
    ws.new_text ? [': “', ws.new_text, '”'] : null,
    '. This copy still says what was promoted: promote again to follow it, or demote.');
}

async function historyOf(r, ctx) {
  const args = { slug: r.slug };
  if (r.tier === 'medulla') args.tier = 'medulla';
  const v = await call('history', args, r.tier === 'medulla' ? undefined : ctx.brain?.fp);
  const versions = v.versions || [];
  return [
    h('h4', { class: 'muted', text: `${versions.length} version${versions.length === 1 ? '' : 's'}, oldest first` }),
    h('ol', { class: 'timeline', 'aria-label': `history of ${r.label}` }, versions.map((x) => h('li', { class: x.state, 'data-version': x.version },
      h('div', { class: 'when' },
        `v${x.version} · `, time(x.created), ' · by ', h('code', { text: x.source_agent }), ` · ${x.strength} · `,
        x.state === 'outdated' ? badge('outdated', 'aged') : badge('live', 'good')),
      h('p', { class: 'vtext', text: x.text }),
      x.outdated_reason ? h('p', { class: 'meta', text: `why outdated: ${x.outdated_reason}` }) : null,
      x.promoted_to ? h('p', { class: 'meta' }, 'promoted to ', versionRef(x.promoted_to)) : null,
      x.supersedes ? h('p', { class: 'meta' }, 'supersedes ', versionRef(x.supersedes)) : null,
      x.promotion ? chainLine(x.promotion) : null))),
  ];
}
