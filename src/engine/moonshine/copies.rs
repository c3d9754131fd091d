//! The copies of one loaded Moonshine model: the one that hears a chunk on all the engine's
//! threads, and those that hear a file's chunks side by side, on a share of the threads each.
//! ONNX Runtime's sessions are not shared between threads, so each call at once needs a copy of
//! its own; side copies are made when a file first needs them, and their packed int8 weights are
//! the first copy's (one container for all). There are never more side copies than calls at
//! once: a file's chunks go out `workers` at a time, and the transcription queue lets one file
//! at a time use the engine.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use ort::environment::Environment;
use ort::session::builder::PrepackedWeights;

use super::catalog::MoonshineModel;
use super::lock;
use super::model::Model;
use crate::engine::EngineError;

pub(super) struct Copies {
    environment: &'static Environment,
    folder: PathBuf,
    shape: &'static MoonshineModel,
    /// The engine's threads, and those of each side copy.
    threads: usize,
    side_threads: usize,
    prepacked: PrepackedWeights,
    whole: Mutex<Model>,
    /// Side copies not in use.
    idle: Mutex<Vec<Model>>,
}

impl Copies {
    /// Loads the copy that uses every thread; `workers`: the calls that may run at once (side
    /// copies get `threads / workers` threads each).
    pub fn load(
        environment: &'static Environment,
        folder: &Path,
        shape: &'static MoonshineModel,
        threads: usize,
        workers: usize,
    ) -> Result<Copies, EngineError> {
        let prepacked = PrepackedWeights::new();
        let whole = Model::load(environment, folder, shape, threads, &prepacked)?;
        Ok(Copies {
            environment,
            folder: folder.to_path_buf(),
            shape,
            threads,
            side_threads: (threads / workers.max(1)).max(1),
            prepacked,
            whole: Mutex::new(whole),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The model's id.
    pub fn id(&self) -> &'static str {
        self.shape.spec.id
    }

    /// `hear` on a copy: the whole one for a call alone (`calls` 1), else an idle side copy, made
    /// if none is idle.
    pub fn with_copy<T>(
        &self,
        calls: usize,
        hear: impl FnOnce(&mut Model) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        if calls <= 1 || self.side_threads == self.threads {
            let mut whole: MutexGuard<'_, Model> = lock(&self.whole);
            return hear(&mut whole);
        }
        let taken = lock(&self.idle).pop();
        let mut copy = match taken {
            Some(copy) => copy,
            None => {
                let made = Model::load(
                    self.environment,
                    &self.folder,
                    self.shape,
                    self.side_threads,
                    &self.prepacked,
                )?;
                tracing::debug!(
                    "{}: a copy on {} thread(s) for chunks side by side",
                    self.id(),
                    self.side_threads
                );
                made
            }
        };
        let result = hear(&mut copy);
        lock(&self.idle).push(copy);
        result
    }
}
