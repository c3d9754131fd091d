//! The curl command that reproduces a [`Request`]: what a failure shows so that anyone can
//! send the same request again (tokens left to the environment by the caller).

use super::http::{Body, Request, Target};

impl Request {
    /// A curl command that sends the same request to `target`.
    pub fn curl(&self, target: &Target) -> String {
        if let Some(raw) = &self.raw {
            return format!(
                "printf '%s' {} | nc {} {}",
                shell_quote(&String::from_utf8_lossy(raw).replace("\r\n", "\\r\\n")),
                target.host,
                target.port
            );
        }
        let mut parts = vec!["curl -sS -i".to_string()];
        match self.method.as_str() {
            "GET" => {}
            "HEAD" => parts.push("--head".into()),
            other => parts.push(format!("-X {other}")),
        }
        parts.push(shell_quote(&format!("{}{}", target.base_url(), self.path)));
        if let Some(host) = self.host.as_deref() {
            parts.push(format!("-H {}", shell_quote(&format!("Host: {host}"))));
        }
        for (name, value) in &self.headers {
            parts.push(format!("-H {}", shell_quote(&format!("{name}: {value}"))));
        }
        match &self.body {
            Body::Empty => {}
            Body::Json(text) => {
                parts.push("-H 'Content-Type: application/json'".into());
                parts.push(format!("--data-raw {}", shell_quote(&abbreviate(text))));
            }
            Body::Bytes {
                content_type,
                label,
                ..
            } => {
                parts.push(format!(
                    "-H {}",
                    shell_quote(&format!("Content-Type: {content_type}"))
                ));
                parts.push(format!("--data-binary @{}", shell_quote(label)));
            }
            Body::Form { fields, file } => {
                for (name, value) in fields {
                    parts.push(format!("-F {}", shell_quote(&format!("{name}={value}"))));
                }
                if let Some((name, _)) = file {
                    parts.push(format!("-F {}", shell_quote(&format!("file=@{name}"))));
                }
            }
            Body::Chunked {
                content_type,
                bytes,
            } => {
                parts.push(format!(
                    "-H {}",
                    shell_quote(&format!("Content-Type: {content_type}"))
                ));
                parts.push("-H 'Transfer-Encoding: chunked'".into());
                parts.push(format!("--data-binary @body-of-{}-bytes", bytes.len()));
            }
            Body::Withheld {
                length,
                content_type,
            } => {
                parts.push(format!(
                    "-H {}",
                    shell_quote(&format!("Content-Type: {content_type}"))
                ));
                parts.push(format!(
                    "-H 'Content-Length: {length}' --max-time 10  # no body is sent: the server must answer first"
                ));
            }
        }
        parts.join(" ")
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn abbreviate(text: &str) -> String {
    if text.len() <= 2000 {
        return text.to_string();
    }
    let cut = (0..=2000)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... ({} bytes in all)", &text[..cut], text.len())
}
