//! An engine for tests, registered in one row of the registry (under `cfg(test)`) and nowhere
//! else: it shows that a new engine reaches `GET /v1/models`, the CLI's `--engine`, `doctor`
//! and transcription through its folder and its row alone. It says how long the audio was.
//! Its twin `ELSEWHERE` is an engine whose runtime cannot run on this machine: its models are
//! listed as unavailable, and never downloaded.

use std::io;
use std::sync::Arc;

use super::models::ModelDir;
use super::models::catalog::Capabilities;
use super::registry::{DownloadSource, EngineKind, ModelCheck, ModelProblem};
use super::{Engine, EngineError, EngineOutput, EngineRequest, ModelOffer, ModelSpec, Segment};

const ENGINE: &str = "example";
/// The one file a model of this engine has.
const FILE: &str = "example.txt";

static MODELS: [ModelSpec; 1] = [ModelSpec {
    id: "example-clock",
    engine: ENGINE,
    name: "Example clock",
    size_description: "1 KB",
    language_count: 1,
    capabilities: Capabilities {
        translate: false,
        prompt: false,
        word_timestamps: false,
        live: false,
    },
}];

pub const KIND: EngineKind = EngineKind {
    id: ENGINE,
    about: "an engine for tests: says how long the audio was",
    credit: ("Verbatim", ""),
    models: || MODELS.iter().collect(),
    download_source: DownloadSource::ModelServer,
    is_installed: |models, spec| models.path().join(spec.id).join(FILE).is_file(),
    install_path: |models, spec| models.path().join(spec.id),
    remove: |models, spec| match std::fs::remove_dir_all(models.path().join(spec.id)) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    },
    download: |models, spec, _base_url, progress| {
        let folder = models.path().join(spec.id);
        let written = std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::write(folder.join(FILE), spec.name));
        written.map_err(|err| super::models::DownloadError::Io {
            dir: folder.display().to_string(),
            cause: err.to_string(),
        })?;
        progress(1, 1);
        Ok(())
    },
    check,
    unavailable: || None,
    build: |models, _threads| -> Arc<dyn Engine> {
        Arc::new(ExampleEngine {
            models,
            kind: &KIND,
        })
    },
};

static ELSEWHERE_MODELS: [ModelSpec; 1] = [ModelSpec {
    id: "elsewhere-clock",
    engine: "elsewhere",
    ..MODELS[0]
}];

/// The example engine as built for another machine.
pub const ELSEWHERE: EngineKind = EngineKind {
    id: "elsewhere",
    about: "an engine for tests whose runtime cannot run here",
    credit: ("Verbatim", ""),
    models: || ELSEWHERE_MODELS.iter().collect(),
    unavailable: || Some("its runtime is built for another machine".into()),
    build: |models, _threads| -> Arc<dyn Engine> {
        Arc::new(ExampleEngine {
            models,
            kind: &ELSEWHERE,
        })
    },
    ..KIND
};

fn check(models: &ModelDir, spec: &'static ModelSpec) -> ModelCheck {
    let file = models.path().join(spec.id).join(FILE);
    if file.is_file() {
        Ok(format!(
            "{} at {} (the example engine)",
            spec.id,
            file.display()
        ))
    } else {
        Err(ModelProblem {
            detail: format!("{} is missing", file.display()),
            fix: format!("verbatim models download {}", spec.id),
        })
    }
}

struct ExampleEngine {
    models: ModelDir,
    kind: &'static EngineKind,
}

