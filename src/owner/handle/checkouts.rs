//! The owner's handle on a brain's checkouts (SPEC §3): what a request learned of its
//! repository, recorded as acts, and another project separated out of a brain.

use brains::Claim;

use super::OwnerHandle;
use crate::brain::BrainMsg;
use crate::error::Result;
use crate::owner::OwnerMsg;
use crate::roster::Manifest;
use crate::store_id::StoreId;

impl OwnerHandle {
    /// Separate another project out of brain `from` (`brains split`): the versions of
    /// the labels that project wrote (`moved`, every version each) go into `into`, one
    /// `merge` act a label there; each one's live version in `from` is retired with
    /// `reason` (kept in history); and the project's checkouts (`paths`) are `into`'s.
    pub async fn separate(
        &self,
        from: &Manifest,
        into: &Manifest,
        moved: Vec<Vec<Claim>>,
        (paths, key): (Vec<String>, String),
        reason: &str,
        actor: &str,
    ) -> Result<brains::store::Merged> {
        let live: Vec<String> = moved
            .iter()
            .filter_map(|v| v.last())
            .filter(|c| c.state == brains::ClaimState::Authored)
            .map(|c| c.slug.clone())
            .collect();
        let done = if moved.is_empty() {
            brains::store::Merged::default()
        } else {
            let (actor, name) = (actor.to_string(), from.root.clone());
            self.ask(&StoreId::brain(&into.fingerprint), |reply| {
                BrainMsg::Merge {
                    incoming: moved,
                    actor,
                    from: name,
                    reply,
                }
            })
            .await?
        };
        let source = StoreId::brain(&from.fingerprint);
        for slug in live {
            self.retire(&source, &slug, actor, reason).await?;
        }
        let (f, i) = (from.fingerprint.clone(), into.fingerprint.clone());
        self.call_owner(|reply| OwnerMsg::Separated {
            from: f,
            into: i,
            paths,
            key,
            reply,
        })
        .await??;
        Ok(done)
    }

    /// Record what a request learned about a brain's repository; a checkout new to the
    /// brain, and a checkout's identity recorded anew, are acts in its log, by `actor`.
    /// Replies whether the checkout was new.
    pub async fn record_learned(
        &self,
        learned: crate::owner::repository::Learned,
        actor: &str,
    ) -> Result<bool> {
        let (fp, checkout, key, moved) = (
            learned.fp.clone(),
            learned.checkout.clone(),
            learned.repo.as_ref().map(|r| r.key.clone()),
            learned.moved.clone(),
        );
        let recorded = self
            .call_owner(|reply| OwnerMsg::Learn { learned, reply })
            .await??;
        let store = StoreId::brain(&fp);
        let note = |kind: brains::ActKind, path: String, note: String| {
            self.ask(&store, move |reply| BrainMsg::NoteCheckout {
                kind,
                path,
                actor: actor.to_string(),
                note: Some(note),
                reply,
            })
        };
        if let (true, Some(path)) = (recorded.new_checkout, checkout) {
            let key = match key.or_else(|| self.registry.manifest(&fp)?.repo.map(|r| r.key)) {
                Some(k) => format!("a checkout of {k}"),
                None => "a checkout of the brain's repository".to_string(),
            };
            note(brains::ActKind::Checkout, path, key).await?;
        }
        if let (true, Some(mv)) = (recorded.moved, moved) {
            let path = match mv.checkout {
                Some(p) => p,
                None => self
                    .registry
                    .manifest(&fp)
                    .map(|m| m.root)
                    .unwrap_or_default(),
            };
            let text = format!(
                "its project is now {} (was {}): the checkout keeps its brain",
                mv.key, mv.from
            );
            note(brains::ActKind::Identity, path, text).await?;
        }
        for (path, key) in recorded.foreign {
            let text = format!(
                "another project's checkout ({key}), served before projects sharing history were told apart: never routed here by its path again; `medulla doctor` names the command that gives it a brain of its own"
            );
            note(brains::ActKind::Identity, path, text).await?;
        }
        Ok(recorded.new_checkout)
    }
}
