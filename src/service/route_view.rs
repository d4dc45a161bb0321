//! `GET /api/route`: which brain serves a caller and how (its repository, its
//! checkouts): what `medulla status` says of the working directory.

use crate::roster::RepoBinding;

/// `GET /api/route`: which brain serves the caller, and how (what `medulla status` says of
/// the working directory).
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RouteView {
    pub caller_root: Option<String>,
    /// The brain that serves it, if any.
    pub served_brain: Option<String>,
    /// `binding`, `caller_root` (a registered root contains it), `repository` (through
    /// its repository: a worktree, a moved checkout, a clone), `sticky` or `unrouted`.
    pub via: super::route::Via,
    /// The served brain's root as it stands in the caller's checkout.
    pub checkout: Option<String>,
    /// The served brain's repository and every checkout it serves, its root first.
    pub repository: Option<RepoBinding>,
    pub checkouts: Vec<super::verbs::instances::CheckoutRow>,
    pub reception: Option<super::route::Reception>,
    /// Claims agents wrote in the served brain that no person has looked at
    /// (`medulla review`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreviewed: Option<u64>,
}

impl RouteView {
    /// The view, with the served brain's unreviewed count.
    pub async fn of_served(r: super::route::Routed, svc: &super::Service) -> RouteView {
        let mut v = RouteView::of(r, &svc.owner.registry);
        if let Some(m) = v
            .served_brain
            .as_deref()
            .and_then(|root| super::route::find_brain(&svc.owner.registry, root))
        {
            v.unreviewed = Some(super::verbs::instances::unreviewed(svc, &m).await);
        }
        v
    }

    pub fn of(r: super::route::Routed, reg: &crate::owner::Registry) -> RouteView {
        // What the request recorded is in the manifest now.
        let brain = r
            .brain
            .as_ref()
            .map(|b| reg.manifest(&b.fingerprint).unwrap_or_else(|| b.clone()));
        RouteView {
            caller_root: r.caller_root.map(|p| p.to_string_lossy().into_owned()),
            served_brain: brain.as_ref().map(|b| b.root.clone()),
            via: r.via,
            checkout: r.checkout.map(|p| p.to_string_lossy().into_owned()),
            repository: brain.as_ref().and_then(|b| b.repo.clone()),
            checkouts: brain
                .as_ref()
                .map(super::verbs::instances::checkout_rows)
                .unwrap_or_default(),
            reception: r.reception,
            unreviewed: None,
        }
    }
}
