//! The Wayland backend: the XDG desktop portal's GlobalShortcuts interface (through ashpd).
//! The stored bindings are registered as the preferred triggers of one portal session; the
//! desktop has the last word on the keys (it may ask the user, or let them change the keys in
//! its settings). A change of the stored bindings closes the session and registers anew. A
//! desktop without the interface, or any failure, ends the backend with the log line that
//! tells the user to bind `verbatim dictation toggle` instead.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use ashpd::desktop::global_shortcuts::{BindShortcutsOptions, GlobalShortcuts, NewShortcut};
use ashpd::desktop::{CreateSessionOptions, Session};
use futures_util::StreamExt;

use super::bindings::{self, Binding, Watch};
use super::{Presses, SharedStatus, Status};
use crate::store::Store;

/// How long the session bus and the portal get to answer a call that needs no user.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// Registering may wait for the user to accept the keys in a desktop dialog.
const BIND_TIMEOUT: Duration = Duration::from_secs(120);

/// Serves the hotkeys through the portal until the server stops or the portal fails.
pub(super) async fn run(store: Arc<Store>, presses: Presses, status: SharedStatus) {
    if let Err(reason) = serve(store, presses, &status).await {
        status.give_up(reason);
    }
}

async fn answer<T>(
    limit: Duration,
    what: &str,
    call: impl Future<Output = ashpd::Result<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(format!("{what}: {err}")),
        Err(_) => Err(format!("{what}: no answer within {} s", limit.as_secs())),
    }
}

async fn serve(store: Arc<Store>, presses: Presses, status: &SharedStatus) -> Result<(), String> {
    let portal = answer(
        ANSWER_TIMEOUT,
        "this Wayland session's desktop portal offers no GlobalShortcuts interface",
        GlobalShortcuts::new(),
    )
    .await?;
    let activated = answer(
        ANSWER_TIMEOUT,
        "cannot listen to the desktop portal",
        portal.receive_activated(),
    )
    .await?;
    let mut activated = pin!(activated);
    let mut watch = Some(Watch::default());
    let mut bound: Vec<Binding> = Vec::new();
    let mut session: Option<Session<GlobalShortcuts>> = None;
    let mut ticks = tokio::time::interval(bindings::POLL);
    status.set(Status {
        backend: Some("portal"),
        detail: "desktop portal GlobalShortcuts; bound: none".into(),
    });
    loop {
        tokio::select! {
            event = activated.next() => {
                let Some(event) = event else {
                    return Err("the desktop portal closed its connection".into());
                };
                if let Some(binding) = bound.iter().find(|b| b.slot.name == event.shortcut_id()) {
                    let _ = presses.send(binding.slot);
                }
            }
            _ = ticks.tick() => {
                let (kept, changed) = changed_bindings(&store, watch.take().unwrap_or_default()).await;
                watch = Some(kept);
                let Some(changed) = changed else { continue };
                if let Some(old) = session.take() {
                    let _ = answer(ANSWER_TIMEOUT, "closing the portal session", old.close()).await;
                }
                bound = changed;
                if !bound.is_empty() {
                    session = Some(register(&portal, &bound).await?);
                }
                let described = bindings::describe(&bound);
                tracing::info!("global hotkeys (desktop portal): {described}");
                status.set(Status {
                    backend: Some("portal"),
                    detail: format!("desktop portal GlobalShortcuts; bound: {described}"),
                });
            }
        }
    }
}

/// The watch back, and the bindings when they changed (the store is read off the runtime).
async fn changed_bindings(store: &Arc<Store>, mut watch: Watch) -> (Watch, Option<Vec<Binding>>) {
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        let changed = watch.changed(&store);
        (watch, changed)
    })
    .await
    .unwrap_or_else(|_| (Watch::default(), None))
}

/// A portal session with `bound` registered, each slot's shortcut as its preferred trigger.
async fn register(
    portal: &GlobalShortcuts,
    bound: &[Binding],
) -> Result<Session<GlobalShortcuts>, String> {
    let session = answer(
        ANSWER_TIMEOUT,
        "cannot open a desktop portal session",
        portal.create_session(CreateSessionOptions::default()),
    )
    .await?;
    let shortcuts: Vec<NewShortcut> = bound
        .iter()
        .map(|b| {
            NewShortcut::new(b.slot.name, b.slot.description)
                .preferred_trigger(b.shortcut.portal_trigger().as_str())
        })
        .collect();
    let request = answer(
        BIND_TIMEOUT,
        "the desktop portal did not register the hotkeys",
        portal.bind_shortcuts(&session, &shortcuts, None, BindShortcutsOptions::default()),
    )
    .await?;
    let response = request
        .response()
        .map_err(|err| format!("the desktop did not accept the hotkeys: {err}"))?;
    for shortcut in response.shortcuts() {
        tracing::info!(
            "desktop portal: {} is triggered by '{}'",
            shortcut.id(),
            shortcut.trigger_description()
        );
    }
    Ok(session)
}
