// The doctor page (#/doctor): misdelivery per week, letters, broken stores, near-duplicates, imported memory, nudges, backup.

import { h, svg } from './dom.js';
import { fmtNum, plural } from './format.js';
import { listen, load, title, focusTitle } from './shell.js';
import { get } from './api.js';
import { retireDialog, backupDialog } from './actions.js';
import { teamPanel } from './team.js';

const KINDS = ['leak', 'false_absence', 'wrong_store_write', 'misattribution', 'vanished'];

export async function viewDoctor(root) {
  const body = h('div', {});
  root.append(
    ...title('Doctor'),
    h('p', { class: 'lede', text: 'Whether memory is being delivered well: confirmed misdelivery per ISO week, letters that did not arrive, and anything broken. Owner-wide numbers.' }),
    body);
  const draw = async () => {
    const d = await get('/api/doctor');
    const L = d.letters || {};
    return [
      h('h2', { text: 'Misdelivery per week' }),
      misdeliveryChart(d.misdelivery_by_week || {}),
      h('div', { class: 'grid2' },
        h('section', { class: 'panel' }, h('h2', { text: 'Letters' }), h('dl', { class: 'kv' },
          h('dt', { text: 'pending distribution' }), h('dd', { 'data-stat': 'pending', text: fmtNum(L.pending_distribution) }),
          h('dt', { text: 'refused at the floor' }), h('dd', { 'data-stat': 'refused', text: fmtNum(L.refused_at_floor) }),
          h('dt', { text: 'spool lines not letters' }), h('dd', { text: fmtNum(L.spool_garbage_lines) }),
          h('dt', { text: 'unreachable boxes' }), h('dd', {}, (L.unreachable_boxes || []).length
            ? h('ul', {}, L.unreachable_boxes.map((u) => h('li', {}, h('code', { text: u.box }), ': ', u.why)))
            : 'none'))),
        h('section', { class: 'panel' }, h('h2', { text: 'Broken' }),
          (d.broken || []).length
            ? h('ul', { class: 'broken' }, d.broken.map((b) => h('li', { class: 'error' }, h('code', { text: b.brain }), ': ', b.problem)))
            : h('p', { class: 'good', text: 'Nothing broken: every store readable, every index in step, every box writable.' })),
        h('section', { class: 'panel' }, h('h2', { text: 'Owner-wide' }), h('dl', { class: 'kv' },
          h('dt', { text: 'live claims, all stores' }), h('dd', { text: fmtNum(d.live_claims_all_stores) }),
          h('dt', { text: 'beats served since start' }), h('dd', { text: fmtNum(d.memory_beats_served_since_start) }),
          h('dt', { text: 'brains on disk / warm' }), h('dd', { text: `${fmtNum(d.brains?.on_disk)} / ${fmtNum(d.brains?.warm)}` }),
          h('dt', { text: 'medulla' }), h('dd', { text: `${fmtNum(d.medulla?.live)} live, soft cap ${d.medulla?.soft_cap}, warn from ${d.medulla?.warn_from}` })),
        d.caption ? h('p', { class: 'muted', text: d.caption }) : null)),
      h('div', { class: 'grid2' },
        h('section', { class: 'panel', id: 'near-duplicates' }, h('h2', { text: 'Near-duplicates' }),
          (d.near_duplicates || []).length
            ? d.near_duplicates.map((n) => h('div', {},
              h('h3', {}, h('code', { text: n.store })),
              n.clusters.map((c) => h('ul', { class: 'cluster' }, c.map((m) => h('li', { 'data-slug': m.slug },
                h('strong', { text: m.label }), ' ', h('code', { text: m.slug }), ' ',
                h('button', { type: 'button', class: 'act-retire danger', text: 'Retire…', onclick: () => retireDialog(
                  { slug: m.slug, label: m.label, text: 'says nearly what the others of its cluster say', tier: n.store === 'medulla' ? 'medulla' : 'project' },
                  { brain: n.store === 'medulla' ? null : { fp: n.store, root: n.store } }) }))))),
              n.capped ? h('p', { class: 'muted', text: 'only the most recent claims were checked' }) : null))
            : h('p', { class: 'good', text: 'No live claims say the same thing under two labels.' })),
        h('section', { class: 'panel', id: 'evidence-drift' }, h('h2', { text: 'Evidence drift' }),
          (d.evidence_drift || []).length
            ? h('ul', {}, d.evidence_drift.map((x) => h('li', { class: x.drifted ? 'warn' : '' },
              h('code', { text: x.brain }), `: ${plural(x.drifted, 'claim')} of ${fmtNum(x.anchored)} anchored changed since written`)))
            : h('p', { class: 'muted', text: 'No claim carries anchored evidence yet.' }))),
      (d.imported || []).length
        ? h('section', { class: 'panel', id: 'imported' }, h('h2', { text: 'Imported memory' }),
          h('p', { class: 'muted', text: 'Per store: live claims that came from another tool (medulla import --from), by the tool.' }),
          h('ul', {}, d.imported.map((x) => h('li', { 'data-store': x.store },
            h('code', { text: x.store }), ': ',
            Object.entries(x.by_source).map(([source, n]) => `${plural(n, 'claim')} from ${source}`).join(', ')))))
        : null,
      (d.nudges || []).length
        ? h('section', { class: 'panel', id: 'nudges' }, h('h2', { text: 'Does the nudge pay?' }),
          h('p', { class: 'muted', text: 'Per brain: agent sessions the client hooks saw, those asked once at the end of real work to debrief, and the claims written within 30 minutes of an ask.' }),
          h('ul', {}, d.nudges.map((n) => h('li', {},
            h('code', { text: n.brain }),
            `: ${plural(n.sessions_seen, 'session')}, ${fmtNum(n.sessions_nudged)} asked, ${plural(n.claims_after_nudge, 'claim')} written after an ask`))))
        : null,
      (d.hints || []).length
        ? h('section', { class: 'panel', id: 'hints' }, h('h2', { text: 'Do the hints pay, and what do they cost?' }),
          h('p', { class: 'muted', text: 'Per brain: prompts and files the client hooks asked about, the claims they added to an agent\'s context, how many of those the agent then named in its own words, and how many it graded, superseded or retired within the session; then the client sessions memory was added to, the tokens a session received on average (estimated, digest and hints together), and the hints a session\'s budget cut to a count (hint_session_tokens in config.toml).' }),
          h('ul', {}, d.hints.map((x) => h('li', { 'data-brain': x.brain },
            h('code', { text: x.brain }),
            `: ${plural(x.prompts, 'prompt')}, ${plural(x.files, 'file')}, ${plural(x.claims_added, 'claim')} added, ${fmtNum(x.claims_cited)} then cited, ${fmtNum(x.claims_used)} acted on; `,
            h('span', { class: 'cost', text: `${plural(x.sessions || 0, 'session')}, ~${fmtNum(x.tokens_per_session || 0)} tokens a session (digests ${fmtNum(x.digest_tokens || 0)}, hints ${fmtNum(x.hint_tokens || 0)}), ${fmtNum(x.capped || 0)} capped` })))))
        : null,
      (d.same_repository || []).length
        ? h('section', { class: 'panel', id: 'same-repository' }, h('h2', { text: 'Brains of one repository' }),
          h('p', { class: 'muted', text: 'These brains belong to one repository: they split before a brain belonged to its repository (or one is a checkout\'s own). Join them with the command shown; every version is kept.' }),
          h('ul', {}, d.same_repository.map((g) => h('li', { 'data-repository': g.repository },
            h('strong', { text: g.label }), ' ', h('code', { text: g.repository }),
            h('ul', {}, g.brains.map((b) => h('li', {}, h('code', { text: b })))),
            h('code', { class: 'fix', text: g.fix })))))
        : null,
      d.team ? teamPanel(d.team) : null,
      h('section', { class: 'panel', id: 'backup' }, h('h2', { text: 'Backup' }),
        h('p', { class: 'muted', text: 'A consistent copy of every store, the spool and the config, written while serving into $MEDULLA_HOME/backups/. Restore one with `medulla restore` (the owner stopped).' }),
        h('button', { type: 'button', class: 'act-backup', text: 'Back up now', onclick: () => backupDialog() })),
    ];
  };
  await load(body, draw);
  focusTitle(root);
  listen(body, () => load(body, draw));
}


