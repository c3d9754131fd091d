//! Shared test support: an in-process server on 127.0.0.1:0, raw HTTP over TCP, and the
//! real `verbatim` binary started with its own data folder.
#![allow(dead_code)]

pub mod engine;
pub mod flac;
pub mod mutate;
pub mod probe;
pub mod pulse;
pub mod webm;
pub mod xvfb;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;
use verbatim::app::{App, Backends, Config};
use verbatim::discovery::{DataDir, Discovery};
use verbatim::engine::models::ModelDir;

/// An application on a temporary data folder.
pub struct TestApp {
    pub dir: tempfile::TempDir,
    pub app: Arc<App>,
}

impl TestApp {
    pub fn new() -> TestApp {
        Self::with_flag(false)
    }

    pub fn requiring_token() -> TestApp {
        Self::with_flag(true)
    }

    fn with_flag(require_token: bool) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let models = ModelDir::new(dir.path().join("models"));
        Self::build(dir, Backends::Simulated, require_token, models, None)
    }

    /// A sim-mode app on a scenario written from `toml` (see [`write_scenario`]).
    pub fn with_scenario(toml: &str) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let scenario = write_scenario(dir.path(), toml);
        let models = ModelDir::new(dir.path().join("models"));
        Self::build(dir, Backends::Simulated, false, models, Some(scenario))
    }

    /// An app on the real backends whose models folder is `models`.
    pub fn real(models: ModelDir) -> TestApp {
        Self::build(
            tempfile::tempdir().unwrap(),
            Backends::Real,
            false,
            models,
            None,
        )
    }

    fn build(
        dir: tempfile::TempDir,
        backends: Backends,
        require_token: bool,
        models: ModelDir,
        scenario: Option<PathBuf>,
    ) -> TestApp {
        let data_dir = DataDir::at(dir.path().join("data"));
        if matches!(backends, Backends::Real) {
            seed_engine_threads(data_dir.root());
        }
        let app = App::build(Config {
            data_dir,
            backends,
            require_token,
            models,
            scenario,
            sim_clock: None,
            realtime_idle: verbatim::realtime::IDLE_TIMEOUT,
        })
        .unwrap();
        TestApp { dir, app }
    }

    /// Selects a model and its engine as `verbatim models select` does.
    pub fn select(&self, model: &str) {
        use verbatim::store::{PrefValue, preferences};
        let engine = verbatim::engine::catalog::find_model(model).map_or("whisper", |m| m.engine);
        let store = &self.app.store;
        store
            .set_pref(
                &preferences::SELECTED_ENGINE,
                &PrefValue::Text(engine.into()),
            )
            .unwrap();
        store
            .set_pref(&preferences::SELECTED_MODEL, &PrefValue::Text(model.into()))
            .unwrap();
    }

    pub fn token(&self) -> String {
        self.app.token().unwrap()
    }

    /// The real router for a server on `PORT`.
    pub fn router(&self) -> Router {
        verbatim::api::router(self.app.clone(), PORT)
    }
}

/// A scenario whose microphone says corpus clip `clip` (no system audio) to the replay engine
/// with tiny.en installed and selected; `engine` adds lines to its `[engine]` table.
pub fn microphone_scenario(clip: &str, engine: &str) -> String {
    format!(
        "[microphone]\nsample_rate = 44100\nitems = [{{ clip = \"{clip}\" }}]\n\n\
         [system_audio]\npresent = false\n\n\
         [engine]\nselected_model = \"tiny.en\"\n{engine}\n\n\
         [models]\n\"tiny.en\" = \"present\"\n"
    )
}

/// Writes a scenario file into `dir` that plays clips from the source tree's corpus.
pub fn write_scenario(dir: &Path, toml: &str) -> PathBuf {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    write_scenario_on(dir, toml, &corpus)
}

/// [`write_scenario`] playing from the corpus folder `corpus`.
pub fn write_scenario_on(dir: &Path, toml: &str, corpus: &Path) -> PathBuf {
    let path = dir.join("scenario.toml");
    std::fs::write(
        &path,
        format!("corpus = {:?}\n{toml}", corpus.display().to_string()),
    )
    .unwrap();
    path
}

