//! [`Transcriber`]: plans a job (everything that needs no audio, on a blocking thread), then runs
//! it: download wait, the queue, then decoding, voice activity detection and the engine as one
//! stream inside the slot (held to the end even when the request is gone; a gone request stops
//! the decode and the engine), post-processing and the history policy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::queue::Queue;
use super::residency::{Residency, SWEEP_INTERVAL, Unloaded};
use super::resolve::{Engines, Resolved};
use super::{Job, TimedText, TranscribeError, Transcript};
use crate::engine::Engine;
use crate::engine::models::Downloads;
use crate::engine::models::ModelDir;
use crate::store::{Store, StoreError};

/// What a transcription reports while it runs (times in seconds of the audio's timeline).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Progress<'a> {
    /// A chunk's segments as soon as the engine has them, post-processed: settled for good.
    Segments(&'a [TimedText]),
    /// Live audio: speech began at `at` (with the padding kept before it).
    SpeechStarted { at: f64 },
    /// Live audio: the chunk `start..end` is settled (a pause ended it, or, when `goes_on`, it
    /// grew too long and was cut, or closed at a pause too short to end it, while speech goes
    /// on) and goes to the engine; its segments follow.
    Committed { start: f64, end: f64, goes_on: bool },
    /// Live audio: provisional text of the chunk still open, post-processed; the next
    /// provisional text or the chunk's segments replace it.
    Tentative(&'a str),
}

/// Where a transcription's reports go as they come.
pub type ProgressSink = Box<dyn FnMut(Progress<'_>) + Send>;

/// What a [`Transcriber`] is built from.
pub struct TranscriberParts {
    pub engines: Vec<Arc<dyn Engine>>,
    /// Preferences (selection, numbers, download base URL, history), dictionary and history.
    pub store: Arc<Store>,
    /// Where downloaded weights go.
    pub models: ModelDir,
    /// Engine calls at once (each uses every inference thread, so more only adds memory).
    pub slots: usize,
    /// Requests that may wait for a slot before new ones are refused.
    pub max_waiting: usize,
}

/// The one transcription path.
pub struct Transcriber {
    pub(super) engines: Engines,
    pub(super) store: Arc<Store>,
    pub(super) models: ModelDir,
    pub(super) downloads: Downloads,
    pub(super) queue: Arc<Queue>,
    pub(super) residency: Arc<Residency>,
    /// The language the last live transcription on each model settled on (no language given):
    /// the next one's provisional passes start from it rather than detect it.
    pub(super) live_languages: Arc<Mutex<HashMap<&'static str, String>>>,
    /// The desktop session's language ([`super::locale`]): the guess before any live
    /// transcription on a model has settled one.
    pub(super) session_language: Option<String>,
    /// Where prompt actions go.
    pub(super) chat: crate::chat::Provider,
}

impl Transcriber {
    pub fn new(parts: TranscriberParts) -> Transcriber {
        Transcriber {
            engines: Engines(parts.engines),
            store: parts.store,
            models: parts.models,
            downloads: Downloads::default(),
            queue: Arc::new(Queue::new(parts.slots, parts.max_waiting)),
            residency: Arc::default(),
            live_languages: Arc::default(),
            session_language: None,
            chat: crate::chat::Provider::default(),
        }
    }

    /// Prompt actions go to `chat` (sim mode: its built-in provider).
    pub fn with_chat(mut self, chat: crate::chat::Provider) -> Transcriber {
        self.chat = chat;
        self
    }

    /// Where prompt actions go.
    pub fn chat(&self) -> &crate::chat::Provider {
        &self.chat
    }

    /// Live text on a multilingual model with no language given starts from `language` (the
    /// desktop session's, [`super::locale::session_language`]) until a live transcription on
    /// that model settles one; committed text detects the language for itself.
    pub fn with_session_language(mut self, language: Option<String>) -> Transcriber {
        self.session_language = language;
        self
    }

    pub fn engines(&self) -> &[Arc<dyn Engine>] {
        &self.engines.0
    }

    pub(super) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn models(&self) -> &ModelDir {
        &self.models
    }

    pub(super) fn downloads(&self) -> &Downloads {
        &self.downloads
    }

    /// The data folder: where the database is (and what dictation keeps beside it).
    pub fn data_folder(&self) -> std::path::PathBuf {
        self.store
            .path()
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The selection stored in the preferences, if it names an engine of this build (reads the
    /// store: call it off the async workers).
    pub fn selected(&self) -> Result<Option<Resolved>, StoreError> {
        self.engines.selected(&self.store)
    }

    /// Unloads the models idle for longer than they may stay in memory at `now` (see
    /// [`super::residency`]); answers what it unloaded. Reads the store: call it off the async
    /// workers.
    pub fn unload_idle(&self, now: Instant) -> Result<Vec<Unloaded>, StoreError> {
        self.residency.sweep(&self.engines.0, &self.store, now)
    }

    /// Unloads idle models every [`SWEEP_INTERVAL`] for as long as the runtime runs.
    pub fn spawn_idle_unloader(self: &Arc<Self>) {
        let transcriber = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(SWEEP_INTERVAL);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(transcriber) = transcriber.upgrade() else {
                    return;
                };
                let swept =
                    tokio::task::spawn_blocking(move || transcriber.unload_idle(Instant::now()))
                        .await;
                match swept {
                    Ok(Ok(unloaded)) => {
                        for model in unloaded {
                            tracing::info!(
                                "unloaded model {} ({}) after {} s unused",
                                model.model,
                                model.engine,
                                model.idle.as_secs()
                            );
                        }
                    }
                    Ok(Err(err)) => tracing::warn!("looking for idle models failed: {err}"),
                    Err(err) => tracing::warn!("looking for idle models stopped: {err}"),
                }
            }
        });
    }

    /// Whether an engine has the model `id` downloaded (reads the models folder).
    pub fn installed(&self, id: &str) -> bool {
        self.engines()
            .iter()
            .any(|e| e.offer(id).is_some_and(|offer| offer.downloaded))
    }

    /// Whether work that only saves time later may wait for the engine now
    /// ([`Queue::has_room_for_spare_work`]).
    pub fn has_room_for_spare_work(&self) -> bool {
        self.queue.has_room_for_spare_work()
    }

    /// Plans and runs `job`.
    pub async fn run(self: &Arc<Self>, job: Job) -> Result<Transcript, TranscribeError> {
        self.plan(job.options, job.await_download, job.caller)
            .await?
            .run(job.audio)
            .await
    }
}

/// Runs `work` on a blocking thread; `what` names it if the thread dies.
pub(super) async fn blocking<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> Result<T, TranscribeError> + Send + 'static,
) -> Result<T, TranscribeError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| TranscribeError::internal(what, e))?
}

#[cfg(test)]
pub(crate) mod testing {
    //! Engines for the transcription path's tests.

    use std::sync::{Arc, Mutex, mpsc};
    use std::time::{Duration, Instant};

    use crate::engine::models::whisper_model;
    use crate::engine::{Engine, EngineError, EngineOutput, EngineRequest, ModelOffer};

