//! The mailbox as the service sees it: `report` (append to the spool, then file it),
//! `inbox_sweep`, one box's letters, and `doctor`.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::route::find_brain;
use super::{RouteInput, Service};
use crate::error::{OwnerError, Result};
use crate::mailbox::{self, letter, MailboxMsg, PassReport};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    /// The letter: a JSON object with the usual fields ts, agent, class, kind, repo, brain,
    /// tool, what, expected, snippet, answers[]. `ts` and `agent` are filled in when absent.
    pub letter: serde_json::Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepArgs {}

fn roots(svc: &Service) -> Vec<PathBuf> {
    svc.owner
        .registry
        .all_manifests()
        .into_iter()
        .map(|m| PathBuf::from(m.root))
        .collect()
}

/// Run a distribution pass now and wait for it.
pub async fn distribute_now(svc: &Service) -> Result<PassReport> {
    let mb = svc
        .owner
        .registry
        .mailbox
        .read()
        .expect("registry lock")
        .clone()
        .ok_or_else(|| OwnerError::Unreachable {
            actor: "mailbox".into(),
            detail: "the distributor is not running; letters wait safely in the spool".into(),
        })?;
    crate::owner::call_actor(&mb, "mailbox", svc.owner.config.call_timeout, |r| {
        MailboxMsg::Distribute(Some(r))
    })
    .await?
    .map_err(OwnerError::Internal)
}

/// Largest letter accepted into the spool, in bytes (as one JSON line).
pub const MAX_LETTER_BYTES: usize = 64 * 1024;

pub async fn report(svc: &Service, a: ReportArgs, input: &RouteInput) -> Result<Value> {
    let mut body = Value::Object(a.letter);
    letter::validate(&body).map_err(OwnerError::BadInput)?;
    let len = body.to_string().len();
    if len > MAX_LETTER_BYTES {
        return Err(OwnerError::TooLong {
            what: "a letter",
            len,
            max: MAX_LETTER_BYTES,
        });
    }
    if body.get("ts").is_none() {
        body["ts"] = json!(svc.now_ms());
    }
    if body.get("agent").is_none() {
        if let Some(agent) = &input.agent {
            body["agent"] = json!(agent);
        }
    }
    let home = svc.owner.config.home.clone();
    let b = body.clone();
    let line = tokio::task::spawn_blocking(move || mailbox::append_to_spool(&home, &b))
        .await
        .map_err(|e| OwnerError::Internal(e.to_string()))?
        .map_err(|e| OwnerError::Internal(format!("cannot append to the spool: {e}")))?;
    let id = letter::letter_id(line.as_bytes());
    // Filing is best-effort here: the letter is safe in the spool either way.
    // The watcher may have filed it already; either way the view knows where it went.
    let filed = match distribute_now(svc).await {
        Ok(_) => svc
            .owner
            .registry
            .mailbox_view
            .destinations
            .read()
            .expect("mailbox view lock")
            .get(&id)
            .cloned()
            .unwrap_or(json!({ "to": "spool" })),
        Err(e) => json!({ "to": "spool", "note": e.to_string() }),
    };
    Ok(json!({ "id": id, "appended": true, "filed": filed }))
}

pub async fn sweep(svc: &Service) -> Result<Value> {
    let home = svc.owner.config.home.clone();
    let roots = roots(svc);
    tokio::task::spawn_blocking(move || mailbox::sweep(&home, &roots))
        .await
        .map_err(|e| OwnerError::Internal(e.to_string()))
}

/// `GET /api/mailbox?brain=<root>|medulla`: a project's box for a caller routed to it
/// or the founder; the medulla's box for anyone.
pub async fn show_box(svc: &Service, brain: &str, input: &RouteInput) -> Result<Value> {
    let home = svc.owner.config.home.clone();
    let (served, box_file) = if brain == "medulla" {
        ("medulla".to_string(), home.join(mailbox::MEDULLA_BOX))
    } else {
        let m = find_brain(&svc.owner.registry, brain).ok_or_else(|| OwnerError::UnknownBrain {
            name: brain.to_string(),
        })?;
        svc.authorize_brain(&svc.route(input)?, input, &m, "read the mailbox of")?;
        (
            m.root.clone(),
            mailbox::box_path(std::path::Path::new(&m.root)),
        )
    };
    let bf = box_file.clone();
    let (letters, counts) = tokio::task::spawn_blocking(move || mailbox::read_box(&home, &bf))
        .await
        .map_err(|e| OwnerError::Internal(e.to_string()))?
        .map_err(|e| OwnerError::Internal(format!("cannot read {}: {e}", box_file.display())))?;
    Ok(json!({ "served_brain": served, "box": box_file, "letters": letters, "counts": counts }))
}