/// A corpus of the source corpus's clip `id` alone (its audio, its entry, its recordings) in
/// `dir/corpus`: a sim server over it starts without reading and indexing every clip, a
/// quarter of its start-up time, for tests that start servers by the hundred.
pub fn one_clip_corpus(dir: &Path, id: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let corpus = dir.join("corpus");
    let manifest = std::fs::read_to_string(source.join("clips.toml")).unwrap();
    let entry = manifest
        .split("[[clips]]")
        .find(|entry| entry.contains(&format!("id = {id:?}")))
        .unwrap_or_else(|| panic!("no clip {id} in corpus/clips.toml"));
    std::fs::create_dir_all(corpus.join("clips")).unwrap();
    std::fs::write(corpus.join("clips.toml"), format!("[[clips]]{entry}")).unwrap();
    let file = entry
        .lines()
        .find_map(|line| line.strip_prefix("file = "))
        .map(|quoted| quoted.trim_matches('"'))
        .unwrap();
    std::fs::copy(source.join(file), corpus.join(file)).unwrap();
    for recorded in std::fs::read_dir(source.join("recordings")).unwrap() {
        let mut recording = verbatim_sim::Recording::load(&recorded.unwrap().path()).unwrap();
        recording.clips.retain(|clip, _| clip == id);
        recording.save(&corpus.join("recordings")).unwrap();
    }
    corpus
}

/// One JSON request to a spawned server; the status and the parsed body (Null when not JSON).
pub fn http_json(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> (u16, serde_json::Value) {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let (status, _, text) = raw_http(
        port,
        &format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

/// Starts `verbatim serve --sim` with its data in `home/data` on a scenario written from `toml`.
pub fn serve_scenario(home: &Path, toml: &str) -> SpawnedServer {
    serve_scenario_with(home, toml, &[])
}

/// [`serve_scenario`] with more arguments for `serve`.
pub fn serve_scenario_with(home: &Path, toml: &str, args: &[&str]) -> SpawnedServer {
    let file = write_scenario(home, toml);
    let mut all = vec!["--sim", "--scenario", file.to_str().unwrap()];
    all.extend_from_slice(args);
    SpawnedServer::start(&home.join("data"), &all)
}

/// What sim mode answers for a corpus clip: the recorded tiny.en text with numbers normalised.
pub fn recorded_text(id: &str) -> String {
    recorded_text_of("tiny.en", id)
}

/// What sim mode answers for a corpus clip on `model`: its recorded text, numbers normalised.
pub fn recorded_text_of(model: &str, id: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/recordings/{model}.json"));
    let recording = verbatim_sim::Recording::load(&path).unwrap();
    verbatim::transcribe::numbers::normalize_numbers(&recording.clips[id].text)
}

/// Sends eight `POST path` at once and checks that exactly one succeeds and the rest are 409.
pub fn assert_one_of_concurrent_posts_wins(port: u16, path: &str) {
    let answers: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(move || http_json(port, "POST", path, None).0))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let count = |code: u16| answers.iter().filter(|&&c| c == code).count();
    assert_eq!((count(200), count(409)), (1, 7), "{answers:?}");
}

/// Polls `path` until its `status` is `completed` or `failed` (at most `limit`).
pub fn poll_until_done(port: u16, path: &str, limit: Duration) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    loop {
        let (code, body) = http_json(port, "GET", path, None);
        assert_eq!(code, 200, "{path}: {body}");
        if matches!(body["status"].as_str(), Some("completed" | "failed")) {
            return body;
        }
        assert!(Instant::now() < deadline, "{path} did not end: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `command` (the real binary, say) started with an open file limit of `soft` / `hard`.
pub fn with_file_limit(mut command: Command, soft: u64, hard: u64) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    command
}

/// A test that cannot run here because something it needs is missing (a model, an SDK, a
/// sound server, a display): under `CI` (which `.ci/run` sets) that is a failure; otherwise
/// the skip is noted on standard error and counted in `$VERBATIM_TEST_SKIPS` (a file
/// `scripts/test` reads to print how many tests were skipped and why).
pub fn skip(reason: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{reason}: run ./scripts/test, which installs and starts what the tests need");
    }
    note_skip(reason);
}

/// A test that cannot run on this machine whatever is installed (no systemd to verify a unit
/// with, say): noted and counted as [`skip`] does, never a failure.
pub fn note_skip(reason: &str) {
    eprintln!("skipped: {reason}");
    if let Some(path) = std::env::var_os("VERBATIM_TEST_SKIPS") {
        use std::io::Write;
        let test = std::thread::current().name().unwrap_or("?").to_owned();
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(file, "{test}: {reason}");
        }
    }
}

/// The folder holding the real tiny.en model that `scripts/test` installs. None (the test
/// is skipped with a note) when run outside that script; under CI a missing model fails.
pub fn test_models() -> Option<ModelDir> {
    let Some(dir) = std::env::var_os("VERBATIM_TEST_MODELS") else {
        skip("VERBATIM_TEST_MODELS is not set");
        return None;
    };
    let models = ModelDir::new(dir);
    models.adopt_flat_files().unwrap();
    if installed(&models, "tiny.en") {
        Some(models)
    } else {
        skip("VERBATIM_TEST_MODELS does not hold tiny.en");
        None
    }
}

/// Whether `models` holds the whisper model `id`.
pub fn installed(models: &ModelDir, id: &str) -> bool {
    models.is_installed(verbatim::engine::models::whisper_model(id).unwrap())
}

/// Where `models` keeps the weights of the whisper model `id`.
pub fn weights(models: &ModelDir, id: &str) -> PathBuf {
    models.weights_path(verbatim::engine::models::whisper_model(id).unwrap())
}

/// The test models folder when it also holds the multilingual base model (which `scripts/test`
/// installs); None, with a note, otherwise.
pub fn test_models_with_base() -> Option<ModelDir> {
    let models = test_models()?;
    if installed(&models, "base") {
        Some(models)
    } else {
        skip("VERBATIM_TEST_MODELS does not hold the base model");
        None
    }
}

/// The test models folder when it also holds moonshine-tiny and ONNX Runtime (which
/// `scripts/test` installs); None, with a note, otherwise (under CI a missing model fails).
pub fn test_models_with_moonshine() -> Option<ModelDir> {
    let models = test_models()?;
    if models.path().join("moonshine-tiny/tokenizer.bin").is_file() {
        Some(models)
    } else {
        skip("VERBATIM_TEST_MODELS does not hold moonshine-tiny");
        None
    }
}

/// The test models folder when it also holds moonshine-base (which `scripts/test` installs);
/// None, with a note, otherwise (under CI a missing model fails).
#[allow(dead_code)]
pub fn test_models_with_moonshine_base() -> Option<ModelDir> {
    let models = test_models_with_moonshine()?;
    if models.path().join("moonshine-base/tokenizer.bin").is_file() {
        Some(models)
    } else {
        skip("VERBATIM_TEST_MODELS does not hold moonshine-base");
        None
    }
}

/// Speaks `text` with espeak-ng into a WAV file in `dir`.
pub fn speak(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(format!("{name}.wav"));
    let status = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "140", "-w"])
        .arg(&path)
        .arg(text)
        .status()
        .expect("espeak-ng is installed by scripts/test");
    assert!(status.success());
    path
}

