//! `medulla serve`: load the model (or say why not), start the owner, bind loopback,
//! serve until SIGINT/SIGTERM, then shut down in order.

use std::sync::Arc;

use anyhow::Context;
use brains::{Clock, Embedder, Retrieval, StoreOptions, SystemClock};
use serde_json::json;

use crate::config::Config;
use crate::owner::OwnerHandle;
use crate::service::life::{Keeper, Life};
use crate::service::Service;

/// Find and load the embedding model; `Err(note)` says why recall is lexical-only. A
/// transformer the user chose (`medulla model use`) that cannot load now leaves the
/// owner on the static model, and the log says why.
pub fn load_embedder(cfg: &Config) -> Result<Arc<dyn Embedder>, String> {
    if cfg.no_model {
        return Err("the model is disabled (no_model)".into());
    }
    match crate::model::Choice::read(&cfg.home) {
        Ok(None) | Ok(Some(crate::model::Choice::Static)) => {}
        Ok(Some(choice)) => match choice.load(cfg.model_dir.as_deref()) {
            Ok(Some(e)) => return Ok(e),
            Ok(None) => {}
            Err(e) => tracing::error!(
                model = %choice.describe(),
                error = %e,
                "the chosen model did not load; serving with the static model (`medulla model status`)"
            ),
        },
        Err(e) => tracing::error!(error = %e, "serving with the static model"),
    }
    let dir = match &cfg.model_dir {
        Some(dir) => Some(dir.clone()).filter(|d| crate::model::is_complete(d)),
        None => crate::model::locate(),
    };
    let Some(dir) = dir else {
        return Err("no embedding model found: run `medulla model fetch` (or set MEDULLA_MODEL_DIR), then restart the owner (`medulla stop`, `medulla serve`); until then recall is lexical-only".into());
    };
    crate::model::load(&dir)
        .map_err(|e| format!("the embedding model did not load ({e}); recall is lexical-only"))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// An owner already serving this home (`launch::running`, a blocking look of at most 2 s).
async fn running_owner(cfg: &Config) -> Option<(u64, String)> {
    let home = cfg.home.clone();
    tokio::task::spawn_blocking(move || crate::launch::running(&home))
        .await
        .ok()
        .flatten()
}

/// Run the owner until a shutdown signal (or `medulla stop`).
pub async fn run(cfg: Config, keeper: Keeper) -> anyhow::Result<()> {
    cfg.check_listen()?;
    std::fs::create_dir_all(&cfg.home)
        .with_context(|| format!("cannot create {}", cfg.home.display()))?;
    // Held until the owner is gone: exactly one owner per home, whoever started it.
    let lock = crate::launch::hold_owner_lock(&cfg.home)
        .with_context(|| format!("cannot open the owner lock in {}", cfg.home.display()))?;
    let Some(_lock) = lock else {
        let running = running_owner(&cfg)
            .await
            .map(|(pid, url)| format!(" (pid {pid}, {url})"))
            .unwrap_or_default();
        anyhow::bail!(
            "an owner already runs on {}{running}: use it, or stop it with `medulla stop` (`medulla restart` to replace it)",
            cfg.home.display()
        );
    };
    if let Some((pid, url)) = running_owner(&cfg).await {
        anyhow::bail!(
            "an owner already runs on {} (pid {pid}, {url}): use it, or stop it with `medulla stop`",
            cfg.home.display()
        );
    }
    let cfg = Arc::new(cfg);
    let model = {
        let c = cfg.clone();
        tokio::task::spawn_blocking(move || load_embedder(&c)).await?
    };
    let (embedder, model_note) = match model {
        Ok(e) => (Some(e), None),
        // Said once, on stdout with the address, where a person starting it looks.
        Err(note) => (None, Some(note)),
    };
    let retrieval = if embedder.is_some() {
        Retrieval::Hybrid
    } else {
        Retrieval::Lexical
    };
    let clock: Arc<dyn Clock> = match &cfg.clock_file {
        Some(f) => {
            tracing::warn!(file = %f.display(), "the clock reads from a file (a test-only setting)");
            Arc::new(crate::clock::FileClock(f.clone()))
        }
        None => Arc::new(SystemClock),
    };
    let opts = StoreOptions {
        embedder,
        clock: clock.clone(),
        aging: cfg.aging,
        progress: None,
        ..Default::default()
    };
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {}: is another medulla owner running? (`medulla status`)",
                cfg.listen
            )
        })?;
    let addr = listener.local_addr()?;
    let founder_token = crate::founder::ensure(&cfg.home)
        .with_context(|| format!("cannot create the founder token in {}", cfg.home.display()))?;
    // Before the address is announced: a client that reads it finds the token there.
    crate::client_token::ensure(&cfg.home)
        .with_context(|| format!("cannot create the client token in {}", cfg.home.display()))?;
    let (owner, join) = OwnerHandle::start(cfg.clone(), opts).await.map_err(|e| {
        // The store lock is the last line: another process holds this home's stores.
        if format!("{e:#}").contains("held by another process") {
            anyhow::anyhow!(
                "another process holds the stores in {}: stop the other medulla owner (`medulla stop`), or point MEDULLA_HOME elsewhere",
                cfg.home.display()
            )
        } else {
            e
        }
    })?;
    let svc = Service {
        owner: owner.clone(),
        retrieval,
        model_note: model_note.clone(),
        clock,
        founder_token: Arc::new(founder_token),
        anchors: Default::default(),
        backups: Default::default(),
        life: Arc::new(Life::begin(keeper)),
        refusals: Default::default(),
        hints: Arc::new(crate::service::hints::ledger::Ledger::new(
            cfg.hints.session_idle,
        )),
    };

    let url = format!("http://{addr}");
    let owner_file = cfg.owner_file();
    std::fs::write(
        &owner_file,
        serde_json::to_vec_pretty(&json!({ "url": url, "pid": std::process::id() }))?,
    )
    .with_context(|| format!("cannot write {}", owner_file.display()))?;
    // The first stdout line is the contract tests and scripts read the address from.
    println!(
        "medulla listening on {url} (retrieval: {})",
        retrieval.as_str()
    );
    if let Some(note) = &model_note {
        println!("medulla: {note}");
    }
    // The owner's log (`medulla logs`) says the same, with the build and the pid.
    tracing::info!(
        home = %cfg.home.display(),
        pid = std::process::id(),
        version = crate::service::life::VERSION,
        keeper = ?keeper,
        "medulla listening on {url} (retrieval: {})",
        retrieval.as_str()
    );

    let scheduled = tokio::spawn(crate::service::backup::schedule(svc.clone()));
    let tending = tokio::spawn(crate::service::tending::schedule(svc.clone()));
    crate::http::serve(listener, svc, shutdown_signal()).await?;
    scheduled.abort();
    tending.abort();

    tracing::info!("shutting down: closing stores");
    owner.actor.stop(Some("shutdown".into()));
    let _ = join.await;
    let _ = std::fs::remove_file(&owner_file);
    Ok(())
}
