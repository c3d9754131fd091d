//! Which models stay in memory. Every engine call marks its model in use; a sweep, every
//! [`SWEEP_INTERVAL`] in a running server, unloads the models nobody used for a while: the
//! selected one after the `unloadModelAfterIdleMinutes` preference (0, the default, keeps it),
//! any other after [`OTHER_MODEL_IDLE`], and at once a model whose weights are gone. A model in
//! use is never unloaded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::engine::Engine;
use crate::store::{Store, StoreError, preferences};

/// How often a running server looks for models to unload.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(30);

/// How long a model other than the selected one (loaded for a request that named it) stays in
/// memory unused.
pub const OTHER_MODEL_IDLE: Duration = Duration::from_secs(5 * 60);

/// A model of an engine: `(engine id, model id)`.
type ModelKey = (&'static str, &'static str);

/// The use of each model since the server started.
#[derive(Default)]
pub struct Residency {
    uses: Mutex<HashMap<ModelKey, Use>>,
}

#[derive(Debug, Clone, Copy)]
struct Use {
    /// Engine calls running on it now.
    running: usize,
    /// When the last call ended (or the first began).
    last: Instant,
}

/// A model in use until dropped.
pub struct InUse {
    residency: Arc<Residency>,
    key: ModelKey,
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut uses = self.residency.uses();
        if let Some(model) = uses.get_mut(&self.key) {
            model.running = model.running.saturating_sub(1);
            model.last = Instant::now();
        }
    }
}

/// A model the sweep unloaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unloaded {
    pub engine: &'static str,
    pub model: &'static str,
    pub idle: Duration,
}

impl Residency {
    /// Marks `model` of `engine` in use until the answer is dropped. Waits while a sweep is
    /// unloading, so a call never finds its model half gone.
    pub fn begin(self: &Arc<Self>, engine: &'static str, model: &'static str) -> InUse {
        let key = (engine, model);
        self.uses()
            .entry(key)
            .and_modify(|model| model.running += 1)
            .or_insert(Use {
                running: 1,
                last: Instant::now(),
            });
        InUse {
            residency: self.clone(),
            key,
        }
    }

    /// Unloads, from `engines`, every loaded model idle for longer than it may be at `now`
    /// (preferences read from `store`); answers what it unloaded. Blocks (engines free memory).
    pub fn sweep(
        &self,
        engines: &[Arc<dyn Engine>],
        store: &Store,
        now: Instant,
    ) -> Result<Vec<Unloaded>, StoreError> {
        let selected = (
            store.pref_text(&preferences::SELECTED_ENGINE)?,
            store.pref_text(&preferences::SELECTED_MODEL)?,
        );
        let minutes = store.pref_int(&preferences::UNLOAD_MODEL_AFTER_IDLE_MINUTES)?;
        let selected_limit =
            (minutes > 0).then(|| Duration::from_secs(minutes.unsigned_abs() * 60));
        let mut unloaded = Vec::new();
        // Held through the unloading: a call that begins meanwhile waits, then loads anew.
        let mut uses = self.uses();
        for engine in engines {
            for offer in engine.models().into_iter().filter(|offer| offer.loaded) {
                let key = (engine.id(), offer.spec.id);
                let model = uses.entry(key).or_insert(Use {
                    running: 0,
                    last: now,
                });
                if model.running > 0 {
                    continue;
                }
                let idle = now.saturating_duration_since(model.last);
                let is_selected = selected.0 == key.0 && selected.1 == key.1;
                let limit = if !offer.downloaded {
                    Some(Duration::ZERO)
                } else if is_selected {
                    selected_limit
                } else {
                    Some(OTHER_MODEL_IDLE)
                };
                if limit.is_some_and(|limit| idle >= limit) && engine.unload(offer.spec.id) {
                    uses.remove(&key);
                    unloaded.push(Unloaded {
                        engine: key.0,
                        model: key.1,
                        idle,
                    });
                }
            }
        }
        Ok(unloaded)
    }

    fn uses(&self) -> MutexGuard<'_, HashMap<ModelKey, Use>> {
        self.uses.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::engine::models::whisper_model;
    use crate::engine::{EngineError, EngineOutput, EngineRequest, ModelOffer};
    use crate::store::PrefValue;

    /// An engine whose models are loaded and downloaded as the test says.
    struct Models {
        loaded: Mutex<BTreeSet<&'static str>>,
        downloaded: Vec<&'static str>,
    }

