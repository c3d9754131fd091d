//! The page at `/`: its files inside the binary under a strict Content-Security-Policy, no
//! inline script; sign-in by one-time link (once, within two minutes) to a session of two halves,
//! an HttpOnly, SameSite=Strict cookie and a secret the page keeps in its own origin's storage,
//! neither of which counts alone; sign-out; `verbatim open`; the page itself in Debian's
//! chromium (tests/browser/page.py); and pages of other local origins that try everything a
//! browser lets them, whose server then replays all it received (tests/browser/attack.py).

use crate::common;

use std::path::Path;
use std::process::Command;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use common::{PORT, SpawnedServer, TestApp, request, send};
use http_body_util::BodyExt;
use tower::ServiceExt;
use verbatim::api::page::{ASSETS, CONTENT_SECURITY_POLICY};
use verbatim::api::security::unix_now;
use verbatim::store::sign_in::CODE_LIFETIME_SECS;

/// GET `path` with extra headers: status, headers, body.
async fn get(
    router: &Router,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut builder = request("GET", path);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(builder.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

fn header_of(headers: &HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn the_page_and_its_files_come_from_the_binary_under_a_strict_policy() {
    let app = TestApp::requiring_token();
    let router = app.router();
    let (status, headers, html) = get(&router, "/", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        header_of(&headers, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert_eq!(
        header_of(&headers, header::CONTENT_SECURITY_POLICY),
        CONTENT_SECURITY_POLICY
    );
    assert!(CONTENT_SECURITY_POLICY.starts_with("default-src 'self';"));
    assert!(!CONTENT_SECURITY_POLICY.contains("unsafe"));
    assert_eq!(header_of(&headers, header::X_FRAME_OPTIONS), "DENY");
    let html = String::from_utf8(html).unwrap();
    // No inline script or style, nothing from elsewhere: every script has a source on this server.
    let lower = html.to_lowercase();
    for (at, _) in lower.match_indices("<script") {
        let tag = &lower[at..at + lower[at..].find('>').unwrap()];
        assert!(tag.contains("src=\"/assets/"), "{tag}");
        assert!(
            lower[at..].starts_with(&format!("{tag}></script>")),
            "inline script at {at}"
        );
    }
    assert!(
        !lower.contains(" style=") && !lower.contains("<style"),
        "inline style"
    );
    assert!(
        !lower.contains("http://") && !lower.contains("https://") && !lower.contains("//cdn"),
        "a file from elsewhere"
    );
    let handlers = regex_lite_on_attributes(&lower);
    assert!(handlers.is_empty(), "inline event handlers: {handlers:?}");

    let mut bytes = html.len();
    for asset in ASSETS {
        let (status, headers, body) = get(&router, &format!("/assets/{}", asset.name), &[]).await;
        assert_eq!(status, StatusCode::OK, "{}", asset.name);
        assert_eq!(
            header_of(&headers, header::CONTENT_TYPE),
            asset.content_type
        );
        assert_eq!(
            header_of(&headers, header::CONTENT_SECURITY_POLICY),
            CONTENT_SECURITY_POLICY
        );
        assert_eq!(body, asset.body);
        assert!(
            html.contains(&format!("/assets/{}", asset.name)),
            "{} unused",
            asset.name
        );
        bytes += body.len();
    }
    assert!(bytes < 300 * 1024, "{bytes} bytes");
    // The scripts build the page from text only: API text never becomes markup.
    let script = std::str::from_utf8(verbatim::api::page::ASSETS[0].body).unwrap();
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
    ] {
        assert!(!script.contains(sink), "{sink} in app.js");
    }

    let (status, _, body) = get(&router, "/assets/nothing.js", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        error["error"]["message"],
        "Not found: GET /assets/nothing.js"
    );
    // The defences of every route stay: another host name, another site.
    let (status, _, _) = get(&router, "/", &[("origin", "https://example.com")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = get(&router, "/", &[("sec-fetch-site", "cross-site")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let forged = axum::http::Request::builder()
        .uri("/")
        .header("host", format!("evil.example:{PORT}"))
        .body(Body::empty())
        .unwrap();
    let (status, _, _) = send(&router, forged).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// Attributes of the form ` on<name>=` (inline event handlers) in `html`.
fn regex_lite_on_attributes(html: &str) -> Vec<String> {
    html.match_indices(" on")
        .filter_map(|(at, _)| {
            let name: String = html[at + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect();
            html[at + 1 + name.len()..].starts_with('=').then_some(name)
        })
        .collect()
}

/// Spends `code`: the status and the session cookie it set, if any.
async fn sign_in(router: &Router, code: &str) -> (StatusCode, Option<String>, HeaderMap) {
    let (status, headers, _) = get(router, &format!("/login?code={code}"), &[]).await;
    let cookie = headers
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_owned());
    (status, cookie, headers)
}

/// The cookie and the secret a sign-in gave, from its `Set-Cookie` and `Location`.
fn session_halves(cookie: &str, headers: &HeaderMap) -> (String, String) {
    let attributes: Vec<&str> = cookie.split("; ").collect();
    for wanted in ["Path=/", "HttpOnly", "SameSite=Strict"] {
        assert!(attributes.contains(&wanted), "{cookie}");
    }
    let cookie = attributes[0].to_owned();
    assert!(
        cookie.starts_with("verbatim_session=") && cookie.len() > 40,
        "{cookie}"
    );
    let location = header_of(headers, header::LOCATION);
    let secret = location
        .strip_prefix("/#session=")
        .unwrap_or_else(|| panic!("{location}"))
        .to_owned();
    assert!(secret.len() >= 43, "{secret}");
    assert!(!cookie.contains(&secret));
    (cookie, secret)
}

#[tokio::test]
async fn a_one_time_code_opens_a_session_that_the_cookie_alone_never_unlocks() {
    let app = TestApp::requiring_token();
    let router = app.router();
    let store = &app.app.store;
    store.add_sign_in_code("fresh-code", unix_now()).unwrap();
    let (status, cookie, headers) = sign_in(&router, "fresh-code").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (cookie, secret) = session_halves(&cookie.expect("a session cookie"), &headers);

    // Spent: the same code again, an unknown one, a late one.
    let (status, again, headers) = sign_in(&router, "fresh-code").await;
    assert_eq!((status, again), (StatusCode::UNAUTHORIZED, None));
    assert_eq!(
        header_of(&headers, header::CONTENT_SECURITY_POLICY),
        CONTENT_SECURITY_POLICY
    );
    assert_eq!(
        sign_in(&router, "made-up").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(sign_in(&router, "").await.0, StatusCode::UNAUTHORIZED);
    store
        .add_sign_in_code("late-code", unix_now() - CODE_LIFETIME_SECS - 5)
        .unwrap();
    assert_eq!(
        sign_in(&router, "late-code").await.0,
        StatusCode::UNAUTHORIZED
    );

    // Both halves count, from the server's own origin; the cookie (which the browser also
    // sends to every other local port) never counts alone, whatever else comes with it.
    let own = format!("http://127.0.0.1:{PORT}");
    let other = format!("http://127.0.0.1:{}", PORT + 1);
    let header = "x-verbatim-session";
    let cases: &[(&[(&str, &str)], StatusCode)] = &[
        (&[("cookie", &cookie), (header, &secret)], StatusCode::OK),
        (
            &[("cookie", &cookie), (header, &secret), ("origin", &own)],
            StatusCode::OK,
        ),
        (
            &[("cookie", &cookie), ("origin", &own)],
            StatusCode::UNAUTHORIZED,
        ),
        (
            &[
                ("cookie", &cookie),
                ("origin", &own),
                ("sec-fetch-site", "same-origin"),
            ],
            StatusCode::UNAUTHORIZED,
        ),
        (
            &[(header, &secret), ("origin", &own)],
            StatusCode::UNAUTHORIZED,
        ),
        (
            &[("cookie", &cookie), (header, "guessed")],
            StatusCode::UNAUTHORIZED,
        ),
        (
            &[("cookie", "verbatim_session=guessed"), (header, &secret)],
            StatusCode::UNAUTHORIZED,
        ),
        (
            &[("cookie", &cookie), (header, &secret), ("origin", &other)],
            StatusCode::FORBIDDEN,
        ),
        (
            &[
                ("cookie", &cookie),
                (header, &secret),
                ("origin", "https://example.com"),
            ],
            StatusCode::FORBIDDEN,
        ),
    ];
    for (headers, expected) in cases {
        let (status, _, _) = get(&router, "/v1/history", headers).await;
        assert_eq!(status, *expected, "{headers:?}");
    }

    // Signing out ends this session (and clears the cookie); another browser's stays.
    store.add_sign_in_code("second-code", unix_now()).unwrap();
    let (_, second, headers) = sign_in(&router, "second-code").await;
    let (second_cookie, second_secret) = session_halves(&second.unwrap(), &headers);
    let sign_out = |cookie: &str, secret: &str| {
        request("POST", "/page/sign-out")
            .header("cookie", cookie)
            .header(header, secret)
            .header("origin", own.as_str())
            .body(Body::empty())
            .unwrap()
    };
    let (status, answer_headers, body) = send(&router, sign_out(&cookie, &secret)).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, serde_json::json!({"signed_out": true}))
    );
    assert!(
        header_of(&answer_headers, header::SET_COOKIE).contains("Max-Age=0"),
        "{answer_headers:?}"
    );
    let (status, _, _) = send(&router, sign_out(&cookie, &secret)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "signed out");
    let second_halves: &[(&str, &str)] = &[("cookie", &second_cookie), (header, &second_secret)];
    assert_eq!(
        get(&router, "/v1/history", second_halves).await.0,
        StatusCode::OK
    );

    // Rotating the token signs every browser out.
    let dir = verbatim::discovery::DataDir::at(app.dir.path().join("data"));
    verbatim::discovery::rotate_token(&dir, store).unwrap();
    assert_eq!(
        get(&router, "/v1/history", second_halves).await.0,
        StatusCode::UNAUTHORIZED
    );
}

#[test]
fn verbatim_open_prints_a_link_that_signs_in_once() {
    let home = tempfile::tempdir().unwrap();
    let server = SpawnedServer::start(home.path(), &["--sim", "--require-token"]);
    let port = server.discovery.port;
    let out = common::verbatim(home.path())
        .args(["open", "--print-url"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let prefix = format!("http://127.0.0.1:{port}/login?code=");
    assert!(url.starts_with(&prefix), "{url}");
    let agent = agent_that_stays();
    let answer = agent.get(&url).call().unwrap();
    assert_eq!(answer.status(), 303);
    assert!(
        answer
            .headers()
            .get("set-cookie")
            .and_then(|c| c.to_str().ok())
            .is_some_and(|c| c.starts_with("verbatim_session=")),
    );
    let spent = agent.get(&url).call().unwrap();
    assert_eq!(spent.status(), 401, "a spent code");
    // Without a display the link is printed with the reason the browser did not open.
    let out = common::verbatim(home.path())
        .arg("open")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no display") && stderr.contains(&prefix),
        "{stderr}"
    );
    drop(server);
    // No server: no link.
    let out = common::verbatim(home.path())
        .args(["open", "--print-url"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

/// A client that shows redirects instead of following them, and answers of any status.
fn agent_that_stays() -> ureq::Agent {
    ureq::Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .new_agent()
}

/// Stops the process `0` (a server a test started through the CLI) when dropped.
struct StopOnDrop(u32);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill only sends a signal to the process the test started.
        unsafe { libc::kill(self.0 as i32, libc::SIGTERM) };
    }
}

/// `open --start` (the desktop entry's command) starts a server in the background when none
/// answers, waits for it, and hands out a link to it; the server's log goes to the data folder.
#[test]
fn open_start_starts_a_server_when_none_answers() {
    let home = tempfile::tempdir().unwrap();
    let port = common::closed_port();
    let out = common::verbatim(home.path())
        .args([
            "--port",
            &port.to_string(),
            "open",
            "--print-url",
            "--start",
        ])
        .env("VERBATIM_MODELS_DIR", home.path().join("models"))
        .output()
        .unwrap();
    let discovery = verbatim::discovery::read(&verbatim::discovery::DataDir::at(home.path()));
    // The server outlives the command: stop it whatever the assertions say.
    let _stop = discovery.as_ref().map(|d| StopOnDrop(d.pid));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = String::from_utf8_lossy(&out.stdout);
    assert!(
        link.starts_with(&format!("http://127.0.0.1:{port}/login?code=")),
        "{link}"
    );
    let discovery = discovery.expect("the started server publishes its discovery file");
    assert_eq!(discovery.port, port);
    let agent = agent_that_stays();
    let answer = agent.get(link.trim()).call().unwrap();
    assert_eq!(
        answer.status(),
        303,
        "the link signs in to the started server"
    );
    let log = std::fs::read_to_string(home.path().join("serve.log")).unwrap();
    assert!(
        log.contains(&format!("listening on http://127.0.0.1:{port}")),
        "{log}"
    );
}

/// The Python with Selenium that scripts/test installs (`VERBATIM_TEST_BROWSER_PYTHON`).
fn browser_python() -> Option<String> {
    let python = std::env::var("VERBATIM_TEST_BROWSER_PYTHON").ok();
    let chromium =
        Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists();
    if python.is_none() || !chromium {
        common::skip(
            "VERBATIM_TEST_BROWSER_PYTHON or Debian's chromium and chromium-driver are missing (scripts/test installs them)",
        );
        return None;
    }
    python
}

/// A backup with two rules, terms, a correction and 60 history entries (two pages).
fn page_backup() -> serde_json::Value {
    serde_json::json!({
        "schemaVersion": 1,
        "workflows": [
            {"id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "name": "Mail", "isEnabled": true,
             "priority": 0, "bundleIdentifiers": ["org.mozilla.Thunderbird"], "urlPatterns": [],
             "languageMode": "multiple", "languageHints": ["de", "en"]},
            {"id": "7C9E6679-7425-40DE-944B-E07FC1F90AE7", "name": "Docs", "isEnabled": false,
             "priority": 4, "bundleIdentifiers": [], "urlPatterns": ["docs.example.org/*"],
             "inputLanguage": "fr", "languageMode": "exact", "languageHints": []}
        ],
        "dictionaryEntries": [
            {"type": "term", "term": "Kubernetes", "isEnabled": true},
            {"type": "correction", "original": "teh", "replacement": "the", "caseSensitive": false, "isEnabled": true}
        ],
        "history": (0..60).map(|i| serde_json::json!({
            "id": uuid::Uuid::new_v4().to_string().to_uppercase(),
            "text": format!("Meeting notes number {i}, moved to Thursday."),
            "rawText": format!("meeting notes number {i} moved to thursday"),
            "timestamp": (chrono::Utc::now() - chrono::Duration::minutes(10 + i)).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "appName": "Text Editor", "duration": 2.5, "language": "en",
            "engine": "whisper", "model": "tiny.en", "wordsCount": 7
        })).collect::<Vec<_>>(),
        "preferences": {"saveApiTranscriptionsToHistory": true}
    })
}

/// A sim server for the browser tests, data in `home/data`: the microphone says en-weather
/// (tiny.en hears "The way that today is solid…"), both engines' small models present, base
/// downloadable in 3 s, the token required when `token_on`, and [`page_backup`] imported.
fn serve_for_the_page(home: &Path, token_on: bool) -> (SpawnedServer, std::path::PathBuf) {
    let scenario = common::write_scenario(
        home,
        &format!(
            "{}\"moonshine-tiny\" = \"present\"\n\"base\" = {{ download_seconds = 3.0 }}\n",
            common::microphone_scenario("en-weather", "")
        ),
    );
    let data = home.join("data");
    let scenario_arg = scenario.to_string_lossy().into_owned();
    let mut args = vec!["--sim", "--scenario", &scenario_arg];
    if token_on {
        args.push("--require-token");
    }
    let server = SpawnedServer::start(&data, &args);
    let backup = home.join("backup.json");
    std::fs::write(&backup, page_backup().to_string()).unwrap();
    let imported = common::verbatim(&data)
        .arg("import")
        .arg(&backup)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    (server, data)
}

/// A one-time sign-in link from `verbatim open --print-url`.
fn sign_in_link(data: &Path) -> String {
    let out = common::verbatim(data)
        .args(["open", "--print-url"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_page_works_in_a_real_browser() {
    let Some(python) = browser_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (server, data) = serve_for_the_page(home.path(), true);
    let port = server.discovery.port;
    let token = server.discovery.token.clone();
    let url = sign_in_link(&data);
    let shots = std::env::var_os("VERBATIM_SCREENSHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| home.path().join("shots"));
    std::fs::create_dir_all(&shots).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/page.py");
    let run = Command::new(python)
        .arg(script)
        .arg(&url)
        .arg(&shots)
        .arg("today")
        .env("VERBATIM_API_TOKEN", &token)
        .env("SE_OFFLINE", "true")
        .output()
        .unwrap();
    let said = said(&run);
    assert!(run.status.success(), "port {port}:\n{said}");
    eprintln!("{said}");
    for view in [
        "dictation",
        "history",
        "dictionary",
        "rules",
        "actions",
        "history-action",
        "models",
        "recorder",
        "history-dark",
    ] {
        let shot = shots.join(format!("{view}.png"));
        assert!(
            std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
            "{}",
            shot.display()
        );
    }
}

/// Pages of other local origins (tests/browser/attack.py) try every request a browser lets
/// them send, with the token off, on and not signed in, and on with the browser signed in: the
/// server's state is unchanged, and replaying everything their server received (the session
/// cookie among it) with the server's own `Origin` is refused; the own page still works.
#[test]
fn pages_of_other_local_origins_change_nothing_and_what_they_receive_is_useless() {
    let Some(python) = browser_python() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/attack.py");
    // The three cases at once: each mostly waits on its browser.
    let cases = [(false, false), (true, false), (true, true)].map(|(token_on, signed_in)| {
        let (python, script) = (python.clone(), script.clone());
        std::thread::spawn(move || attack(Path::new(&python), &script, token_on, signed_in))
    });
    for case in cases {
        if let Err(failed) = case.join() {
            std::panic::resume_unwind(failed);
        }
    }
}

/// What a browser script printed: its standard output, then its standard error.
fn said(run: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    )
}

/// One run of tests/browser/attack.py against a server of its own, the token on or off, the
/// browser signed in to the page or not.
fn attack(python: &Path, script: &Path, token_on: bool, signed_in: bool) {
    let home = tempfile::tempdir().unwrap();
    let (server, data) = serve_for_the_page(home.path(), token_on);
    let port = server.discovery.port;
    let sign_in = if signed_in {
        sign_in_link(&data)
    } else {
        "-".to_owned()
    };
    let run = Command::new(python)
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&sign_in)
        .env("VERBATIM_API_TOKEN", &server.discovery.token)
        .env("VERBATIM_DISCOVERY", data.join("api-discovery.json"))
        .env("SE_OFFLINE", "true")
        .output()
        .unwrap();
    let said = said(&run);
    let case = format!("token on: {token_on}, signed in: {signed_in}");
    assert!(run.status.success(), "{case}:\n{said}");
    eprintln!("{case}\n{said}");
}

/// The model `GET /v1/status` names as selected.
async fn selected_model(router: &Router) -> serde_json::Value {
    let (_, _, status) = send(
        router,
        request("GET", "/v1/status").body(Body::empty()).unwrap(),
    )
    .await;
    status["model"].clone()
}

/// POST/DELETE `path` through `router`: status and JSON body.
async fn call(router: &Router, method: &str, path: &str) -> (StatusCode, serde_json::Value) {
    let (status, _, body) = send(router, request(method, path).body(Body::empty()).unwrap()).await;
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_own_routes_select_download_and_remove_models() {
    let app = TestApp::with_scenario(
        "[engine]\nselected_model = \"tiny.en\"\n\n[models]\n\"tiny.en\" = \"present\"\n\
         \"base\" = { download_seconds = 1.0 }\n\"small\" = \"absent\"\n",
    );
    let router = app.router();
    // Behind the token check like /v1/.
    let locked = TestApp::requiring_token();
    for (method, path) in [
        ("GET", "/page/downloads"),
        ("POST", "/page/models/select?id=base"),
        ("POST", "/page/token/rotate"),
    ] {
        assert_eq!(
            call(&locked.router(), method, path).await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let (status, body) = call(&router, "POST", "/page/models/select?id=nope").await;
    assert_eq!(
        (status, &body["error"]["message"]),
        (StatusCode::BAD_REQUEST, &"Unknown model 'nope'".into())
    );
    let (status, body) = call(&router, "POST", "/page/models/select").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // A download is answered when done; meanwhile it is listed with its progress and cannot
    // be removed.
    let downloading = tokio::spawn({
        let router = router.clone();
        async move { call(&router, "POST", "/page/models/download?id=base").await }
    });
    let mut seen = None;
    for _ in 0..100 {
        let (_, body) = call(&router, "GET", "/page/downloads").await;
        if let Some(d) = body["downloads"].as_array().and_then(|d| d.first()) {
            seen = Some(d.clone());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let seen = seen.expect("the download listed while it runs");
    assert_eq!(seen["id"], "base");
    let (status, body) = call(&router, "DELETE", "/page/models?id=base").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = downloading.await.unwrap();
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            serde_json::json!({"id": "base", "downloaded": true})
        )
    );
    let (_, body) = call(&router, "GET", "/page/downloads").await;
    assert_eq!(body["downloads"], serde_json::json!([]));
    let (status, body) = call(&router, "POST", "/page/models/download?id=small").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Downloading model 'small' failed")
    );

    let (status, body) = call(&router, "POST", "/page/models/select?id=base").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            serde_json::json!({"engine": "whisper", "model": "base", "downloaded": true})
        )
    );
    assert_eq!(selected_model(&router).await, "base");

    // A model that is not downloaded is not selected; the selection stays.
    let (status, body) = call(&router, "POST", "/page/models/select?id=small").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Model 'small' is not downloaded: download it first (verbatim models download small); the selection is unchanged"
    );
    assert_eq!(selected_model(&router).await, "base");
}

#[tokio::test]
async fn removing_a_model_from_the_page_deletes_its_files_and_rotation_replaces_the_token() {
    let models_dir = tempfile::tempdir().unwrap();
    let models = verbatim::engine::models::ModelDir::new(models_dir.path());
    for id in ["tiny.en", "base"] {
        let spec = verbatim::engine::catalog::find_model(id).unwrap();
        let temp = models.temp_path(spec).unwrap();
        std::fs::write(&temp, b"placeholder").unwrap();
        models.install(spec, &temp, "0", "test").unwrap();
    }
    let app = TestApp::real(models.clone());
    app.select("tiny.en");
    let router = app.router();
    // The selected model: removed, and the other downloaded one selected instead.
    let (status, body) = call(&router, "DELETE", "/page/models?id=tiny.en").await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            serde_json::json!({"id": "tiny.en", "removed": true, "selected": "base"})
        )
    );
    let spec = verbatim::engine::catalog::find_model("tiny.en").unwrap();
    assert!(!verbatim::engine::catalog::is_installed(&models, spec));
    assert!(!models_dir.path().join("tiny.en").exists());
    let (_, body) = call(&router, "DELETE", "/page/models?id=tiny.en").await;
    assert_eq!(body["removed"], false);
    assert_eq!(selected_model(&router).await, "base");
    // The last one: removed, nothing else to select.
    let (_, body) = call(&router, "DELETE", "/page/models?id=base").await;
    assert_eq!(body, serde_json::json!({"id": "base", "removed": true}));

    let before = app.token();
    let (status, _) = call(&router, "POST", "/page/token/rotate").await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(app.token(), before);
}

/// PUT `/page/settings` with `body`: status and JSON answer.
async fn put_setting(router: &Router, body: serde_json::Value) -> (StatusCode, serde_json::Value) {
    let req = request("PUT", "/page/settings")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, _, body) = send(router, req).await;
    (status, body)
}

#[tokio::test]
async fn the_settings_view_changes_what_a_backup_may_and_nothing_else() {
    use verbatim::store::preferences;
    let app = TestApp::new();
    let router = app.router();
    let stored_max = || {
        let store = &app.app.store;
        store.pref_int(&preferences::MAX_DICTATION_SECONDS).unwrap()
    };
    let (status, body) = call(&router, "GET", "/page/settings").await;
    assert_eq!(status, StatusCode::OK);
    let settings = body["settings"].as_array().unwrap();
    assert_eq!(settings.len(), preferences::ALL.len());
    let find = |key: &str| settings.iter().find(|s| s["key"] == key).unwrap().clone();
    let max = find("maxDictationSeconds");
    assert_eq!(
        (
            &max["kind"],
            &max["min"],
            &max["max"],
            &max["value"],
            &max["editable"]
        ),
        (
            &"int".into(),
            &5.into(),
            &3600.into(),
            &300.into(),
            &true.into()
        )
    );
    assert_eq!(
        find("dictationInsertion")["options"],
        serde_json::json!(["none", "clipboard", "type"])
    );
    for key in preferences::NOT_IN_BACKUP {
        assert_eq!(find(key)["editable"], false, "{key}");
    }

    let (status, body) = put_setting(
        &router,
        serde_json::json!({"key": "maxDictationSeconds", "value": 120}),
    )
    .await;
    assert_eq!((status, &body["value"]), (StatusCode::OK, &120.into()));
    assert_eq!(stored_max(), 120);
    let refused = [
        (
            serde_json::json!({"key": "maxDictationSeconds", "value": 1}),
            "expected a whole number from 5 to 3600",
        ),
        (
            serde_json::json!({"key": "maxDictationSeconds", "value": "120"}),
            "expected a JSON integer",
        ),
        (
            serde_json::json!({"key": "noSuchThing", "value": 1}),
            "unknown preference 'noSuchThing'",
        ),
        (
            serde_json::json!({"key": "apiServerRequiresAuthentication", "value": false}),
            "changed on this machine only",
        ),
        (
            serde_json::json!({"key": "dictationInsertion", "value": "type"}),
            "changed on this machine only",
        ),
    ];
    for (body, message) in refused {
        let (status, answer) = put_setting(&router, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains(message),
            "{answer}"
        );
    }
    assert_eq!(stored_max(), 120);
    assert_eq!(
        app.app
            .store
            .pref_text(&preferences::DICTATION_INSERTION)
            .unwrap(),
        "clipboard"
    );
}