/** A stacked bar per ISO week, one colour per kind, drawn as inline SVG; a table too. */
function misdeliveryChart(byWeek) {
  const weeks = Object.keys(byWeek).sort().slice(-26);
  if (!weeks.length) return h('p', { class: 'empty', text: 'No misdelivery reported. (Agents report one as a letter of class memory_misdelivery.)' });
  const kinds = [...KINDS];
  for (const w of weeks) for (const k of Object.keys(byWeek[w])) if (!kinds.includes(k)) kinds.push(k);
  const totals = weeks.map((w) => Object.values(byWeek[w]).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...totals);
  const W = Math.max(360, weeks.length * 46 + 50), H = 200, left = 34, bottom = 30, top = 10;
  const plotH = H - bottom - top;
  const bw = Math.min(30, (W - left - 10) / weeks.length - 10);
  const ticks = [...new Set([0, Math.ceil(max / 2), max])];
  const y = (v) => top + plotH - (v / max) * plotH;
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': `misdelivery events per week: ${weeks.map((w, i) => `${w} ${totals[i]}`).join(', ')}` },
    ticks.map((t) => [
      svg('line', { class: 'axis', x1: left, x2: W - 5, y1: y(t), y2: y(t) }),
      svg('text', { x: left - 6, y: y(t) + 4, 'text-anchor': 'end' }, String(t)),
    ]),
    weeks.map((w, i) => {
      const x = left + 8 + i * ((W - left - 10) / weeks.length);
      let acc = 0;
      return [
        kinds.filter((k) => byWeek[w][k]).map((k) => {
          const v = byWeek[w][k];
          const r = svg('rect', { class: `k-${KINDS.includes(k) ? k : 'unknown'}`, x, width: bw, y: y(acc + v), height: Math.max(1, y(acc) - y(acc + v)) }, svg('title', {}, `${w}: ${v} ${k.replaceAll('_', ' ')}`));
          acc += v;
          return r;
        }),
        svg('text', { x: x + bw / 2, y: H - bottom + 14, 'text-anchor': 'middle' }, w.replace(/^\d{4}-/, '')),
        svg('text', { x: x + bw / 2, y: y(acc) - 3, 'text-anchor': 'middle' }, String(acc)),
      ];
    }));
  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' }, kinds.map((k) => h('li', {},
    svg('svg', { width: 12, height: 12, viewBox: '0 0 12 12' }, svg('rect', { class: `k-${KINDS.includes(k) ? k : 'unknown'}`, width: 12, height: 12, rx: 2 })), ' ', k.replaceAll('_', ' '))));
  const table = h('details', {}, h('summary', { text: 'the numbers' }), h('div', { class: 'tablewrap' }, h('table', {},
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'week' }), kinds.map((k) => h('th', { scope: 'col', class: 'num', text: k.replaceAll('_', ' ') })), h('th', { scope: 'col', class: 'num', text: 'total' }))),
    h('tbody', {}, weeks.map((w, i) => h('tr', {}, h('th', { scope: 'row', text: w }), kinds.map((k) => h('td', { class: 'num', text: byWeek[w][k] || 0 })), h('td', { class: 'num', text: totals[i] })))))));
  return h('figure', { class: 'chart', 'data-weeks': weeks.length }, chart, legend, table);
}
