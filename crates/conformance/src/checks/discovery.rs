//! The discovery file given with `--discovery FILE`: its fields, permissions, and that its
//! port, token and pid are those of the running server.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::http::Request;
use crate::{Check, Ctx, Needs, Step, fail};

const DISCOVERY: &str = "Discovery and authentication";

fn file(cx: &Ctx) -> Step<Value> {
    let path = cx.discovery.clone().unwrap_or_default();
    let text = std::fs::read_to_string(&path).or_else(|e| {
        fail(
            format!("a readable file at {}", path.display()),
            e.to_string(),
        )
    })?;
    serde_json::from_str(&text).or_else(|e| fail("a JSON object", format!("{text:?} ({e})")))
}

fn mode(path: &std::path::Path) -> Step<u32> {
    let meta = std::fs::metadata(path)
        .or_else(|e| fail(format!("{} exists", path.display()), e.to_string()))?;
    Ok(meta.permissions().mode() & 0o777)
}

pub fn checks() -> Vec<Check> {
    vec![
        Check::new(
            "discovery.fields",
            (DISCOVERY, "`{\"port\",\"token\",\"version\":1,\"pid\"}`"),
            Needs::DISCOVERY,
            |cx| {
                let json = file(cx)?;
                let ok = json["port"].is_u64()
                    && json["token"].is_string()
                    && json["version"] == 1
                    && json["pid"].is_u64();
                if ok {
                    Ok(())
                } else {
                    fail(
                        "{\"port\":int,\"token\":string,\"version\":1,\"pid\":int}",
                        json.to_string(),
                    )
                }
            },
        ),
        Check::new(
            "discovery.file-mode",
            (DISCOVERY, "file created 0600"),
            Needs::DISCOVERY,
            |cx| {
                let path = cx.discovery.clone().unwrap_or_default();
                let found = mode(&path)?;
                if found == 0o600 {
                    Ok(())
                } else {
                    fail("mode 0600", format!("{found:04o}"))
                }
            },
        ),
        Check::new(
            "discovery.folder-mode",
            (DISCOVERY, "folder 0700"),
            Needs::DISCOVERY,
            |cx| {
                let path = cx.discovery.clone().unwrap_or_default();
                let folder = path.parent().unwrap_or(std::path::Path::new("."));
                let found = mode(folder)?;
                if found == 0o700 {
                    Ok(())
                } else {
                    fail(
                        format!("{} with mode 0700", folder.display()),
                        format!("{found:04o}"),
                    )
                }
            },
        ),
        Check::new(
            "discovery.port",
            (DISCOVERY, "the active port"),
            Needs::DISCOVERY,
            |cx| {
                let json = file(cx)?;
                if json["port"] == cx.target.port {
                    Ok(())
                } else {
                    fail(format!("port {}", cx.target.port), json["port"].to_string())
                }
            },
        ),
        Check::new(
            "discovery.token-format",
            (
                DISCOVERY,
                "Token: 32 random bytes, base64url without padding",
            ),
            Needs::DISCOVERY,
            |cx| {
                let token = file(cx)?["token"].as_str().unwrap_or_default().to_string();
                let ok = token.len() == 43
                    && token
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if ok {
                    Ok(())
                } else {
                    fail(
                        "43 base64url characters (32 bytes, no padding)",
                        format!("{} characters", token.len()),
                    )
                }
            },
        ),
        Check::new(
            "discovery.token-works",
            (
                DISCOVERY,
                "The command-line tool reads port and token from the discovery file",
            ),
            Needs::DISCOVERY,
            |cx| {
                let token = file(cx)?["token"].as_str().unwrap_or_default().to_string();
                let ex = cx.send_anonymous(
                    Request::new("GET", "/v1/models")
                        .header("Authorization", &format!("Bearer {token}")),
                )?;
                ex.ok_json().map(drop)
            },
        ),
        Check::new(
            "discovery.pid",
            (
                DISCOVERY,
                "a stale file from a killed server is detected (lock or pid)",
            ),
            Needs::DISCOVERY,
            |cx| {
                let pid = file(cx)?["pid"].as_u64().unwrap_or(0);
                // A process of another user answers EPERM: alive as well.
                let alive = pid > 0
                    && pid <= i32::MAX as u64
                    && (unsafe { libc::kill(pid as i32, 0) } == 0
                        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
                if alive {
                    Ok(())
                } else {
                    fail(format!("pid {pid} of a running process"), "no such process")
                }
            },
        ),
    ]
}
