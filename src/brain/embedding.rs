//! A brain actor's background embedding: under a model that defers (a transformer), the
//! claims written without a vector are embedded off the actor, a batch at a time, and
//! their vectors taken back as [`BrainMsg::Attach`].

use ractor::ActorRef;

use super::{BrainMsg, BrainState};

/// Claims the background embeds in one go (one model call, one transaction).
const EMBED_BATCH: usize = 64;
/// The wait before trying again after the background could not embed.
pub(super) const EMBED_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl BrainState {
    /// Whether the store's model defers its writes' vectors to the background.
    pub(super) fn defers(&self) -> bool {
        self.opts.embedder.as_ref().is_some_and(|e| e.deferred())
    }

    /// Start embedding the next batch of claims that have no vector, unless a batch is
    /// under way or the model does not defer. The vectors come back as
    /// [`BrainMsg::Attach`]; the actor goes on serving meanwhile.
    pub(super) async fn embed_pending(&mut self, me: &ActorRef<BrainMsg>) {
        if self.embedding || !self.defers() {
            return;
        }
        let got = self
            .store
            .read(|s| {
                let e = s.embedder().filter(|e| e.deferred()).cloned();
                match e {
                    Some(e) => Ok(Some((e, s.unembedded(EMBED_BATCH)?))),
                    None => Ok(None),
                }
            })
            .await;
        let Ok(Some(Some((model, todo)))) = got else {
            return;
        };
        if todo.is_empty() {
            return;
        }
        self.embedding = true;
        let me = me.clone();
        tokio::spawn(async move {
            let id = model.id().to_string();
            let texts: Vec<String> = todo.iter().map(|t| t.text.clone()).collect();
            let made = tokio::task::spawn_blocking(move || {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                model.embed(&refs)
            })
            .await;
            let msg = match made {
                Ok(Ok(vs)) if vs.len() == todo.len() => {
                    BrainMsg::Attach(id, todo.into_iter().zip(vs).collect())
                }
                Ok(Ok(vs)) => {
                    tracing::warn!(model = %id, asked = todo.len(), got = vs.len(), "the model returned the wrong number of vectors; retrying later");
                    BrainMsg::EmbedFailed
                }
                Ok(Err(e)) => {
                    tracing::warn!(model = %id, error = %e, "background embedding failed; retrying later");
                    BrainMsg::EmbedFailed
                }
                Err(e) => {
                    tracing::warn!(model = %id, error = %e, "background embedding panicked; retrying later");
                    BrainMsg::EmbedFailed
                }
            };
            let _ = me.send_message(msg);
        });
    }
}