    impl Engine for Models {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            let loaded = self.loaded.lock().unwrap();
            ["tiny.en", "base"]
                .into_iter()
                .map(|id| ModelOffer {
                    spec: whisper_model(id).unwrap(),
                    downloaded: self.downloaded.contains(&id),
                    loaded: loaded.contains(id),
                })
                .collect()
        }
        fn transcribe(&self, _: &str, _: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            unreachable!("the sweep never transcribes")
        }
        fn unload(&self, model: &str) -> bool {
            self.loaded.lock().unwrap().remove(model)
        }
    }

    struct Setup {
        _dir: tempfile::TempDir,
        store: Store,
        engine: Arc<Models>,
        engines: Vec<Arc<dyn Engine>>,
        residency: Arc<Residency>,
    }

    /// tiny.en selected; both models downloaded and loaded.
    fn setup() -> Setup {
        let (dir, store) = crate::store::temp_store();
        store
            .set_pref(
                &preferences::SELECTED_ENGINE,
                &PrefValue::Text("whisper".into()),
            )
            .unwrap();
        store
            .set_pref(
                &preferences::SELECTED_MODEL,
                &PrefValue::Text("tiny.en".into()),
            )
            .unwrap();
        let engine = Arc::new(Models {
            loaded: Mutex::new(["tiny.en", "base"].into()),
            downloaded: vec!["tiny.en", "base"],
        });
        Setup {
            _dir: dir,
            store,
            engines: vec![engine.clone()],
            engine,
            residency: Arc::default(),
        }
    }

    impl Setup {
        fn sweep(&self, now: Instant) -> Vec<&'static str> {
            let unloaded = self.residency.sweep(&self.engines, &self.store, now);
            unloaded.unwrap().into_iter().map(|u| u.model).collect()
        }

        fn loaded(&self) -> BTreeSet<&'static str> {
            self.engine.loaded.lock().unwrap().clone()
        }
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn another_model_leaves_after_five_idle_minutes_and_the_selected_one_stays() {
        let setup = setup();
        let used = Instant::now();
        drop(setup.residency.begin("whisper", "tiny.en"));
        drop(setup.residency.begin("whisper", "base"));
        assert!(setup.sweep(used + 4 * MINUTE).is_empty());
        assert_eq!(setup.sweep(used + 6 * MINUTE), ["base"]);
        assert!(setup.sweep(used + 600 * MINUTE).is_empty());
        assert_eq!(setup.loaded(), ["tiny.en"].into());
    }

    #[test]
    fn the_preference_unloads_the_selected_model_too() {
        let setup = setup();
        setup
            .store
            .set_pref(
                &preferences::UNLOAD_MODEL_AFTER_IDLE_MINUTES,
                &PrefValue::Int(10),
            )
            .unwrap();
        let used = Instant::now();
        drop(setup.residency.begin("whisper", "tiny.en"));
        drop(setup.residency.begin("whisper", "base"));
        assert_eq!(setup.sweep(used + 6 * MINUTE), ["base"]);
        assert_eq!(setup.sweep(used + 11 * MINUTE), ["tiny.en"]);
        assert!(setup.loaded().is_empty());
    }

    #[test]
    fn a_model_in_use_stays_and_its_idle_time_starts_when_the_call_ends() {
        let setup = setup();
        let call = setup.residency.begin("whisper", "base");
        let began = Instant::now();
        assert!(setup.sweep(began + 60 * MINUTE).is_empty());
        drop(call);
        let ended = Instant::now();
        assert!(setup.sweep(ended + 4 * MINUTE).is_empty());
        assert_eq!(setup.sweep(ended + 5 * MINUTE), ["base"]);
    }

    #[test]
    fn a_model_seen_loaded_for_the_first_time_counts_its_idle_time_from_then() {
        let setup = setup();
        let first_seen = Instant::now();
        assert!(setup.sweep(first_seen).is_empty());
        assert!(setup.sweep(first_seen + 4 * MINUTE).is_empty());
        assert_eq!(setup.sweep(first_seen + 5 * MINUTE), ["base"]);
    }

    #[test]
    fn a_model_whose_weights_are_gone_leaves_at_once_even_when_selected() {
        let mut setup = setup();
        let engine = Arc::new(Models {
            loaded: Mutex::new(["tiny.en"].into()),
            downloaded: vec![],
        });
        setup.engines = vec![engine.clone()];
        setup.engine = engine;
        drop(setup.residency.begin("whisper", "tiny.en"));
        assert_eq!(setup.sweep(Instant::now()), ["tiny.en"]);
    }
}