/// ISO year and week of a letter's `ts` (ms, or an ISO 8601 date-time string).
pub fn iso_week(ts: &Value) -> Option<String> {
    let days = match ts {
        Value::Number(n) => n.as_i64()?.div_euclid(86_400_000),
        Value::String(s) => {
            let d = s.get(..10)?;
            let mut it = d.split('-').map(|p| p.parse::<i64>());
            let (y, m, dd) = (it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?);
            // Days from civil (the inverse of render::date).
            let y2 = if m <= 2 { y - 1 } else { y };
            let era = y2.div_euclid(400);
            let yoe = y2 - era * 400;
            let mp = (m + 9) % 12;
            let doy = (153 * mp + 2) / 5 + dd - 1;
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
            era * 146_097 + doe - 719_468
        }
        _ => return None,
    };
    // 1970-01-01 was a Thursday; ISO weeks start on Monday and belong to the year of their Thursday.
    let weekday = (days + 3).rem_euclid(7); // 0 = Monday
    let thursday = days - weekday + 3;
    let year: i64 = super::render::date(thursday * 86_400_000)[..4]
        .parse()
        .ok()?;
    let jan1 = {
        let y2 = year - 1;
        let era = y2.div_euclid(400);
        let yoe = y2 - era * 400;
        let doy = (153 * 10 + 2) / 5; // March-based day of year of Jan 1
        era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    };
    Some(format!("{year}-W{:02}", (thursday - jan1) / 7 + 1))
}

pub async fn doctor(svc: &Service) -> Result<Value> {
    let swept = sweep(svc).await?;
    let mut weeks: std::collections::BTreeMap<String, Value> = Default::default();
    for l in swept["letters"].as_array().into_iter().flatten() {
        if l["class"] != "memory_misdelivery" {
            continue;
        }
        let week = iso_week(&l["ts"]).unwrap_or_else(|| "unknown".into());
        let kind = l["kind"].as_str().unwrap_or("unknown").to_string();
        let e = weeks.entry(week).or_insert_with(|| json!({}));
        e[&kind] = json!(e[&kind].as_u64().unwrap_or(0) + 1);
    }
    let inst = svc.instances().await?;
    let rows = inst["instances"].as_array().cloned().unwrap_or_default();
    let live_claims: u64 = rows
        .iter()
        .filter_map(|r| r["claims"].as_u64())
        .sum::<u64>()
        + inst["medulla"]["claims"].as_u64().unwrap_or(0);
    let beats: u64 = rows
        .iter()
        .filter_map(|r| r["memory_beats_served"].as_u64())
        .sum();
    let mut broken = Vec::new();
    for r in &rows {
        if let Some(p) = r["problem"].as_str() {
            broken.push(json!({ "brain": r["fingerprint"], "problem": p }));
        }
        if r["warm"] == true {
            if let Some(fp) = r["fingerprint"].as_str() {
                if let Ok(Some(why)) = svc
                    .owner
                    .ask(Some(fp), crate::brain::BrainMsg::CheckIndex)
                    .await
                {
                    broken.push(json!({ "brain": r["root"], "problem": format!("vector index out of step: {why}") }));
                }
            }
        }
        if let Some(root) = r["root"].as_str() {
            let dir = std::path::Path::new(root).join(".medulla");
            let probe = if dir.exists() {
                dir.clone()
            } else {
                std::path::PathBuf::from(root)
            };
            if std::fs::metadata(&probe)
                .map(|m| m.permissions().readonly())
                .unwrap_or(true)
            {
                broken.push(json!({ "brain": root, "problem": format!("box not writable: {}", dir.display()) }));
            }
        }
    }
    let medulla = inst["medulla"]["claims"].as_u64().unwrap_or(0);
    Ok(json!({
        "caption": "owner-wide counts unless a row names its brain",
        "misdelivery_by_week": weeks,
        "live_claims_all_stores": live_claims,
        "memory_beats_served_since_start": beats,
        "letters": {
            "pending_distribution": swept["pending_distribution"],
            "refused_at_floor": swept["refused_at_floor"],
            "spool_garbage_lines": swept["spool_garbage_lines"],
            "unreachable_boxes": swept["unreachable"],
        },
        "medulla": { "live": medulla, "soft_cap": crate::audit::SOFT_CAP, "warn_from": crate::audit::WARN_FROM },
        "brains": { "on_disk": rows.len(), "warm": rows.iter().filter(|r| r["warm"] == true).count() },
        "broken": broken,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_weeks_follow_the_thursday_rule() {
        assert_eq!(
            iso_week(&json!("2026-07-05T10:00:00Z")).as_deref(),
            Some("2026-W27")
        );
        assert_eq!(iso_week(&json!("2021-01-03")).as_deref(), Some("2020-W53"));
        assert_eq!(iso_week(&json!("2024-12-30")).as_deref(), Some("2025-W01"));
        assert_eq!(iso_week(&json!(0)).as_deref(), Some("1970-W01"));
        assert_eq!(iso_week(&json!("garbage")), None);
    }
}