/// WAV bytes of the corpus's real recording `id` said over and over for `seconds`: long speech
/// for tests that need the engine busy for a while.
pub fn long_speech_wav(id: &str, seconds: usize) -> Vec<u8> {
    let corpus = verbatim_sim::Corpus::load(&verbatim_sim::Corpus::source_dir()).unwrap();
    let clip = corpus.clip(id).unwrap();
    wav_bytes(
        clip.samples
            .iter()
            .cycle()
            .take(seconds * 16_000)
            .map(|s| (s * 32_767.0) as i16),
    )
}

/// 16 kHz mono 16-bit WAV bytes of `samples`.
pub fn wav_bytes(samples: impl IntoIterator<Item = i16>) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).unwrap();
    for sample in samples {
        writer.write_sample(sample).unwrap();
    }
    writer.finalize().unwrap();
    bytes.into_inner()
}

/// Word error rate of `hypothesis` against `reference` (case and punctuation ignored).
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    verbatim_sim::word_error_rate(reference, hypothesis)
}

/// Checks a `words` array of an answer: the words spell `expected` (whitespace aside), in order,
/// each within `[0, duration]` with start <= end, none before the one before has ended.
pub fn assert_words_spell(words: &[serde_json::Value], expected: &str, duration: f64) {
    let said: Vec<&str> = words.iter().map(|w| w["word"].as_str().unwrap()).collect();
    assert_eq!(
        said.join(" "),
        expected.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let mut last_end = 0.0;
    for word in words {
        let (start, end) = (
            word["start"].as_f64().unwrap(),
            word["end"].as_f64().unwrap(),
        );
        assert!(
            last_end <= start && start <= end && end <= duration,
            "{word}"
        );
        last_end = end;
    }
}

/// Snapshots go to the top-level `snapshots/` folder, named without the module.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// The port in-process requests claim to address (their Host header).
pub const PORT: u16 = 8978;

/// A request builder with a valid Host header.
pub fn request(method: &str, path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("127.0.0.1:{PORT}"))
}