impl Engine for ExampleEngine {
    fn id(&self) -> &'static str {
        self.kind.id
    }

    fn models(&self) -> Vec<ModelOffer> {
        (self.kind.models)()
            .into_iter()
            .map(|spec| ModelOffer {
                spec,
                downloaded: (self.kind.is_installed)(&self.models, spec),
                loaded: false,
            })
            .collect()
    }

    fn transcribe(
        &self,
        model: &str,
        request: &EngineRequest<'_>,
    ) -> Result<EngineOutput, EngineError> {
        if !(self.kind.models)().iter().any(|spec| spec.id == model) {
            return Err(EngineError::UnknownModel(model.into()));
        }
        let segments = request
            .chunks
            .iter()
            .map(|chunk| {
                let (start, end) = (chunk.start as f64 / 16_000.0, chunk.end as f64 / 16_000.0);
                Segment::new(start, end, format!("{:.1} seconds", end - start))
            })
            .collect();
        Ok(EngineOutput::of_segments(segments, Some("en".into())))
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use clap::Parser;
    use tower::ServiceExt;

    use crate::app::{App, Backends, Config};

    fn ids(list: &serde_json::Value) -> String {
        let models = list["models"].as_array().into_iter().flatten();
        models
            .map(|m| m["id"].to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
    use crate::discovery::DataDir;

    /// One row in the registry is all it takes: the API lists the engine's model, the CLI takes
    /// its id as `--engine` (and names it among the values), `doctor` checks its model with the
    /// engine's own check, and a request with `engine=example` is heard by it.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_engine_of_one_row_reaches_the_api_the_cli_and_doctor() {
        let tmp = tempfile::tempdir().unwrap();
        let data_dir = DataDir::at(tmp.path().join("data"));
        let mut config = Config::new(data_dir.clone(), Backends::Real, false);
        config.models = super::ModelDir::new(tmp.path().join("models"));
        let app = App::build(config).unwrap();
        let port = 8978;
        let get = |uri: &str| {
            Request::get(uri)
                .header("host", format!("127.0.0.1:{port}"))
                .body(Body::empty())
                .unwrap()
        };
        let router = crate::api::router(app.clone(), port);
        let answer = router.clone().oneshot(get("/v1/models")).await.unwrap();
        assert_eq!(answer.status(), 200);
        let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
            .await
            .unwrap();
        let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let example = list["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == "example-clock")
            .unwrap_or_else(|| panic!("no example model among {}", ids(&list)));
        assert_eq!(example["engine"], "example");
        assert_eq!(example["downloaded"], false);

        let cli = crate::cli::Cli::try_parse_from([
            "verbatim",
            "transcribe",
            "a.wav",
            "--engine",
            "example",
        ]);
        assert!(cli.is_ok(), "{cli:?}");
        let refused =
            crate::cli::Cli::try_parse_from(["verbatim", "transcribe", "a.wav", "--engine", "x"])
                .unwrap_err()
                .to_string();
        assert!(refused.contains("example"), "{refused}");

        app.transcriber
            .download_model("example-clock")
            .await
            .unwrap();
        let transcriber = app.transcriber.clone();
        tokio::task::spawn_blocking(move || transcriber.select_model("example-clock"))
            .await
            .unwrap()
            .unwrap();
        let context = crate::doctor::Context {
            data_dir,
            models: app.models.clone(),
            port: None,
            desktop: crate::dictation::desktop::DesktopEnv::from_env(),
            runtime_dir: None,
            pulse_server: None,
        };
        let report = tokio::task::spawn_blocking(move || crate::doctor::run(&context))
            .await
            .unwrap();
        let model = report.checks.iter().find(|c| c.name == "model").unwrap();
        assert_eq!(model.status, crate::doctor::Status::Ok, "{model:?}");
        assert!(model.detail.contains("the example engine"), "{model:?}");

        let mut wav = std::io::Cursor::new(Vec::new());
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 16_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut writer = hound::WavWriter::new(&mut wav, spec).unwrap();
        for n in 0..32_000 {
            writer.write_sample(((n % 40) * 500) as i16).unwrap();
        }
        writer.finalize().unwrap();
        let wav = wav.into_inner();
        let boundary = "b0undary";
        let mut form = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"engine\"\r\n\r\nexample\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nexample-clock\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"vad\"\r\n\r\nfalse\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\
             Content-Type: audio/wav\r\n\r\n"
        )
        .into_bytes();
        form.extend_from_slice(&wav);
        form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let upload = Request::post("/v1/transcribe")
            .header("host", format!("127.0.0.1:{port}"))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(form))
            .unwrap();
        let answer = router.oneshot(upload).await.unwrap();
        let status = answer.status();
        let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let transcript: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(transcript["engine"], "example", "{transcript}");
        assert!(
            transcript["text"]
                .as_str()
                .unwrap_or_default()
                .contains("2.0 seconds"),
            "{transcript}"
        );
    }

    /// An engine that cannot run on this machine is listed with the reason and its models are
    /// refused for download, by the API (409) and by the catalog the CLI downloads through,
    /// with nothing written.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_engine_that_cannot_run_here_is_listed_unavailable_and_never_downloaded() {
        let tmp = tempfile::tempdir().unwrap();
        let mut config = Config::new(DataDir::at(tmp.path().join("data")), Backends::Real, false);
        config.models = super::ModelDir::new(tmp.path().join("models"));
        let models = config.models.clone();
        let app = App::build(config).unwrap();
        let port = 8978;
        let request = |method: &str, uri: &str| {
            Request::builder()
                .method(method)
                .uri(uri)
                .header("host", format!("127.0.0.1:{port}"))
                .body(Body::empty())
                .unwrap()
        };
        let router = crate::api::router(app.clone(), port);
        let answer = router
            .clone()
            .oneshot(request("GET", "/v1/models"))
            .await
            .unwrap();
        let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
            .await
            .unwrap();
        let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let entries = list["models"].as_array().unwrap();
        let elsewhere = entries
            .iter()
            .find(|m| m["id"] == "elsewhere-clock")
            .unwrap();
        assert_eq!(
            elsewhere["unavailable"], "its runtime is built for another machine",
            "{elsewhere}"
        );
        let example = entries.iter().find(|m| m["id"] == "example-clock").unwrap();
        assert!(example.get("unavailable").is_none(), "{example}");

        let answer = router
            .oneshot(request("POST", "/page/models/download?id=elsewhere-clock"))
            .await
            .unwrap();
        let status = answer.status();
        let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
            .await
            .unwrap();
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 409, "{body}");
        assert!(
            body.contains("cannot run on this machine: its runtime is built for another machine"),
            "{status} {body}"
        );
        let spec = crate::engine::catalog::find_model("elsewhere-clock").unwrap();
        let refused = crate::engine::catalog::download_model(&models, spec, "", &mut |_, _| {});
        assert!(
            matches!(
                refused,
                Err(crate::engine::models::DownloadError::Unavailable { .. })
            ),
            "{refused:?}"
        );
        assert!(!tmp.path().join("models").join("elsewhere-clock").exists());
    }
}