    /// An engine offering fixed models; each transcription waits for one message on the gate.
    pub struct Gate {
        pub id: &'static str,
        pub models: Vec<&'static str>,
        pub release: Mutex<mpsc::Receiver<()>>,
        /// Transcriptions that reached the engine.
        pub entered: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Engine for Gate {
        fn id(&self) -> &'static str {
            self.id
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&self.models)
        }
        fn transcribe(&self, _: &str, _: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            self.entered
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = self.release.lock().unwrap().recv();
            Ok(EngineOutput::default())
        }
    }

    /// An engine that takes `pause` for each call and notes in `log` the prompt it was given;
    /// it hears `at_once` chunks at once.
    pub struct Paced {
        pub log: Arc<Mutex<Vec<String>>>,
        pub pause: std::time::Duration,
        pub at_once: usize,
    }

    impl Engine for Paced {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en"])
        }
        fn chunks_at_once(&self) -> usize {
            self.at_once
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            std::thread::sleep(self.pause);
            let prompt = r.initial_prompt.clone().unwrap_or_default();
            self.log.lock().unwrap().push(prompt);
            Ok(EngineOutput::default())
        }
    }

    /// An engine that notes each call in `log` ("engine <samples>", with " provisional" for a
    /// provisional pass) and hears one segment covering each chunk, named after the call.
    pub struct Recorder {
        pub log: Arc<Mutex<Vec<String>>>,
    }

    impl Recorder {
        /// The samples a call noted in the log heard.
        pub fn samples_in(noted: &str) -> usize {
            let noted = noted.trim_start_matches("engine ");
            noted.split(' ').next().unwrap().parse().unwrap()
        }
    }

    impl Engine for Recorder {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en"])
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            let mut log = self.log.lock().unwrap();
            let provisional = if r.provisional { " provisional" } else { "" };
            log.push(format!("engine {}{provisional}", r.samples.len()));
            let text = format!("call{}", log.len());
            Ok(EngineOutput {
                text: text.clone(),
                language: Some("en".into()),
                segments: vec![crate::engine::Segment::new(
                    0.0,
                    r.samples.len() as f64 / 16_000.0,
                    text,
                )],
                processing_time: None,
            })
        }
    }

    /// An engine that takes `pause` for each call, notes each in `log` as Recorder does
    /// ("engine <samples>[ provisional] <language asked, or auto>") and hears no words in less
    /// than `words_from` samples, one segment ("words") covering the chunk in more. Asked to
    /// detect the language, it hears German.
    pub struct Slow {
        pub log: Arc<Mutex<Vec<String>>>,
        pub pause: Duration,
        pub words_from: usize,
    }

    impl Engine for Slow {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en", "base"])
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            std::thread::sleep(self.pause);
            let provisional = if r.provisional { " provisional" } else { "" };
            let asked = match &r.language {
                crate::engine::LanguageChoice::Exact(code) => code.as_str(),
                _ => "auto",
            };
            let noted = format!("engine {}{provisional} {asked}", r.samples.len());
            self.log.lock().unwrap().push(noted);
            let language = Some(if asked == "auto" { "de" } else { asked }.to_string());
            if r.samples.len() < self.words_from {
                return Ok(EngineOutput {
                    language,
                    ..EngineOutput::default()
                });
            }
            let seconds = r.samples.len() as f64 / 16_000.0;
            Ok(EngineOutput {
                text: "words".into(),
                language,
                segments: vec![crate::engine::Segment::new(0.0, seconds, "words")],
                processing_time: None,
            })
        }
    }

    /// An engine that hears two chunks at once, one per call: the first call, when told of
    /// another beside it, waits (30 s at most) until another chunk is heard, so that only
    /// calls side by side hear the second chunk first. Notes each call in `log` as it ends
    /// ("<text>: <chunks> chunk, <calls_at_once> at once") and hears one segment covering the
    /// chunk, named after the second it starts at (`s<second>`, read from the faint staircase
    /// of [`staircase`]). With `fails`, the chunks from 40 s on fail. The text of the call that
    /// waited is kept in `waited` (the first call to come, which need not be the first chunk's).
    #[derive(Default)]
    pub struct Beside {
        pub log: Arc<Mutex<Vec<String>>>,
        pub calls: std::sync::atomic::AtomicUsize,
        pub heard: std::sync::atomic::AtomicUsize,
        pub fails: bool,
        pub waited: Mutex<Option<String>>,
    }

    /// `seconds` of faint sound, one step louder each second (the level tells the second).
    pub fn staircase(seconds: usize) -> Vec<f32> {
        (0..16_000 * seconds)
            .map(|i| 0.01 + (i / 16_000) as f32 * 1e-4)
            .collect()
    }

    impl Engine for Beside {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en"])
        }
        fn chunks_at_once(&self) -> usize {
            2
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            use std::sync::atomic::Ordering::SeqCst;
            let second = ((r.samples[0] - 0.01) * 1e4).round();
            if self.calls.fetch_add(1, SeqCst) == 0 && r.calls_at_once > 1 {
                *self.waited.lock().unwrap() = Some(format!("s{second}"));
                // Long enough for a loaded machine; a path that never hears a second chunk
                // meanwhile still ends, and fails the tests' order checks.
                let until = Instant::now() + Duration::from_secs(30);
                while self.heard.load(SeqCst) == 0 && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            if self.fails && second >= 40.0 {
                self.heard.fetch_add(1, SeqCst);
                return Err(EngineError::Failed(format!("no decoder at {second} s")));
            }
            let text = format!("s{second}");
            self.log.lock().unwrap().push(format!(
                "{text}: {} chunk, {} at once",
                r.chunks.len(),
                r.calls_at_once
            ));
            self.heard.fetch_add(1, SeqCst);
            Ok(EngineOutput {
                text: text.clone(),
                language: Some("en".into()),
                segments: vec![crate::engine::Segment::new(
                    0.0,
                    r.samples.len() as f64 / 16_000.0,
                    text,
                )],
                processing_time: None,
            })
        }
    }

    /// An engine whose every transcription runs until its request is cancelled, counting the
    /// calls that started and those that saw the cancel.
    pub struct Endless {
        pub started: Arc<std::sync::atomic::AtomicUsize>,
        pub cancelled: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Engine for Endless {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en"])
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            self.started
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            while !r.cancel.is_cancelled() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            self.cancelled
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(EngineError::Cancelled)
        }
    }

    /// Hears its first chunk at once (one segment, "first"); every later call fails when
    /// `fails`, else runs until its request is cancelled. Counts calls and cancels.
    pub struct SecondChunk {
        pub fails: bool,
        pub calls: Arc<std::sync::atomic::AtomicUsize>,
        pub cancelled: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Engine for SecondChunk {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<ModelOffer> {
            Gate::offers(&["tiny.en"])
        }
        fn transcribe(&self, _: &str, r: &EngineRequest<'_>) -> Result<EngineOutput, EngineError> {
            use std::sync::atomic::Ordering::SeqCst;
            if self.calls.fetch_add(1, SeqCst) == 0 {
                return Ok(EngineOutput {
                    text: "first".into(),
                    language: Some("en".into()),
                    segments: vec![crate::engine::Segment::new(0.0, 1.0, "first")],
                    processing_time: None,
                });
            }
            if self.fails {
                return Err(EngineError::Failed("the model file is damaged".into()));
            }
            while !r.cancel.is_cancelled() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            self.cancelled.fetch_add(1, SeqCst);
            Err(EngineError::Cancelled)
        }
    }

    impl Gate {
        pub fn offers(models: &[&'static str]) -> Vec<ModelOffer> {
            models
                .iter()
                .map(|id| ModelOffer {
                    spec: whisper_model(id).unwrap(),
                    downloaded: true,
                    loaded: false,
                })
                .collect()
        }
    }

    /// A gated engine and the sender that lets its transcriptions finish.
    pub fn gate(
        id: &'static str,
        models: Vec<&'static str>,
    ) -> (Arc<dyn Engine>, mpsc::Sender<()>) {
        let (engine, tx, _) = counted_gate(id, models);
        (engine, tx)
    }

    /// [`gate`], with the count of transcriptions that reached the engine.
    pub fn counted_gate(
        id: &'static str,
        models: Vec<&'static str>,
    ) -> (
        Arc<dyn Engine>,
        mpsc::Sender<()>,
        Arc<std::sync::atomic::AtomicUsize>,
    ) {
        let (tx, rx) = mpsc::channel();
        let entered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let engine = Gate {
            id,
            models,
            release: Mutex::new(rx),
            entered: entered.clone(),
        };
        (Arc::new(engine), tx, entered)
    }

    /// A transcriber over `engines` with a fresh store, one slot and a queue of `queue`.
    pub fn transcriber(
        engines: Vec<Arc<dyn Engine>>,
        queue: usize,
    ) -> (tempfile::TempDir, Arc<super::Transcriber>) {
        transcriber_in_session(engines, queue, None)
    }

    /// [`transcriber`] in a desktop session whose locale names `language`.
    pub fn transcriber_in_session(
        engines: Vec<Arc<dyn Engine>>,
        queue: usize,
        language: Option<&str>,
    ) -> (tempfile::TempDir, Arc<super::Transcriber>) {
        let (dir, store) = crate::store::temp_store();
        let store = Arc::new(store);
        let transcriber = super::Transcriber::new(super::TranscriberParts {
            engines,
            store,
            models: crate::engine::models::ModelDir::new(dir.path().join("models")),
            slots: 1,
            max_waiting: queue,
        })
        .with_session_language(language.map(str::to_owned));
        (dir, Arc::new(transcriber))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::speech::{EngineCall, Listener, LiveSlots};
    use super::super::{Audio, Caller};
    use super::testing::{gate, transcriber, transcriber_in_session};
    use super::*;
    use crate::cancel::Cancel;
    use crate::engine::{EngineOutput, LanguageChoice, Task};
    use crate::transcribe::LiveAudio;
    use crate::wire::transcription::TranscribeOptions;

    fn options(model: &str) -> TranscribeOptions {
        TranscribeOptions {
            model: Some(model.into()),
            ..TranscribeOptions::default()
        }
    }

    #[test]
    fn a_model_offered_by_two_engines_is_ambiguous_without_an_engine() {
        let (a, _) = gate("whisper", vec!["tiny", "base"]);
        let (b, _) = gate("other", vec!["base"]);
        let (_dir, t) = transcriber(vec![a, b], 1);
        let resolve = |e, m| t.engines.resolve(&t.store, e, m);
        let err = resolve(None, Some("base")).err().unwrap();
        assert_eq!(
            err.to_string(),
            "Ambiguous model id 'base' -- matches engines: whisper, other. Specify 'engine' too."
        );
        let picked = resolve(Some("other"), Some("base")).ok().unwrap();
        assert_eq!(picked.engine.id(), "other");
        let only = resolve(None, Some("tiny")).ok().unwrap();
        assert_eq!(only.engine.id(), "whisper");
        // Engine alone: its first downloaded model when it is not the selected engine.
        let first = resolve(Some("other"), None).ok().unwrap();
        assert_eq!(first.offer.spec.id, "base");
    }

    /// A job whose samples reach the engine (no voice activity detection).
    fn job(model: &str) -> Job {
        Job {
            audio: Audio::Samples(vec![0.1; 1600]),
            options: TranscribeOptions {
                vad: Some(false),
                ..options(model)
            },
            await_download: false,
            caller: Caller::Api,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn audio_without_speech_never_reaches_the_engine() {
        // The gate is never opened: an engine call would never return.
        let (engine, _release) = gate("whisper", vec!["tiny.en"]);
        let (_dir, t) = transcriber(vec![engine], 1);
        let silence = Job {
            audio: Audio::Samples(vec![0.0; 16_000 * 3]),
            options: options("tiny.en"),
            await_download: false,
            caller: Caller::Api,
        };
        let heard = tokio::time::timeout(Duration::from_secs(20), t.run(silence))
            .await
            .expect("the engine was called")
            .unwrap();
        assert_eq!((heard.text.as_str(), heard.duration), ("", 3.0));
        assert_eq!(heard.language.as_deref(), Some("en"));
        assert_eq!(heard.stages.engine, Duration::ZERO);
        assert_eq!(t.queue.free_slots(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn past_the_queue_requests_get_busy_and_a_slot_outlives_its_request() {
        let (engine, release, entered) = super::testing::counted_gate("whisper", vec!["tiny"]);
        let (_dir, t) = transcriber(vec![engine], 1);
        // One runs and its client leaves: an engine that cannot stop half-way (this one ignores
        // the cancel) still holds the only slot...
        let first = tokio::spawn({
            let t = t.clone();
            async move { t.run(job("tiny")).await }
        });
        while entered.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        first.abort();
        let _ = first.await;
        assert_eq!(t.queue.free_slots(), 0);
        // ...so one waits in the queue of one, and the next is refused at once.
        let second = tokio::spawn({
            let t = t.clone();
            async move { t.run(job("tiny")).await }
        });
        while t.queue.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let third = t.run(job("tiny")).await;
        assert!(matches!(
            third,
            Err(TranscribeError::Busy {
                retry_after_secs: 5
            })
        ));
        release.send(()).unwrap();
        release.send(()).unwrap();
        assert!(second.await.unwrap().is_ok());
    }

    /// A corpus clip's samples (16 kHz mono).
    fn clip(id: &str) -> Vec<f32> {
        let path = format!("{}/corpus/clips/{id}.wav", env!("CARGO_MANIFEST_DIR"));
        let mut reader = hound::WavReader::open(path).unwrap();
        let rate = reader.spec().sample_rate;
        let samples: Vec<f32> = reader
            .samples::<i16>()
            .map(|s| f32::from(s.unwrap()) / 32768.0)
            .collect();
        crate::audio::resample::resample_to_16k(&samples, rate)
    }

    /// The corpus clip `id` without its own quiet edges, so that a pause put after it is the
    /// only one.
    fn sentence(id: &str) -> Vec<f32> {
        let clip = clip(id);
        let loud = |x: &f32| x.abs() > 0.02;
        let start = clip.iter().position(loud).unwrap();
        let end = clip.iter().rposition(loud).unwrap() + 1;
        clip[start..end].to_vec()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_live_chunk_waits_for_one_chunk_of_an_upload_at_most() {
        let live_at = live_chunks_among_upload_calls(1).await;
        // The upload's first chunk ran when the dictation came; each live chunk then waited
        // for one upload chunk at most.
        assert!(live_at[0] <= 2, "{live_at:?}");
        assert!(live_at[1] - live_at[0] <= 2, "{live_at:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_live_chunk_waits_for_the_chunks_out_side_by_side_at_most() {
        let live_at = live_chunks_among_upload_calls(2).await;
        // When the dictation came, the upload's first two chunks (heard together) were done
        // at most, two more on the workers, one in line and one being given out; those are
        // heard, then the live chunk goes.
        assert!(live_at[0] <= 6, "{live_at:?}");
        assert!(live_at[1] - live_at[0] <= 3, "{live_at:?}");
    }

    /// An upload of 150 s through an engine that hears `at_once` chunks at once, and a dictation
    /// of two live chunks that comes once the upload's first call is heard: where the live
    /// chunks stand among the engine's calls, in the order they ended.
    async fn live_chunks_among_upload_calls(at_once: usize) -> Vec<usize> {
        use super::testing::Paced;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        // Each upload call lasts long enough that planning the dictation meanwhile (a debug
        // build beside every other test binary: 0.3 s and more) cannot let a third call start
        // before it.
        let engine = Paced {
            log: log.clone(),
            pause: Duration::from_millis(500),
            at_once,
        };
        let (_dir, t) = transcriber(vec![Arc::new(engine)], 4);
        let mut options = options("tiny.en");
        options.vad = Some(false);
        // An upload of 150 s: five or six chunks of at most 30 s.
        let upload = t
            .plan(options.clone(), false, Caller::Api)
            .await
            .ok()
            .unwrap();
        let upload = tokio::spawn(upload.run(Audio::Samples(vec![0.01; 16_000 * 150])));
        while log.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // A dictation of 16 s meanwhile: two live chunks (at most 15 s each), told apart by
        // their prompt.
        let (blocks, heard) = std::sync::mpsc::channel();
        blocks.send(vec![0.01; 16_000 * 16]).unwrap();
        drop(blocks);
        options.prompt = Some("live".into());
        let live = t.plan(options, false, Caller::Api).await.ok().unwrap();
        live.run(Audio::Live(LiveAudio::new(heard))).await.unwrap();
        upload.await.unwrap().unwrap();
        let log = log.lock().unwrap().clone();
        let live_at: Vec<usize> = log
            .iter()
            .enumerate()
            .filter(|(_, prompt)| prompt.contains("live"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(live_at.len(), 2, "{log:?}");
        assert!(log.len() >= 7, "{log:?}");
        live_at
    }

    /// Its first call runs until its request is cancelled; the others hear "settled".
    struct FirstStalls {
        calls: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Engine for FirstStalls {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<crate::engine::ModelOffer> {
            super::testing::Gate::offers(&["tiny.en"])
        }
        fn transcribe(
            &self,
            _: &str,
            r: &crate::engine::EngineRequest<'_>,
        ) -> Result<EngineOutput, crate::engine::EngineError> {
            use std::sync::atomic::Ordering;
            if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
                while !r.cancel.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return Err(crate::engine::EngineError::Cancelled);
            }
            let seconds = r.samples.len() as f64 / 16_000.0;
            Ok(EngineOutput {
                text: "settled".into(),
                language: Some("en".into()),
                segments: vec![crate::engine::Segment::new(0.0, seconds, "settled")],
                processing_time: None,
            })
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_capture_stopping_abandons_a_provisional_pass_under_way() {
        use std::sync::atomic::Ordering;
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let engine = FirstStalls {
            calls: calls.clone(),
        };
        let (_dir, t) = transcriber(vec![Arc::new(engine)], 1);
        let mut options = options("tiny.en");
        options.vad = Some(true);
        let planned = t.plan(options, false, Caller::Api).await.ok().unwrap();
        let (blocks, heard) = std::sync::mpsc::channel();
        let audio = LiveAudio::new(heard);
        let stopping = audio.stopping.clone();
        // A sentence is spoken at real time; the stop comes while a provisional pass of it runs
        // (the engine's first call, which would never end by itself).
        let speech = clip("en-founded");
        let listening: ProgressSink = Box::new(|_| {});
        let running = tokio::spawn(planned.run_streaming(Audio::Live(audio), Some(listening)));
        let mut sent = 0;
        while calls.load(Ordering::SeqCst) == 0 {
            assert!(sent < speech.len(), "no provisional pass while speaking");
            let block = &speech[sent..(sent + 320).min(speech.len())];
            blocks.send(block.to_vec()).unwrap();
            sent += block.len();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        blocks.send(speech[sent..].to_vec()).unwrap();
        stopping.cancel();
        drop(blocks);
        let transcript = tokio::time::timeout(Duration::from_secs(20), running)
            .await
            .expect("the stop abandons the provisional pass")
            .unwrap()
            .unwrap();
        assert_eq!(transcript.raw_text, "settled");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            2,
            "no provisional pass after the stop"
        );
    }

    /// An engine that hears what was said before a chunk: notes each call in `log` ("<samples>
    /// said <samples said before> <text said before>", " provisional" for a provisional pass)
    /// and hears one segment ("callN") from the end of what was said before to the end.
    struct HearsSaidBefore {
        log: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Engine for HearsSaidBefore {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<crate::engine::ModelOffer> {
            super::testing::Gate::offers(&["tiny.en"])
        }
        fn hears_said_before(&self) -> bool {
            true
        }
        fn transcribe(
            &self,
            _: &str,
            r: &crate::engine::EngineRequest<'_>,
        ) -> Result<EngineOutput, crate::engine::EngineError> {
            let mut log = self.log.lock().unwrap();
            let (said, text) = r
                .said_before
                .as_ref()
                .map_or((0, ""), |s| (s.samples, s.text.as_str()));
            let provisional = if r.provisional { " provisional" } else { "" };
            log.push(format!(
                "{} said {said} {text}{provisional}",
                r.samples.len()
            ));
            let text = format!("call{}", log.len());
            let (from, to) = (said as f64 / 16_000.0, r.samples.len() as f64 / 16_000.0);
            Ok(EngineOutput {
                text: text.clone(),
                language: Some("en".into()),
                segments: vec![crate::engine::Segment::new(from, to, text)],
                processing_time: None,
            })
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_committed_live_chunk_is_heard_after_the_chunks_said_before_it() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = HearsSaidBefore { log: log.clone() };
        let (_dir, t) = transcriber(vec![Arc::new(engine)], 1);
        let first = clip("en-founded");
        let second_at = first.len() + 24_000;
        let mut audio = first;
        audio.extend(vec![0.0; 24_000]);
        audio.extend(clip("real-something"));
        audio.extend(vec![0.0; 8_000]);
        let settled = Arc::new(std::sync::Mutex::new(Vec::<TimedText>::new()));
        let noted = settled.clone();
        let on_progress: ProgressSink = Box::new(move |progress| {
            if let Progress::Segments(timed) = progress {
                noted.lock().unwrap().extend(timed.iter().cloned());
            }
        });
        let pace = Duration::from_millis(10);
        let transcript =
            speak_live_reporting(&t, options("tiny.en"), audio, pace, on_progress).await;
        let settled = settled.lock().unwrap().clone();
        let log = log.lock().unwrap().clone();
        assert_eq!(settled.len(), 2, "{log:?}");
        // The second chunk was heard (ahead or at its commit) with the first in front, read as
        // the text committed for it; provisional passes were heard alone.
        let second_call: usize = settled[1].text.trim_start_matches("call").parse().unwrap();
        let call = &log[second_call - 1];
        let (samples, rest) = call.split_once(" said ").unwrap();
        let (said, text) = rest.split_once(' ').unwrap();
        let (samples, said): (usize, usize) = (samples.parse().unwrap(), said.parse().unwrap());
        assert_eq!(text, settled[0].text, "{log:?}");
        assert!(said > 0 && samples > said, "{log:?}");
        assert!(
            log.iter()
                .filter(|call| call.ends_with(" provisional"))
                .all(|call| call.contains(" said 0 ")),
            "{log:?}"
        );
        // Its segment lies in the audio's timeline after what was said before it.
        let second_start = second_at as f64 / 16_000.0;
        assert!(
            settled[1].start >= second_start - 0.6 && settled[0].end <= settled[1].start,
            "{settled:?}"
        );
        assert_eq!(
            transcript.raw_text,
            format!("{} {}", settled[0].text, settled[1].text)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn live_audio_reports_speech_provisional_text_and_commits_in_order() {
        use super::testing::Recorder;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (_dir, t) = transcriber(vec![Arc::new(Recorder { log: log.clone() })], 1);
        let mut audio = clip("en-founded");
        audio.extend(vec![0.0; 24_000]);
        audio.extend(clip("real-something"));
        audio.extend(vec![0.0; 8_000]);
        let reports = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let noted = reports.clone();
        let on_progress: ProgressSink = Box::new(move |progress| {
            let note = match progress {
                Progress::Segments(timed) => format!("text {}", timed[0].text),
                Progress::SpeechStarted { .. } => "started".into(),
                Progress::Committed { goes_on, .. } => format!("committed {goes_on}"),
                Progress::Tentative(text) => format!("tentative {text}"),
            };
            noted.lock().unwrap().push(note);
        });
        // Twice as fast as someone speaking: 20 ms blocks every 10 ms.
        let pace = Duration::from_millis(10);
        let transcript =
            speak_live_reporting(&t, options("tiny.en"), audio, pace, on_progress).await;
        let reports = reports.lock().unwrap().clone();
        // Each sentence: its start, provisional text while it goes on, its commit after the
        // pause, then its settled text (the next engine call's).
        let sentences: Vec<&[String]> = reports.split(|r| r == "started").skip(1).collect();
        assert_eq!(reports[0], "started", "{reports:?}");
        assert_eq!(sentences.len(), 2, "{reports:?}");
        for sentence in sentences {
            let (tentative, last_two) = sentence.split_at(sentence.len() - 2);
            assert!(!tentative.is_empty(), "{reports:?}");
            assert!(
                tentative.iter().all(|r| r.starts_with("tentative call")),
                "{reports:?}"
            );
            assert_eq!(last_two[0], "committed false", "{reports:?}");
            assert!(last_two[1].starts_with("text call"), "{reports:?}");
        }
        // The first sentence's pause (1.5 s) lets its chunk be heard ahead: its commit takes
        // that pass's text (the engine's call number) without another engine call.
        let first: Vec<&String> = reports
            .iter()
            .take_while(|r| r.as_str() != "committed false")
            .collect();
        let settled_first = reports.iter().find(|r| r.starts_with("text ")).unwrap();
        assert_eq!(
            first.last().unwrap().strip_prefix("tentative "),
            settled_first.strip_prefix("text "),
            "{reports:?}"
        );
        // Provisional passes are not part of the text.
        let settled: Vec<&str> = reports
            .iter()
            .filter_map(|r| r.strip_prefix("text "))
            .collect();
        assert_eq!(transcript.raw_text, settled.join(" "));
        // The engine is told which passes are provisional (it skips second attempts on
        // those): not the settled ones, nor those heard ahead (as the voice dropped, or in a
        // pause), whose text is tentative until the chunk settles on it or goes on.
        let log = log.lock().unwrap().clone();
        let provisional = |call: &str| {
            let n: usize = call.trim_start_matches("call").parse().unwrap();
            log[n - 1].ends_with(" provisional")
        };
        assert!(settled.iter().all(|call| !provisional(call)), "{log:?}");
        let tentative: Vec<&str> = reports
            .iter()
            .filter_map(|r| r.strip_prefix("tentative "))
            .filter(|call| !settled.contains(call))
            .collect();
        assert!(tentative.iter().any(|call| provisional(call)), "{log:?}");
        let ahead_unused = tentative.iter().filter(|call| !provisional(call));
        let last_settled: usize = settled.last().unwrap()[4..].parse().unwrap();
        for call in ahead_unused {
            let n: usize = call[4..].parse().unwrap();
            assert!(
                n < last_settled,
                "an unused pass ahead before a chunk went on: {log:?}"
            );
        }
    }

    #[test]
    fn the_chunk_is_heard_ahead_as_the_voice_drops_and_that_text_is_what_it_settles_as() {
        use super::testing::Recorder;
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let listener = || {
            let listener = live_listener(Arc::new(Recorder { log: log.clone() }), &runtime);
            log.lock().unwrap().clear();
            listener
        };
        // A sentence to its last loud sample, then `frames` frames (16 ms) of quiet, heard
        // without a pass on the way; then, once, what the open chunk is heard for now.
        let sentence = sentence("en-founded");
        let heard_after = |frames: usize| {
            let mut listener = listener();
            assert!(listener.hear(&sentence));
            for _ in 0..frames {
                assert!(listener.hear(&[0.0; 256]));
            }
            listener.provisional(None);
            let calls = log.lock().unwrap().clone();
            assert!(calls.len() <= 1, "{calls:?}");
            match calls.first() {
                None => "none",
                Some(call) if call.contains(" provisional") => "provisional",
                Some(_) => "ahead",
            }
        };
        let heard: Vec<&str> = (0..40).map(heard_after).collect();
        // While the voice is heard, provisional passes; from the moment it drops, the pass
        // ahead, heard as a committed chunk is, with nothing between.
        let quiet = heard.iter().position(|&h| h != "provisional").unwrap();
        assert!(quiet > 0, "{heard:?}");
        assert!(heard[quiet..].iter().all(|&h| h == "ahead"), "{heard:?}");

        // Heard as it goes, the pause after the sentence gets one pass ahead, as the voice
        // drops, before the chunk's padding is heard, and the commit at the pause's end takes
        // its text: the chunk that settles, with the quiet heard since, is not heard again.
        let mut live = listener();
        assert!(live.hear(&sentence));
        let provisional = log.lock().unwrap().len();
        for _ in 0..60 {
            assert!(live.hear(&[0.0; 256]));
            live.provisional(None);
        }
        let settled = live.finish().output.unwrap();
        let calls = log.lock().unwrap().clone();
        let ahead: Vec<&String> = calls[provisional..]
            .iter()
            .filter(|call| !call.contains(" provisional"))
            .collect();
        assert_eq!(ahead.len(), 1, "{calls:?}");
        assert_eq!(calls.last(), Some(ahead[0]), "{calls:?}");
        assert_eq!(settled.text, format!("call{}", calls.len()));
        assert!(
            Recorder::samples_in(ahead[0]) < sentence.len() + 15 * 256,
            "heard before the chunk settled: {calls:?}"
        );
    }

    /// A listener of live English audio on `engine` (tiny.en, voice activity detection, a queue
    /// of its own), reporting to nobody, its provisional passes never stopped.
    fn live_listener(engine: Arc<dyn Engine>, runtime: &tokio::runtime::Runtime) -> Listener {
        let call = EngineCall {
            engine,
            model: crate::engine::models::whisper_model("tiny.en").unwrap(),
            vad: true,
            language: LanguageChoice::Exact("en".into()),
            task: Task::Transcribe,
            initial_prompt: None,
            words: false,
            cancel: Cancel::new(),
            live: Some(LiveSlots {
                queue: Arc::new(Queue::new(1, 4)),
                runtime: runtime.handle().clone(),
            }),
            held: None,
            language_guess: None,
        };
        let mut listener = Listener::new(call, Some(Box::new(|_| {})));
        listener.stop_provisional_on(Cancel::new());
        listener
    }

    /// Hears committed chunks at once (one segment, like [`super::testing::Recorder`]) and
    /// runs every provisional pass until it is given up (10 s at most), noting each call in
    /// `log` ("ahead <samples>", "provisional <samples> given up" or "... heard").
    struct ProvisionalUntilGivenUp {
        log: Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl Engine for ProvisionalUntilGivenUp {
        fn id(&self) -> &'static str {
            "whisper"
        }
        fn models(&self) -> Vec<crate::engine::ModelOffer> {
            super::testing::Gate::offers(&["tiny.en"])
        }
        fn transcribe(
            &self,
            _: &str,
            r: &crate::engine::EngineRequest<'_>,
        ) -> Result<EngineOutput, crate::engine::EngineError> {
            let samples = r.samples.len();
            if r.provisional {
                let until = Instant::now() + Duration::from_secs(10);
                while !r.cancel.is_cancelled() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(2));
                }
                let how = if r.cancel.is_cancelled() {
                    "given up"
                } else {
                    "heard"
                };
                let mut log = self.log.lock().unwrap();
                log.push(format!("provisional {samples} {how}"));
                return Err(crate::engine::EngineError::Cancelled);
            }
            self.log.lock().unwrap().push(format!("ahead {samples}"));
            Ok(EngineOutput {
                text: "words".into(),
                language: Some("en".into()),
                segments: vec![crate::engine::Segment::new(
                    0.0,
                    samples as f64 / 16_000.0,
                    "words",
                )],
                processing_time: None,
            })
        }
    }

    #[test]
    fn a_provisional_pass_is_given_up_as_the_voice_drops_for_the_pass_ahead() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = Arc::new(ProvisionalUntilGivenUp { log: log.clone() });
        let mut listener = live_listener(engine, &runtime);
        // A sentence to its last loud sample: someone is speaking, and a provisional pass
        // starts; 0.3 s into it, 0.22 s of quiet is captured (the capture still going: the
        // voice has dropped, 0.16 s after the last loud sample as the detector hears it, and
        // the detector's region has not closed).
        assert!(listener.hear(&sentence("en-founded")));
        let (tx, rx) = std::sync::mpsc::channel();
        let capture = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            for _ in 0..14 {
                tx.send(vec![0.0; 256]).unwrap();
            }
            tx
        });
        let started = Instant::now();
        listener.provisional(Some(&rx));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the pass ran on: {:?}",
            started.elapsed()
        );
        let calls = log.lock().unwrap().clone();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(calls[0].ends_with(" given up"), "{calls:?}");
        // The quiet was heard beside the pass, and the pass as the voice drops follows at
        // once, not spaced from the one given up (twice the 0.3 s it ran).
        listener.provisional(Some(&rx));
        let calls = log.lock().unwrap().clone();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(calls[1].starts_with("ahead "), "{calls:?}");
        drop(capture.join().unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chunk_heard_ahead_is_heard_again_when_speech_resumes_in_the_pause() {
        use super::testing::Recorder;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (_dir, t) = transcriber(vec![Arc::new(Recorder { log: log.clone() })], 1);
        // A sentence, a pause long enough for the chunk to be heard ahead (0.5 s: past the
        // 0.24 s kept after speech) but too short to end it (0.72 s), the sentence again, and
        // the stop right after it (no pause in which to hear the longer chunk ahead).
        let sentence = sentence("en-founded");
        let mut audio = sentence.clone();
        audio.extend(vec![0.0; 8_000]);
        audio.extend(&sentence);
        let reports = Arc::new(std::sync::Mutex::new(Vec::<(String, f64)>::new()));
        let noted = reports.clone();
        let on_progress: ProgressSink = Box::new(move |progress| {
            let note = match progress {
                Progress::Segments(timed) => (format!("text {}", timed[0].text), 0.0),
                Progress::Committed { start, end, .. } => ("committed".into(), end - start),
                Progress::Tentative(text) => (format!("tentative {text}"), 0.0),
                Progress::SpeechStarted { .. } => return,
            };
            noted.lock().unwrap().push(note);
        });
        let pace = Duration::from_millis(10);
        speak_live_reporting(&t, options("tiny.en"), audio, pace, on_progress).await;
        let reports = reports.lock().unwrap().clone();
        let log = log.lock().unwrap().clone();
        let heard_samples = |call: &str| -> usize {
            let n: usize = call.trim_start_matches("call").parse().unwrap();
            Recorder::samples_in(&log[n - 1])
        };
        let commits: Vec<f64> = reports
            .iter()
            .filter(|(r, _)| r == "committed")
            .map(|(_, seconds)| *seconds)
            .collect();
        let settled: Vec<&str> = reports
            .iter()
            .filter_map(|(r, _)| r.strip_prefix("text "))
            .collect();
        assert_eq!(commits.len(), 1, "one chunk: {reports:?}");
        assert_eq!(settled.len(), 1, "{reports:?}");
        // The settled text is an engine call that heard the whole chunk, both sentences.
        let whole = (commits[0] * 16_000.0).round() as usize;
        assert_eq!(heard_samples(settled[0]), whole, "{reports:?} {log:?}");
        // And the pause was heard ahead: a call heard the first sentence as it would have
        // settled, then was not used.
        let first_sentence = sentence.len();
        assert!(
            log.iter().any(|call| {
                let samples = Recorder::samples_in(call);
                samples > first_sentence && samples < first_sentence + 8_000
            }),
            "{log:?}"
        );
    }

    /// `audio` spoken at real time (20 ms blocks) into a live transcription with detection
    /// on, through `engine`'s tiny.en.
    async fn speak_live(engine: Arc<dyn Engine>, audio: Vec<f32>) {
        speak_live_to(engine, "tiny.en", audio).await
    }

    /// [`speak_live`] with `model`.
    async fn speak_live_to(engine: Arc<dyn Engine>, model: &str, audio: Vec<f32>) {
        let (_dir, t) = transcriber(vec![engine], 1);
        speak_live_on(&t, model, audio).await
    }

    /// [`speak_live_to`] through the transcriber `t`.
    async fn speak_live_on(t: &Arc<super::Transcriber>, model: &str, audio: Vec<f32>) {
        speak_live_with(t, options(model), audio).await
    }

    /// [`speak_live_on`] with these `options` (detection switched on).
    async fn speak_live_with(
        t: &Arc<super::Transcriber>,
        options: TranscribeOptions,
        audio: Vec<f32>,
    ) {
        let pace = Duration::from_millis(20);
        speak_live_reporting(t, options, audio, pace, Box::new(|_| {})).await;
    }

    /// [`speak_live_with`], a 20 ms block every `pace`, reporting to `on_progress`; the
    /// transcript.
    async fn speak_live_reporting(
        t: &Arc<super::Transcriber>,
        mut options: TranscribeOptions,
        audio: Vec<f32>,
        pace: Duration,
        on_progress: ProgressSink,
    ) -> Transcript {
        let (blocks, heard) = std::sync::mpsc::channel();
        let speaker = std::thread::spawn(move || {
            for block in audio.chunks(320) {
                blocks.send(block.to_vec()).unwrap();
                std::thread::sleep(pace);
            }
        });
        options.vad = Some(true);
        let planned = t.plan(options, false, Caller::Api).await.ok().unwrap();
        let transcript = planned
            .run_streaming(Audio::Live(LiveAudio::new(heard)), Some(on_progress))
            .await
            .unwrap();
        speaker.join().unwrap();
        transcript
    }

    /// The samples each provisional pass of `log` heard, in order.
    fn provisional_passes(log: &[String]) -> Vec<usize> {
        log.iter()
            .filter(|call| call.contains(" provisional"))
            .map(|call| super::testing::Recorder::samples_in(call))
            .collect()
    }

    /// The provisional calls in an engine's `log`.
    fn provisional(log: &[String]) -> Vec<String> {
        log.iter()
            .filter(|call| call.contains(" provisional"))
            .cloned()
            .collect()
    }

    /// A [`super::testing::Slow`] engine taking `pause_ms` a call and hearing words from
    /// `words_from` samples on, and the log of its calls.
    fn slow(
        pause_ms: u64,
        words_from: usize,
    ) -> (Arc<std::sync::Mutex<Vec<String>>>, Arc<dyn Engine>) {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = super::testing::Slow {
            log: log.clone(),
            pause: Duration::from_millis(pause_ms),
            words_from,
        };
        (log, Arc::new(engine))
    }

    /// A corpus sentence and a second of silence after it.
    fn said(id: &str) -> Vec<f32> {
        let mut audio = clip(id);
        audio.extend(vec![0.0; 16_000]);
        audio
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_open_chunk_is_heard_again_sooner_while_it_has_no_words() {
        // Words only in 2.2 s of audio or more: the passes before hear none.
        let (log, engine) = slow(20, 35_200);
        speak_live(engine, said("en-founded")).await;
        let passes = provisional_passes(&log.lock().unwrap());
        let mute: Vec<usize> = passes.iter().copied().filter(|&n| n < 35_200).collect();
        // A second apart (16,000 samples at real time) there would be two at most.
        assert!(mute.len() >= 3, "{passes:?}");
        let closest = mute.windows(2).map(|w| w[1] - w[0]).min().unwrap();
        assert!(closest < 12_800, "{passes:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn provisional_passes_take_the_language_the_first_one_detected() {
        let (log, engine) = slow(20, 0);
        speak_live_to(engine, "base", said("en-founded")).await;
        let log = log.lock().unwrap().clone();
        let passes: Vec<&String> = log.iter().filter(|c| c.contains(" provisional")).collect();
        assert!(passes.len() >= 2, "{log:?}");
        // The first detects (through whisper's full window); the rest take its language.
        assert!(passes[0].ends_with(" auto"), "{log:?}");
        assert!(passes[1..].iter().all(|c| c.ends_with(" de")), "{log:?}");
        // A chunk no pass heard 3 s of is committed detecting the language for itself: the
        // text and its language are the same as a file's would be.
        let samples = super::testing::Recorder::samples_in;
        assert!(passes.iter().all(|c| samples(c) < 48_000), "{log:?}");
        let settled = log.iter().find(|c| !c.contains(" provisional")).unwrap();
        assert!(settled.ends_with(" auto"), "{log:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pass_over_three_seconds_of_the_first_chunk_settles_the_language_for_its_commit() {
        // A 4.9 s sentence: provisional passes over 3 s of it and more.
        let (log, engine) = slow(20, 0);
        speak_live_to(engine, "base", said("real-wizard")).await;
        let log = log.lock().unwrap().clone();
        let samples = super::testing::Recorder::samples_in;
        let ahead = log
            .iter()
            .position(|c| c.contains(" provisional") && samples(c) >= 48_000)
            .unwrap_or_else(|| panic!("no pass over 3 s: {log:?}"));
        // The first pass detects for tentative text, the first over 3 s for good ...
        assert!(log[0].ends_with(" auto"), "{log:?}");
        assert!(log[1..ahead].iter().all(|c| c.ends_with(" de")), "{log:?}");
        assert!(log[ahead].ends_with(" auto"), "{log:?}");
        // ... and what comes after, the commit included, is heard in that language.
        let after = &log[ahead + 1..];
        assert!(after.iter().any(|c| !c.contains(" provisional")), "{log:?}");
        assert!(after.iter().all(|c| c.ends_with(" de")), "{log:?}");

        // Passes over 3 s that hear no words (the engine hears them from 3.75 s on) settle
        // nothing: each detects again until one hears words.
        let (log, engine) = slow(20, 60_000);
        speak_live_to(engine, "base", said("real-wizard")).await;
        let log = log.lock().unwrap().clone();
        let over_3_s: Vec<&String> = log
            .iter()
            .filter(|c| c.contains(" provisional") && samples(c) >= 48_000)
            .collect();
        let mute = over_3_s.iter().filter(|c| samples(c) < 60_000).count();
        assert!(mute >= 1 && over_3_s.len() > mute, "{log:?}");
        assert!(
            over_3_s[..=mute].iter().all(|c| c.ends_with(" auto")),
            "{log:?}"
        );
        let settled_by = log.iter().position(|c| c == over_3_s[mute]).unwrap();
        let after = &log[settled_by + 1..];
        assert!(after.iter().any(|c| !c.contains(" provisional")), "{log:?}");
        assert!(after.iter().all(|c| c.ends_with(" de")), "{log:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_next_live_transcription_starts_from_the_language_the_last_one_settled_on() {
        let (calls, engine) = slow(20, 0);
        let (_dir, t) = transcriber(vec![engine], 1);
        let audio = said("en-founded");
        speak_live_on(&t, "base", audio.clone()).await;
        let first = calls.lock().unwrap().len();
        speak_live_on(&t, "base", audio.clone()).await;
        let log = calls.lock().unwrap().clone();
        let (before, after) = log.split_at(first);
        // The first detects the language; the second's passes start from what it settled on.
        assert!(provisional(before)[0].ends_with(" auto"), "{log:?}");
        let second = provisional(after);
        assert!(!second.is_empty(), "{log:?}");
        assert!(second.iter().all(|c| c.ends_with(" de")), "{log:?}");
        // What is committed still detects the language for itself.
        assert!(
            after
                .iter()
                .any(|c| !c.contains(" provisional") && c.ends_with(" auto")),
            "{log:?}"
        );
        // A guess outside the request's shortlist is not taken: its first pass detects.
        let mut hinted = options("base");
        hinted.language_hints = vec!["fr".into(), "es".into()];
        let third = log.len();
        speak_live_with(&t, hinted, audio).await;
        let log = calls.lock().unwrap().clone();
        assert!(provisional(&log[third..])[0].ends_with(" auto"), "{log:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn live_text_starts_from_the_desktop_sessions_language_until_one_is_settled() {
        let (calls, engine) = slow(20, 0);
        let (_dir, t) = transcriber_in_session(vec![engine], 1, Some("fr"));
        let audio = said("en-founded");
        // No live transcription has settled a language: the passes start from the session's.
        speak_live_on(&t, "base", audio.clone()).await;
        let log = calls.lock().unwrap().clone();
        let first = provisional(&log);
        assert!(first.len() >= 2, "{log:?}");
        assert!(first.iter().all(|c| c.ends_with(" fr")), "{log:?}");
        // What is committed detects the language for itself ("de" here) ...
        assert!(
            log.iter()
                .any(|c| !c.contains(" provisional") && c.ends_with(" auto")),
            "{log:?}"
        );
        // ... and what it settled on goes before the session's from then on.
        let seen = log.len();
        speak_live_on(&t, "base", audio.clone()).await;
        let log = calls.lock().unwrap().clone();
        let second = provisional(&log[seen..]);
        assert!(!second.is_empty(), "{log:?}");
        assert!(second.iter().all(|c| c.ends_with(" de")), "{log:?}");
        // An English-only model takes no guess; its passes ask for English.
        let seen = log.len();
        speak_live_on(&t, "tiny.en", audio).await;
        let log = calls.lock().unwrap().clone();
        let english = provisional(&log[seen..]);
        assert!(!english.is_empty(), "{log:?}");
        assert!(english.iter().all(|c| !c.ends_with(" fr")), "{log:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_new_chunks_first_pass_does_not_wait_for_the_spacing_of_the_chunk_before() {
        // Each pass takes 1.5 s, so the next over the same chunk waits 3 s.
        let (log, engine) = slow(1_500, 0);
        let sentence = sentence("en-founded");
        // Two sentences 1.2 s apart: the pause ends the first chunk and is heard ahead in it
        // (from about 0.3 s into the pause to 1.8 s), so the spacing from that pass would run
        // until 3.3 s, 2.1 s into the second sentence.
        let mut audio = sentence.clone();
        audio.extend(vec![0.0; 19_200]);
        audio.extend(&sentence);
        audio.extend(vec![0.0; 16_000]);
        speak_live(engine, audio).await;
        let log = log.lock().unwrap().clone();
        // The second chunk's passes: those after the last call over the first chunk (its
        // pass ahead, taken at the commit).
        let ahead = log
            .iter()
            .position(|call| !call.contains(" provisional"))
            .unwrap();
        let second = provisional_passes(&log[ahead + 1..]);
        // Its first pass as soon as the engine is free (at 1.8 s: the chunk, from 0.24 s before
        // the voice, holds 0.84 s), not 2.3 s (37,000 samples) in.
        assert!(second.first().is_some_and(|&n| n < 24_000), "{log:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_live_chunk_closed_by_its_length_at_a_short_pause_lets_speech_go_on() {
        use super::testing::Recorder;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (_dir, t) = transcriber(vec![Arc::new(Recorder { log: log.clone() })], 1);
        // A sentence (3 s) said three times with 0.6 s between (shorter than the 0.72 s that
        // ends a live chunk, longer than the 0.48 s its padding fills), then twice without a
        // pause: the chunk is held open while that speech might still fit into 15 s with it,
        // then closes at the pause before it, once it is clear it does not.
        let sentence = sentence("en-founded");
        let mut audio = Vec::new();
        for _ in 0..3 {
            audio.extend(&sentence);
            audio.extend(vec![0.0; 9_600]);
        }
        audio.extend(&sentence);
        audio.extend(&sentence);
        audio.extend(vec![0.0; 16_000]);
        let reports = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let commits = Arc::new(std::sync::Mutex::new(Vec::<(f64, f64, bool)>::new()));
        let (noted, committed) = (reports.clone(), commits.clone());
        let on_progress: ProgressSink = Box::new(move |progress| {
            let note = match progress {
                Progress::SpeechStarted { .. } => "started",
                Progress::Committed {
                    start,
                    end,
                    goes_on,
                } => {
                    committed.lock().unwrap().push((start, end, goes_on));
                    "committed"
                }
                _ => return,
            };
            noted.lock().unwrap().push(note.to_string());
        });
        let pace = Duration::from_millis(2);
        speak_live_reporting(&t, options("tiny.en"), audio, pace, on_progress).await;
        let reports = reports.lock().unwrap().clone();
        let commits = commits.lock().unwrap().clone();
        assert_eq!(
            reports,
            ["started", "committed", "committed"],
            "speech started once and went on: {commits:?}"
        );
        let ((start, end, goes_on), (next, last, stopped)) = (commits[0], commits[1]);
        assert!(goes_on && !stopped, "{commits:?}");
        assert!(end - start < 12.0 && last - start > 15.0, "{commits:?}");
        // Closed at the pause, not cut inside a sentence: what lies between is silence.
        assert!(next > end && next - end < 0.24, "{commits:?}");
    }

    /// `seconds` of faint sound without voice activity detection (chunks of at most 30 s) through
    /// `engine`: the transcript and the segments handed on, each hand-over noted in `log` as
    /// "segments".
    async fn silence_in_chunks(
        engine: Arc<dyn Engine>,
        seconds: usize,
        log: &Arc<std::sync::Mutex<Vec<String>>>,
    ) -> (Transcript, Vec<TimedText>) {
        let (_dir, t) = transcriber(vec![engine], 1);
        let mut job = job("tiny.en");
        job.audio = Audio::Samples(super::testing::staircase(seconds));
        let sink_log = log.clone();
        let heard_segments = Arc::new(std::sync::Mutex::new(Vec::new()));
        let heard = heard_segments.clone();
        let on_segments: ProgressSink = Box::new(move |progress| {
            if let Progress::Segments(segments) = progress {
                sink_log.lock().unwrap().push("segments".into());
                heard.lock().unwrap().extend_from_slice(segments);
            }
        });
        let planned = t.plan(job.options, false, Caller::Api).await.ok().unwrap();
        let transcript = planned
            .run_streaming(job.audio, Some(on_segments))
            .await
            .unwrap();
        let segments = heard_segments.lock().unwrap().clone();
        (transcript, segments)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_chunk_is_transcribed_and_handed_on_before_the_next_is_heard() {
        use super::testing::Recorder;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = Arc::new(Recorder { log: log.clone() });
        // 70 s without voice activity detection: chunks of at most 30 s covering it all.
        let (transcript, segments) = silence_in_chunks(engine, 70, &log).await;
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 6, "{log:?}");
        for pair in log.chunks(2) {
            assert!(
                pair[0].starts_with("engine ") && pair[1] == "segments",
                "{log:?}"
            );
        }
        assert_eq!(transcript.raw_text, "call1 call3 call5");
        // The segments are in the audio's timeline: each starts where the one before ended.
        assert_eq!(segments[0].start, 0.0);
        for pair in segments.windows(2) {
            assert!((pair[0].end - pair[1].start).abs() < 1e-9, "{segments:?}");
        }
        assert!((segments[2].end - 70.0).abs() < 1e-9);
        assert_eq!(transcript.duration, 70.0);
    }

    /// The [`super::testing::Recorder`] engine, its file chunks ending at the first pause past
    /// `after` seconds.
    struct Closing {
        inner: super::testing::Recorder,
        after: Option<f64>,
    }

    impl Engine for Closing {
        fn id(&self) -> &'static str {
            self.inner.id()
        }
        fn models(&self) -> Vec<crate::engine::ModelOffer> {
            self.inner.models()
        }
        fn close_file_chunks_after(&self) -> Option<f64> {
            self.after
        }
        fn transcribe(
            &self,
            model: &str,
            request: &crate::engine::EngineRequest<'_>,
        ) -> Result<EngineOutput, crate::engine::EngineError> {
            self.inner.transcribe(model, request)
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_files_chunks_end_at_the_first_pause_past_the_engines_length() {
        // Eight times four seconds of real speech, 1.2 s apart (41.6 s).
        let sentence = clip("real-numbers");
        let mut audio = Vec::new();
        for _ in 0..8 {
            audio.extend_from_slice(&sentence);
            audio.extend(std::iter::repeat_n(0.0, 19_200));
        }
        let mut heard = Vec::new();
        for after in [None, Some(12.0)] {
            let log = Arc::new(std::sync::Mutex::new(Vec::new()));
            let engine = Closing {
                inner: super::testing::Recorder { log: log.clone() },
                after,
            };
            let (_dir, t) = transcriber(vec![Arc::new(engine)], 1);
            let options = TranscribeOptions {
                vad: Some(true),
                ..options("tiny.en")
            };
            let planned = t.plan(options, false, Caller::Api).await.ok().unwrap();
            planned.run(Audio::Samples(audio.clone())).await.unwrap();
            let seconds: Vec<f64> = log
                .lock()
                .unwrap()
                .iter()
                .map(|noted| super::testing::Recorder::samples_in(noted) as f64 / 16_000.0)
                .collect();
            heard.push(seconds);
        }
        // Packed across the pauses: a chunk of up to 30 s, then the rest.
        assert_eq!(heard[0].len(), 2, "{heard:?}");
        assert!(heard[0][0] > 20.0, "{heard:?}");
        // Ended at the first pause once 12 s are held: three sentences a chunk (about 14.4 s of
        // the audio, heard in about 11 s since the pauses inside are left out down to 0.8 s),
        // the last two.
        assert_eq!(heard[1].len(), 3, "{heard:?}");
        for seconds in &heard[1][..2] {
            assert!((10.0..13.0).contains(seconds), "{heard:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_engine_that_hears_two_chunks_at_once_hears_a_files_chunks_side_by_side() {
        use super::testing::Beside;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        // 130 s without voice activity detection: several chunks.
        let engine = Arc::new(Beside {
            log: log.clone(),
            ..Default::default()
        });
        let (transcript, segments) = silence_in_chunks(engine.clone(), 130, &log).await;
        let log: Vec<String> = log.lock().unwrap().clone();
        // One chunk a call, two calls at once: another chunk was heard while the first call
        // to come (the first chunk's, or the second's when its thread came first) waited.
        let calls: Vec<&String> = log.iter().filter(|l| l.contains(": ")).collect();
        assert!(calls.len() >= 3, "{log:?}");
        assert!(
            calls.iter().all(|l| l.ends_with(": 1 chunk, 2 at once")),
            "{log:?}"
        );
        let waited = engine.waited.lock().unwrap().clone().unwrap();
        assert!(["s0", "s20"].contains(&waited.as_str()), "{waited} {log:?}");
        assert!(!calls[0].starts_with(&format!("{waited}:")), "{log:?}");
        // Handed on in the audio's order, one after the other from 0 to 130 s, each chunk's
        // segment in the audio's timeline.
        assert_eq!(segments.len(), calls.len(), "{segments:?}");
        assert_eq!(segments[0].start, 0.0);
        for pair in segments.windows(2) {
            assert!((pair[0].end - pair[1].start).abs() < 1e-9, "{segments:?}");
        }
        assert!((segments[calls.len() - 1].end - 130.0).abs() < 1e-9);
        for segment in &segments {
            assert_eq!(
                segment.text,
                format!("s{}", segment.start.floor()),
                "{segments:?}"
            );
        }
        let texts: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(transcript.raw_text, texts.join(" "));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_of_one_chunk_is_heard_alone_on_all_the_engines_threads() {
        use super::testing::Beside;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = Arc::new(Beside {
            log: log.clone(),
            ..Default::default()
        });
        let (transcript, _) = silence_in_chunks(engine, 12, &log).await;
        assert_eq!(transcript.raw_text, "s0");
        let log = log.lock().unwrap().clone();
        assert_eq!(log, ["s0: 1 chunk, 1 at once", "segments"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chunk_that_fails_side_by_side_fails_the_transcription_and_frees_the_engine() {
        use super::testing::Beside;
        let engine = Arc::new(Beside {
            fails: true,
            ..Default::default()
        });
        let (_dir, t) = transcriber(vec![engine], 1);
        let mut job = job("tiny.en");
        job.audio = Audio::Samples(super::testing::staircase(130));
        let failed = tokio::time::timeout(Duration::from_secs(20), t.run(job))
            .await
            .expect("an answer")
            .unwrap_err();
        assert!(
            failed.to_string().contains("transcription failed"),
            "{failed}"
        );
        assert_eq!(t.queue.free_slots(), 1);
        // The engine hears the next request.
        let mut next = self::job("tiny.en");
        next.audio = Audio::Samples(super::testing::staircase(5));
        assert_eq!(t.run(next).await.unwrap().raw_text, "s0");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn short_clips_waiting_together_are_heard_at_once_on_shares_of_the_threads() {
        use super::testing::Beside;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let engine = Arc::new(Beside {
            log: log.clone(),
            ..Default::default()
        });
        let (_dir, t) = transcriber(vec![engine], 4);
        let held = t.queue.acquire().await.ok().unwrap();
        let clips: Vec<_> = [3, 5]
            .into_iter()
            .map(|seconds| {
                let t = t.clone();
                tokio::spawn(async move {
                    let mut job = job("tiny.en");
                    job.audio = Audio::Samples(super::testing::staircase(seconds));
                    t.run(job).await
                })
            })
            .collect();
        while t.queue.waiting() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(held);
        for clip in clips {
            // The engine's first call of two at once waits until another call is heard: one
            // after the other, this would take its 30 s.
            let heard = tokio::time::timeout(Duration::from_secs(20), clip)
                .await
                .expect("both heard at once")
                .unwrap()
                .unwrap();
            assert_eq!(heard.raw_text, "s0");
        }
        assert_eq!(
            *log.lock().unwrap(),
            ["s0: 1 chunk, 2 at once", "s0: 1 chunk, 2 at once"]
        );
        assert_eq!(t.queue.free_slots(), 1);
        // Alone, a short clip has every thread.
        let mut alone = job("tiny.en");
        alone.audio = Audio::Samples(super::testing::staircase(3));
        t.run(alone).await.unwrap();
        assert_eq!(log.lock().unwrap()[2], "s0: 1 chunk, 1 at once");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_that_is_dropped_stops_its_engine_and_frees_its_slot() {
        use super::testing::Endless;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (started, cancelled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let engine = Arc::new(Endless {
            started: started.clone(),
            cancelled: cancelled.clone(),
        });
        let (_dir, t) = transcriber(vec![engine], 1);
        let running = tokio::spawn({
            let t = t.clone();
            async move { t.run(job("tiny.en")).await }
        });
        while started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The client leaves: its future is dropped, the engine sees the cancel and returns.
        running.abort();
        let _ = running.await;
        tokio::time::timeout(Duration::from_secs(10), async {
            while t.queue.free_slots() == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the slot was not given back");
        assert_eq!(cancelled.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn unknown_language_codes_are_refused_before_any_audio() {
        let (engine, _release) = gate("whisper", vec!["tiny", "tiny.en"]);
        let (_dir, t) = transcriber(vec![engine], 1);
        for model in ["tiny", "tiny.en"] {
            let mut bad = options(model);
            bad.language_hints = vec!["de".into(), "xx".into()];
            let err = t.plan(bad, false, Caller::Api).await.err().unwrap();
            assert_eq!(err.to_string(), "Unknown language code 'xx'");
        }
        let mut german = options("tiny");
        german.language = Some("DE".into());
        assert!(t.plan(german.clone(), false, Caller::Api).await.is_ok());
        german.model = Some("tiny.en".into());
        let err = t
            .plan(german.clone(), false, Caller::Api)
            .await
            .err()
            .unwrap();
        // The gate engine's models count as installed: the message names the one that can.
        assert_eq!(
            err.to_string(),
            "Engine 'whisper' does not support the language 'de' with model 'tiny.en'; installed models that can: tiny"
        );
        // `auto` detects; a region tag means its language.
        german.language = Some("auto".into());
        assert!(t.plan(german.clone(), false, Caller::Api).await.is_ok());
        german.language = Some("en-US".into());
        let planned = t.plan(german, false, Caller::Api).await.unwrap();
        assert_eq!(planned.options.language.as_deref(), Some("en"));
    }

    /// A dictation's caller, with no application.
    fn dictated() -> Caller {
        Caller::Dictation(super::super::Dictated {
            id: uuid::Uuid::new_v4(),
            started_at: chrono::Utc::now(),
            app_name: None,
            app_bundle_id: None,
            app_url: None,
        })
    }

    #[tokio::test]
    async fn a_dictation_in_a_language_its_model_does_not_know_is_heard_as_the_model_can() {
        let (engine, _release) = gate("whisper", vec!["tiny.en"]);
        let (_dir, t) = transcriber(vec![engine], 1);
        let mut german = options("tiny.en");
        german.language_hints = vec!["de".into(), "en".into()];
        let dictated = dictated();
        let planned = t.plan(german, false, dictated).await.unwrap();
        assert!(planned.options.language_hints.is_empty());
        assert_eq!(planned.options.language, None);
    }

    #[tokio::test]
    async fn a_dictation_transcribes_when_its_model_cannot_translate() {
        let (engine, _release) = gate("whisper", vec!["tiny.en"]);
        let (_dir, t) = transcriber(vec![engine], 1);
        let mut translate = options("tiny.en");
        translate.task = Some(Task::Translate);
        let err = t.plan(translate.clone(), false, Caller::Api).await.err();
        assert!(matches!(
            err,
            Some(TranscribeError::CannotTranslate("tiny.en"))
        ));
        let dictated = dictated();
        let planned = t.plan(translate, false, dictated).await.ok().unwrap();
        assert_eq!(planned.options.task, None);
    }
}
