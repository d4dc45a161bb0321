//! From judged pairs to groups: claims that say the same thing joined into clusters in
//! which every two members were judged the same (complete link, so no chain of
//! restatements ever carries two claims that disagree, or merely differ, into one
//! cluster), and the pairs that disagree, both named. What a tending pass answers.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::judge::{unsaid, Difference, Evidence, Judgement};
use super::marks::read;
use crate::strength::Strength;

/// A live claim as a tending answer names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Member {
    pub slug: String,
    pub label: String,
    pub text: String,
    pub strength: Strength,
    /// Birth of its live version, ms since the Unix epoch.
    pub created: i64,
}

/// Two claims (by slug, `a` before `b`) and what the judgement saw in them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct PairEvidence {
    pub a: String,
    pub b: String,
    pub evidence: Evidence,
}

/// Claims that say the same thing: every two of them were judged the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Cluster {
    /// By slug; two or more.
    pub members: Vec<Member>,
    /// The slug that would survive a join: the strongest member, then the most recent,
    /// then the first by slug.
    pub survivor: String,
    /// Every two members, by `(a, b)`.
    pub pairs: Vec<PairEvidence>,
    /// Details another member gives that the survivor's text does not (a number, a
    /// path, a name it adds): what a join would leave to history. Empty when the
    /// survivor says all of it.
    pub dropped: Vec<Dropped>,
}

impl Cluster {
    /// What the other members say that `survivor` does not, were it to survive the
    /// join in place of [`Cluster::survivor`] (a caller's choice: a person's word over
    /// an agent's).
    pub fn dropped_under(&self, survivor: &str) -> Vec<Dropped> {
        dropped_under(self.members.iter(), survivor)
    }
}

/// What each member other than `survivor` says that its text does not.
fn dropped_under<'a>(
    members: impl Iterator<Item = &'a Member> + Clone,
    survivor: &str,
) -> Vec<Dropped> {
    let kept = members
        .clone()
        .find(|m| m.slug == survivor)
        .map(|m| read(&m.label, &m.text))
        .unwrap_or_default();
    members
        .filter(|m| m.slug != survivor)
        .filter_map(|m| {
            let values = unsaid(&read(&m.label, &m.text), &kept);
            (!values.is_empty()).then(|| Dropped {
                slug: m.slug.clone(),
                values,
            })
        })
        .collect()
}

/// What one member of a cluster says that its survivor does not.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Dropped {
    pub slug: String,
    /// As that member writes them.
    pub values: Vec<String>,
}

/// Two live claims alike but for what differs: never joined. Named by slug and label
/// (a pass can find many; their texts are the store's to read).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Disagreement {
    /// The first slug, before `b`.
    pub a: String,
    pub a_label: String,
    pub b: String,
    pub b_label: String,
    pub evidence: Evidence,
    /// What differs, each with its value in `a` and in `b`.
    pub differences: Vec<Difference>,
}

/// What a tending pass over a store found. Sorted, so two passes over the same claims
/// answer the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Tending {
    /// The calibration the pass judged with (`lexical`, `potion-base-8M`,
    /// `all-MiniLM-L6-v2`).
    pub mode: String,
    /// Live claims gone over.
    pub claims: usize,
    /// Distinct pairs judged.
    pub pairs_judged: usize,
    /// By their first member's slug. A claim in no cluster is left alone.
    pub clusters: Vec<Cluster>,
    /// By `(a, b)`.
    pub disagreements: Vec<Disagreement>,
}

/// Group `members` (sorted by slug; by index) from `judged` pairs (`(i, j)` with
/// `i < j`). A pair two clusters would join that was never judged is judged by `judge`
/// (its two claims were not each other's candidates); what it says is kept with the
/// rest.
pub fn group<E>(
    mode: &str,
    members: &[Member],
    mut judged: BTreeMap<(usize, usize), Judgement>,
    mut judge: impl FnMut(usize, usize) -> Result<Judgement, E>,
) -> Result<Tending, E> {
    // The surest restatements first: a claim joins the cluster it is most alike.
    let mut same: Vec<(usize, usize, f64)> = judged
        .iter()
        .filter(|(_, j)| j.is_same())
        .map(|(&(i, j), v)| (i, j, v.evidence().score))
        .collect();
    same.sort_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    let mut cluster_of: Vec<usize> = (0..members.len()).collect();
    let mut clusters: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, j, _) in same {
        let (ci, cj) = (cluster_of[i], cluster_of[j]);
        if ci == cj {
            continue;
        }
        let side = |c: usize, n: usize| clusters.get(&c).cloned().unwrap_or_else(|| vec![n]);
        let (mi, mj) = (side(ci, i), side(cj, j));
        let mut all_same = true;
        'check: for &x in &mi {
            for &y in &mj {
                let key = (x.min(y), x.max(y));
                let said = match judged.entry(key) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => e.insert(judge(key.0, key.1)?),
                };
                if !said.is_same() {
                    all_same = false;
                    break 'check;
                }
            }
        }
        if !all_same {
            continue;
        }
        let (keep, gone) = if ci < cj { (ci, cj) } else { (cj, ci) };
        let mut joined = mi;
        joined.extend(mj);
        joined.sort_unstable();
        for &n in &joined {
            cluster_of[n] = keep;
        }
        clusters.remove(&gone);
        clusters.insert(keep, joined);
    }
    let slug = |n: usize| members[n].slug.clone();
    let mut out: Vec<Cluster> = clusters
        .into_values()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut pairs = Vec::new();
            for (k, &x) in c.iter().enumerate() {
                for &y in &c[k + 1..] {
                    pairs.push(PairEvidence {
                        a: slug(x),
                        b: slug(y),
                        evidence: *judged[&(x, y)].evidence(),
                    });
                }
            }
            let survivor = c
                .iter()
                .map(|&n| &members[n])
                .max_by(|p, q| {
                    (p.strength, p.created)
                        .cmp(&(q.strength, q.created))
                        .then_with(|| q.slug.cmp(&p.slug))
                })
                .map(|m| m.slug.clone())
                .unwrap_or_default();
            let dropped = dropped_under(c.iter().map(|&n| &members[n]), &survivor);
            Cluster {
                members: c.iter().map(|&n| members[n].clone()).collect(),
                survivor,
                pairs,
                dropped,
            }
        })
        .collect();
    out.sort_by(|x, y| x.members[0].slug.cmp(&y.members[0].slug));
    let disagreements = judged
        .iter()
        .filter_map(|(&(i, j), v)| match v {
            Judgement::Disagree {
                evidence,
                differences,
            } => Some(Disagreement {
                a: members[i].slug.clone(),
                a_label: members[i].label.clone(),
                b: members[j].slug.clone(),
                b_label: members[j].label.clone(),
                evidence: *evidence,
                differences: differences.clone(),
            }),
            _ => None,
        })
        .collect();
    Ok(Tending {
        mode: mode.to_string(),
        claims: members.len(),
        pairs_judged: judged.len(),
        clusters: out,
        disagreements,
    })
}
