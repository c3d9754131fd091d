//! Security beyond the spec: the Host allowlist (DNS rebinding), refusing every origin but the
//! server's own (Origin, Sec-Fetch-Site), no CORS headers, the cache and sniffing headers,
//! loopback binding.

use std::net::{TcpStream, UdpSocket};
use std::time::Duration;

use serde_json::json;

use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, skip};

const SECURITY: &str = "Security beyond the spec";
const FOURTH_WAVE: &str = "Additions (fourth wave)";

fn refused(cx: &mut Ctx, request: Request) -> Step {
    cx.send(request)?.error(403, "forbidden").map(drop)
}

fn allowed(cx: &mut Ctx, request: Request) -> Step {
    cx.send(request)?.ok_json().map(drop)
}

fn status() -> Request {
    Request::new("GET", "/v1/status")
}

/// Answers of several kinds: 200, 404, 204 (OPTIONS), 403, 400.
fn sample_answers(cx: &mut Ctx) -> Step<Vec<crate::context::Exchange>> {
    Ok(vec![
        cx.send(status())?,
        cx.send(Request::new("GET", "/v1/conformance-kit-nowhere"))?,
        cx.send(
            Request::new("OPTIONS", "/v1/transcribe")
                .header("Access-Control-Request-Method", "POST")
                .header("Origin", &format!("http://localhost:{}", cx.target.port)),
        )?,
        cx.send(status().header("Origin", "https://conformance.example"))?,
        cx.send(status().header("Origin", &format!("http://127.0.0.1:{}", cx.target.port)))?,
    ])
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "security.host-foreign",
            (
                SECURITY,
                "`Host` must be `127.0.0.1:P`, `localhost:P` or `[::1]:P` (any case), else 403",
            ),
            Needs::NOTHING,
            |cx| {
                let port = cx.target.port;
                refused(cx, status().host(&format!("conformance.example:{port}")))
            },
        ),
        Check::new(
            "security.host-wrong-port",
            (SECURITY, "`Host` must be `127.0.0.1:P` ... else 403"),
            Needs::NOTHING,
            |cx| {
                let other = cx.target.port.wrapping_add(1);
                refused(cx, status().host(&format!("127.0.0.1:{other}")))
            },
        ),
        Check::new(
            "security.host-missing",
            (SECURITY, "`Host` must be `127.0.0.1:P` ... else 403"),
            Needs::NOTHING,
            |cx| refused(cx, status().host("")),
        ),
        Check::new(
            "security.host-on-writes",
            (SECURITY, "else 403: this stops DNS rebinding"),
            Needs::ACCESS,
            |cx| {
                let port = cx.target.port;
                refused(
                    cx,
                    Request::new("POST", "/v1/dictation/start")
                        .host(&format!("rebind.conformance.example:{port}"))
                        .json(&json!({"workflow_id": "not-a-uuid"})),
                )
            },
        ),
        Check::new(
            "security.host-allowed-names",
            (
                SECURITY,
                "`127.0.0.1:P`, `localhost:P` or `[::1]:P` (any case)",
            ),
            Needs::NOTHING,
            |cx| {
                let port = cx.target.port;
                for host in [
                    format!("127.0.0.1:{port}"),
                    format!("LocalHost:{port}"),
                    format!("[::1]:{port}"),
                ] {
                    allowed(cx, status().host(&host))?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.origin-foreign",
            (FOURTH_WAVE, "Any other `Origin` ... is 403 on every route"),
            Needs::NOTHING,
            |cx| refused(cx, status().header("Origin", "https://conformance.example")),
        ),
        Check::new(
            "security.origin-null",
            (FOURTH_WAVE, "Any other `Origin` ... is 403 on every route"),
            Needs::NOTHING,
            |cx| refused(cx, status().header("Origin", "null")),
        ),
        Check::new(
            "security.origin-every-method",
            (SECURITY, "gets 403 on every method"),
            Needs::ACCESS,
            |cx| {
                let evil = "https://conformance.example";
                refused(
                    cx,
                    Request::new("POST", "/v1/dictation/start")
                        .header("Origin", evil)
                        .json(&json!({"workflow_id": "not-a-uuid"})),
                )?;
                refused(
                    cx,
                    Request::new("OPTIONS", "/v1/transcribe").header("Origin", evil),
                )?;
                refused(
                    cx,
                    Request::new("DELETE", "/v1/history?id=not-a-uuid").header("Origin", evil),
                )
            },
        ),
        Check::new(
            "security.origin-own",
            (
                FOURTH_WAVE,
                "the only origin a request may carry is this server's own: `http://` + a Host-allowlist name + this server's port",
            ),
            Needs::NOTHING,
            |cx| {
                let port = cx.target.port;
                for origin in [
                    format!("http://127.0.0.1:{port}"),
                    format!("http://localhost:{port}"),
                ] {
                    allowed(cx, status().header("Origin", &origin))?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.origin-other-local-port",
            (
                FOURTH_WAVE,
                "Any other `Origin` (another port of 127.0.0.1 or localhost included) is 403 on every route",
            ),
            Needs::NOTHING,
            |cx| {
                let other = cx.target.port.wrapping_add(1);
                for origin in [
                    format!("http://127.0.0.1:{other}"),
                    "http://localhost:3000".to_string(),
                    "http://[::1]".to_string(),
                ] {
                    refused(cx, status().header("Origin", &origin))?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.sec-fetch-same-site-change",
            (
                FOURTH_WAVE,
                "A request with no `Origin` whose `Sec-Fetch-Site` is `same-site` or `cross-site` is 403 on every state-changing route",
            ),
            Needs::ACCESS,
            |cx| {
                refused(
                    cx,
                    Request::new("POST", "/v1/dictation/stop")
                        .header("Sec-Fetch-Site", "same-site"),
                )?;
                refused(
                    cx,
                    Request::new("DELETE", "/v1/history?id=not-a-uuid")
                        .header("Sec-Fetch-Site", "same-site"),
                )
            },
        ),
        Check::new(
            "security.sec-fetch-cross-site",
            (SECURITY, "(or `Sec-Fetch-Site: cross-site`) ... gets 403"),
            Needs::NOTHING,
            |cx| refused(cx, status().header("Sec-Fetch-Site", "cross-site")),
        ),
        Check::new(
            "security.sec-fetch-same-origin",
            (SECURITY, "(or `Sec-Fetch-Site: cross-site`) ... gets 403"),
            Needs::NOTHING,
            |cx| {
                allowed(cx, status().header("Sec-Fetch-Site", "same-origin"))?;
                allowed(cx, status().header("Sec-Fetch-Site", "none"))
            },
        ),
        Check::new(
            "security.no-cors",
            (SECURITY, "No CORS headers are ever sent"),
            Needs::NOTHING,
            |cx| {
                for ex in sample_answers(cx)? {
                    let cors: Vec<&(String, String)> = ex
                        .response
                        .headers
                        .iter()
                        .filter(|(n, _)| n.starts_with("access-control-"))
                        .collect();
                    ex.ensure(
                        cors.is_empty(),
                        "no Access-Control-* header",
                        format!("{cors:?}"),
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.no-store",
            (SECURITY, "Responses carry `Cache-Control: no-store`"),
            Needs::NOTHING,
            |cx| {
                for ex in sample_answers(cx)? {
                    let value = ex.header("cache-control").unwrap_or_default();
                    ex.ensure(
                        value.eq_ignore_ascii_case("no-store"),
                        format!("Cache-Control: no-store on a {}", ex.status()),
                        format!("{value:?}"),
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.nosniff",
            (
                SECURITY,
                "Responses carry ... `X-Content-Type-Options: nosniff`",
            ),
            Needs::NOTHING,
            |cx| {
                for ex in sample_answers(cx)? {
                    let value = ex.header("x-content-type-options").unwrap_or_default();
                    ex.ensure(
                        value.eq_ignore_ascii_case("nosniff"),
                        format!("X-Content-Type-Options: nosniff on a {}", ex.status()),
                        format!("{value:?}"),
                    )?;
                }
                Ok(())
            },
        ),
        Check::new(
            "security.loopback-only",
            (SECURITY, "Binds 127.0.0.1 only"),
            Needs::NOTHING,
            |cx| {
                if !matches!(cx.target.host.as_str(), "127.0.0.1" | "localhost") {
                    return skip("the kit reaches the server through a non-loopback address");
                }
                // The address of this machine's outward interface (no packet is sent).
                let outward = UdpSocket::bind("0.0.0.0:0")
                    .and_then(|s| s.connect("192.0.2.1:9").and(s.local_addr()));
                let ip = match outward {
                    Ok(addr) if !addr.ip().is_loopback() && !addr.ip().is_unspecified() => {
                        addr.ip()
                    }
                    _ => return skip("this machine has no non-loopback address to try"),
                };
                match TcpStream::connect_timeout(
                    &(ip, cx.target.port).into(),
                    Duration::from_secs(2),
                ) {
                    Ok(_) => crate::fail(
                        format!("nothing listening on {ip}:{}", cx.target.port),
                        "the connection was accepted",
                    ),
                    Err(_) => Ok(()),
                }
            },
        ),
    ]
}