/// A multipart/form-data request to `path` with text fields and, when given, a `file` part
/// `(file name, bytes)`.
pub fn multipart(
    path: &str,
    fields: &[(&str, &str)],
    file: Option<(&str, &[u8])>,
) -> Request<Body> {
    const BOUNDARY: &str = "verbatim-test-boundary";
    let body = verbatim::conformance::http::multipart_body(BOUNDARY, fields, file);
    request("POST", path)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(Body::from(body))
        .unwrap()
}

/// Sends `request` through `router` in process; returns status, headers and JSON body (Null if empty).
pub async fn send(
    router: &Router,
    request: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, serde_json::Value) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let json = if bytes.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    };
    (status, headers, json)
}

/// A server running in this process on an ephemeral port, stopped on drop.
pub struct RunningServer {
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl RunningServer {
    pub async fn start(router_for_port: impl FnOnce(u16) -> Router) -> RunningServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = router_for_port(port);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            verbatim::server::serve(listener, router, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        RunningServer {
            port,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A raw HTTP/1.1 exchange with `Connection: close`; returns (status, head, body).
pub fn raw_http(port: u16, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> (u16, String, String) {
    let text = String::from_utf8_lossy(raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

/// The `verbatim` binary under test.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_verbatim"))
}

/// A `verbatim` command with its own data folder and no inherited token.
pub fn verbatim(home: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env("VERBATIM_HOME", home)
        .env_remove("VERBATIM_API_TOKEN")
        .env_remove("RUST_LOG");
    cmd
}

/// Inference threads of every real engine the suite starts. The suite runs two tests at once on
/// two cores, and whisper.cpp's (and ONNX Runtime's) threads wait for each other by spinning:
/// the same test ran in 2.1 s alone and in 23 s beside a copy of itself with two threads per
/// engine. With one thread each, two engines share the two cores without waiting on each other.
pub const ENGINE_THREADS: usize = 1;

/// Stores `whisperThreads` = [`ENGINE_THREADS`] in the data folder `home`, for a server or
/// command there that runs a real engine.
pub fn seed_engine_threads(home: &Path) {
    use verbatim::store::{PrefValue, preferences};
    let store = verbatim::discovery::DataDir::at(home).open_store().unwrap();
    store
        .set_pref(
            &preferences::WHISPER_THREADS,
            &PrefValue::Int(ENGINE_THREADS as i64),
        )
        .unwrap();
}

/// The real binary serving the models in `models` with `model` selected (as `verbatim models
/// select` does), data in `home`; `args` are added to `serve`.
pub fn serve_model(home: &Path, models: &ModelDir, model: &str, args: &[&str]) -> SpawnedServer {
    let selected = verbatim(home)
        .env("VERBATIM_MODELS_DIR", models.path())
        .args(["models", "select", model])
        .output()
        .unwrap();
    assert!(selected.status.success(), "{selected:?}");
    SpawnedServer::start_with_env(home, args, &[("VERBATIM_MODELS_DIR", models.path())])
}

/// The real binary serving on port 0 with data folder `home`. Its standard error, when piped, is
/// read as it comes (a server logs a line per request and must never block on a full pipe).
pub struct SpawnedServer {
    pub child: Child,
    pub discovery: Discovery,
    pub home: PathBuf,
    log: Option<std::thread::JoinHandle<String>>,
}

impl SpawnedServer {
    pub fn start(home: &Path, extra_args: &[&str]) -> SpawnedServer {
        Self::start_with_env(home, extra_args, &[])
    }

    pub fn start_with_env(
        home: &Path,
        extra_args: &[&str],
        env: &[(&str, &Path)],
    ) -> SpawnedServer {
        let mut command = verbatim(home);
        for (key, value) in env {
            command.env(key, value);
        }
        if env.iter().any(|(key, _)| *key == "VERBATIM_MODELS_DIR") {
            seed_engine_threads(home);
        }
        let child = command
            .args(["serve", "--port", "0"])
            .args(extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self::adopt(child, home)
    }

    /// A server started by the caller: waits for its discovery file and starts reading its
    /// standard error if that is piped.
    pub fn adopt(mut child: Child, home: &Path) -> SpawnedServer {
        let log = child.stderr.take().map(|mut stderr| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = stderr.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
        });
        let discovery = wait_for_discovery(home, child.id());
        SpawnedServer {
            child,
            discovery,
            home: home.to_path_buf(),
            log,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn signal(&self, signal: i32) {
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Waits up to 15 s for the process to exit.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server and reports whether its log has a line containing `needle`.
    pub fn stderr_line_contains(&mut self, needle: &str) -> bool {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr().lines().any(|l| l.contains(needle))
    }

    /// Everything the server wrote on standard error; waits for it to close (the server exits).
    pub fn stderr(&mut self) -> String {
        self.log
            .take()
            .map(|reader| reader.join().unwrap())
            .unwrap_or_default()
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls until the discovery file names `pid` (the server is listening), up to 20 s.
pub fn wait_for_discovery(home: &Path, pid: u32) -> Discovery {
    let path = home.join("api-discovery.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(found) = serde_json::from_str::<Discovery>(&text)
            && found.pid == pid
        {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no discovery file for pid {pid} at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A port on which nothing listens (bound, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A request with a JSON body and the JSON content type.
pub fn json_request(method: &str, path: &str, body: &serde_json::Value) -> Request<Body> {
    request(method, path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// Sends a request without a body (`body` None) or with a JSON body; returns status and JSON.
pub async fn call(
    router: &Router,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (StatusCode, serde_json::Value) {
    let req = match body {
        Some(json) => json_request(method, path, &json),
        None => request(method, path).body(Body::empty()).unwrap(),
    };
    let (status, _, json) = send(router, req).await;
    (status, json)
}

/// A settings backup with every category filled, `history` entries from the last days, one
/// plugin the test registry offers (`punctuation`) and one it does not (`gone`).
pub fn sample_backup(history: usize) -> serde_json::Value {
    use serde_json::json;
    let now = chrono::Utc::now();
    let entries: Vec<serde_json::Value> = (0..history)
        .map(|i| {
            let at = now - chrono::Duration::seconds(60 * i as i64 + 30);
            json!({
                "id": uuid::Uuid::new_v4().to_string().to_uppercase(),
                "text": format!("Entrée numéro {i} : le café est prêt"),
                "rawText": format!("entrée numéro {i} le café est prêt"),
                "timestamp": at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                "appName": if i % 2 == 0 { "Éditeur" } else { "Terminal" },
                "appBundleId": "org.gnome.TextEditor",
                "duration": 1.25 + i as f64 / 7.0,
                "language": "fr",
                "engine": "whisper",
                "model": "base",
                "wordsCount": 9
            })
        })
        .collect();
    json!({
        "schemaVersion": 1,
        "exportedAt": "2026-04-13T10:15:00Z",
        "appVersion": "0.1.0",
        "workflows": [
            {
                "id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "isEnabled": true,
                "priority": 0, "bundleIdentifiers": ["org.mozilla.Thunderbird"], "urlPatterns": [],
                "languageMode": "multiple", "languageHints": ["de", "en"]
            },
            {
                "id": "7C9E6679-7425-40DE-944B-E07FC1F90AE7", "name": "Docs", "isEnabled": false,
                "priority": 4, "bundleIdentifiers": [], "urlPatterns": ["docs.example.org/*"],
                "inputLanguage": "fr", "languageMode": "exact", "languageHints": [],
                "translationTargetLanguage": "en"
            }
        ],
        "dictionaryEntries": [
            {"type": "term", "term": "Kubernetes", "isEnabled": true, "ctcMinSimilarity": 0.75},
            {"type": "term", "term": "Zürich", "isEnabled": false},
            {"type": "correction", "original": "teh", "replacement": "the", "caseSensitive": false, "isEnabled": true}
        ],
        "snippets": [{"trigger": "my address", "text": "1 Rue de la Paix, Paris", "isEnabled": true}],
        "promptActions": [{
            "id": "16FD2706-8BAF-433B-82EB-8C7FADA847DA", "name": "Summarise",
            "prompt": "Summarise in three bullet points.", "isEnabled": true
        }],
        "profiles": [{
            "id": "886313E1-3B8A-5372-9B90-0C9AEE199E5D", "name": "Terminal", "isEnabled": true,
            "priority": 1, "bundleIdentifiers": ["org.gnome.Terminal"], "urlPatterns": [],
            "engine": "whisper", "model": "base.en"
        }],
        "hotkeys": [
            {"slot": "dictation.toggle", "shortcut": "Ctrl+Alt+Space"},
            {"slot": "recorder.toggle", "shortcut": "Ctrl+Alt+R"}
        ],
        "plugins": [
            {"id": "punctuation", "version": "1.2.0", "isEnabled": true},
            {"id": "gone", "version": "0.1.0", "isEnabled": true}
        ],
        "history": entries,
        "updateChannel": "beta",
        "preferences": {"historyRetentionDays": 365}
    })
}

/// A plugin registry on 127.0.0.1: `GET /plugins/{id}/{version}` answers metadata for every
/// plugin but `gone` (404). Returns the server and its base URL.
pub async fn start_registry() -> (RunningServer, String) {
    use axum::extract::Path;
    use axum::routing::get;
    async fn metadata(
        Path((id, version)): Path<(String, String)>,
    ) -> Result<axum::Json<serde_json::Value>, StatusCode> {
        if id == "gone" {
            return Err(StatusCode::NOT_FOUND);
        }
        Ok(axum::Json(serde_json::json!({
            "id": id, "version": version, "name": format!("The {id} plugin"),
            "description": "Adds punctuation.", "downloadUrl": format!("https://plugins.test/{id}-{version}.zip"),
            "sha256": "0".repeat(64)
        })))
    }
    let server =
        RunningServer::start(|_| Router::new().route("/plugins/{id}/{version}", get(metadata)))
            .await;
    let url = format!("http://127.0.0.1:{}", server.port);
    (server, url)
}

/// The events of a streamed answer (`text/event-stream`, status 200), as (name, data as JSON).
#[allow(dead_code)]
pub async fn sse_events(app: &TestApp, req: Request<Body>) -> Vec<(String, serde_json::Value)> {
    let response = app.router().oneshot(req).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut name = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = value.to_string();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data = value.to_string();
                }
            }
            (name, serde_json::from_str(&data).unwrap())
        })
        .collect()
}

/// Reads the server-sent events of `GET path` on a running server as they come, on a thread of
/// its own: each `(event name, data as JSON)` arrives on the receiver. Returns once the answer's
/// head has come (the server is listening for events by then).
#[allow(dead_code)]
pub fn sse_follow(port: u16, path: &str) -> std::sync::mpsc::Receiver<(String, serde_json::Value)> {
    use std::io::BufRead;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut head = String::new();
    while reader.read_line(&mut head).unwrap() > 2 && !head.ends_with("\r\n\r\n") {}
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (events, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut name = String::new();
        for line in reader.lines() {
            let Ok(line) = line else { return };
            if let Some(value) = line.strip_prefix("event: ") {
                name = value.to_string();
            } else if let Some(value) = line.strip_prefix("data: ")
                && let Ok(data) = serde_json::from_str(value)
                && events.send((std::mem::take(&mut name), data)).is_err()
            {
                return;
            }
        }
    });
    received
}

/// The next event of `events` named `name` within `within`, skipping others (panics on none).
#[allow(dead_code)]
pub fn next_event(
    events: &std::sync::mpsc::Receiver<(String, serde_json::Value)>,
    name: &str,
    within: Duration,
) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok((got, data)) if got == name => return data,
            Ok(_) => {}
            Err(_) => panic!("no '{name}' event within {within:?}"),
        }
    }
}

/// [`sse_follow`] on an application in this process: the events of `GET path` as they come.
#[allow(dead_code)]
pub async fn sse_follow_app(
    app: &TestApp,
    path: &str,
) -> tokio::sync::mpsc::UnboundedReceiver<(String, serde_json::Value)> {
    let response = app
        .router()
        .oneshot(request("GET", path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut text = String::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(bytes) = frame.into_data() else {
                continue;
            };
            text.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(end) = text.find("\n\n") {
                let block: String = text.drain(..end + 2).collect();
                let name = block.lines().find_map(|l| l.strip_prefix("event: "));
                let data = block.lines().find_map(|l| l.strip_prefix("data: "));
                if let (Some(name), Some(Ok(data))) = (name, data.map(serde_json::from_str))
                    && events.send((name.to_string(), data)).is_err()
                {
                    return;
                }
            }
        }
    });
    received
}
