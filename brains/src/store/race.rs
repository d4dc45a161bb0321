//! Racing acts on a shared store (issue 51): a verdict or a retirement that reaches the
//! team's log after another member superseded the version it meant. It is never
//! dropped: it lands on the version meant (in history) and on the live version as a
//! [`Race`] naming the member and the version, and a recorded act says so. Both mirrors
//! reach the same marks: the owner that receives the act marks on apply; the owner that
//! made it (its act still waiting for its echo, so later in the log) marks when the
//! supersession arrives.
//!
//! What the outbox's pending table holds for an act, so the second case can be seen:
//! a version id for a write (as before), `<act>\t<version>` for a verdict or a leave.

use std::collections::{HashMap, HashSet};

use redb::{ReadableTable, Table};

use super::{decode, encode};
use crate::claim::{Claim, Race, Verdict};
use crate::error::StoreError;

/// An own act waiting for its echo, as the pending table records it.
pub(super) enum Pending {
    /// A version written here.
    Write(String),
    /// A verdict or a leave on `version`.
    Act { act: String, version: String },
    /// Anything else (a race announced).
    Other,
}

impl Pending {
    /// What the pending table holds for it.
    pub(super) fn mark(&self) -> String {
        match self {
            Pending::Write(v) => v.clone(),
            Pending::Act { act, version } => format!("{act}\t{version}"),
            Pending::Other => String::new(),
        }
    }

    /// A pending table's value read back (`None`: an older store's empty mark).
    pub(super) fn parse(s: &str) -> Option<Pending> {
        match s.split_once('\t') {
            Some((act, version)) => Some(Pending::Act {
                act: act.to_string(),
                version: version.to_string(),
            }),
            None if s.is_empty() => None,
            None => Some(Pending::Write(s.to_string())),
        }
    }
}

/// The act a verdict is, as a race names it: `learn wrong`.
pub(super) fn learn_act(v: Verdict) -> String {
    format!("learn {}", v.as_str())
}

/// Mark `race` on the version it meant, in history (a verdict also counts on that
/// version's trust there); whether that version was found.
pub(super) fn mark_meant(
    hist: &mut Table<(&'static str, u64), &'static [u8]>,
    slug: &str,
    race: &Race,
    verdict: Option<Verdict>,
) -> Result<bool, StoreError> {
    let mut found: Option<(u64, Claim)> = None;
    for row in hist.range((slug, 0u64)..=(slug, u64::MAX))? {
        let (k, v) = row?;
        let c = decode(v.value())?;
        if c.version_id() == race.version {
            found = Some((k.value().1, c));
            break;
        }
    }
    let Some((n, mut c)) = found else {
        return Ok(false);
    };
    if !c.races.contains(race) {
        if let Some(v) = verdict {
            c.trust.record(v);
        }
        c.races.push(race.clone());
        hist.insert((slug, n), encode(&c).as_slice())?;
    }
    Ok(true)
}

/// Add `race` to a claim (the live version) once.
pub(super) fn mark_on(c: &mut Claim, race: &Race) -> bool {
    if c.races.contains(race) {
        return false;
    }
    c.races.push(race.clone());
    true
}

/// What this owner's acts still waiting for their echo say about arriving ones: the
/// versions written here (later in the log than anything arriving now), and per version,
/// the verdicts and leaves made here on it (they race an arriving supersession of it).
pub(super) type Waiting = (HashSet<String>, HashMap<String, Vec<String>>);

/// Read [`Waiting`] from the pending table.
pub(super) fn waiting(
    pending: &impl ReadableTable<&'static str, &'static str>,
) -> Result<Waiting, StoreError> {
    let (mut writes, mut acts) = (HashSet::new(), HashMap::<String, Vec<String>>::new());
    for row in pending.iter()? {
        let (_, v) = row?;
        match Pending::parse(v.value()) {
            Some(Pending::Write(v)) => {
                writes.insert(v);
            }
            Some(Pending::Act { act, version }) => acts.entry(version).or_default().push(act),
            Some(Pending::Other) | None => {}
        }
    }
    Ok((writes, acts))
}
