//! The X11 adapter of the application context: the focused window's app id and title, read
//! through x11rb.

use std::sync::mpsc;
use std::time::Duration;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt, GetPropertyReply, Window};

use super::{AppContext, AppContextSource};

/// its `WM_CLASS` class as the app id, its `_NET_WM_NAME` (else `WM_NAME`) as the app name.
///
/// Connects once per call. Any failure gives an empty context. A server that does not answer
/// within the timeout gives an empty context too; the query thread is then left to finish (or
/// fail) on its own.
#[derive(Debug, Clone)]
pub struct X11Context {
    display: String,
    timeout: Duration,
}

impl X11Context {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

    /// The X11 display to ask, e.g. `:0`.
    pub fn new(display: impl Into<String>) -> Self {
        X11Context {
            display: display.into(),
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The focused window's context, or why it could not be read.
    pub fn query(&self) -> Result<AppContext, String> {
        let (sender, receiver) = mpsc::channel();
        let display = self.display.clone();
        std::thread::Builder::new()
            .name("x11-app-context".into())
            .spawn(move || {
                let _ = sender.send(query_x11(&display).map_err(|err| err.to_string()));
            })
            .map_err(|err| format!("cannot start the X11 query: {err}"))?;
        match receiver.recv_timeout(self.timeout) {
            Ok(result) => result,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "X11 display {} did not answer within {:?}",
                self.display, self.timeout
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("the X11 query panicked".into()),
        }
    }
}

impl AppContextSource for X11Context {
    fn current(&self) -> AppContext {
        self.query().unwrap_or_else(|reason| {
            tracing::debug!("no application context: {reason}");
            AppContext::default()
        })
    }
}

type QueryError = Box<dyn std::error::Error + Send + Sync>;

/// How much of a property is read, in 32-bit units (titles longer than 4 KiB are cut).
const PROPERTY_LENGTH: u32 = 1024;

fn query_x11(display: &str) -> Result<AppContext, QueryError> {
    let (conn, screen) = x11rb::connect(Some(display))?;
    let root = conn
        .setup()
        .roots
        .get(screen)
        .ok_or("the display has no such screen")?
        .root;
    let [active, net_wm_name, utf8_string] = intern(
        &conn,
        [
            b"_NET_ACTIVE_WINDOW".as_slice(),
            b"_NET_WM_NAME",
            b"UTF8_STRING",
        ],
    )?;
    let reply = conn
        .get_property(false, root, active, AtomEnum::WINDOW, 0, 1)?
        .reply()?;
    let Some(window) = reply
        .value32()
        .and_then(|mut v| v.next())
        .filter(|&w| w != 0)
    else {
        return Ok(AppContext::default());
    };
    let class = property(
        &conn,
        window,
        AtomEnum::WM_CLASS.into(),
        AtomEnum::ANY.into(),
    )?;
    let mut name = property(&conn, window, net_wm_name, utf8_string)?;
    if name.value.is_empty() {
        name = property(
            &conn,
            window,
            AtomEnum::WM_NAME.into(),
            AtomEnum::ANY.into(),
        )?;
    }
    // WM_CLASS is "instance\0class\0".
    let app_id = class.value.split(|&b| b == 0).nth(1).and_then(text);
    let app_name = text(&name.value);
    Ok(AppContext {
        app_name,
        app_id,
        url: None,
    })
}

fn intern<const N: usize>(
    conn: &impl Connection,
    names: [&[u8]; N],
) -> Result<[Atom; N], QueryError> {
    let cookies = names
        .map(|name| conn.intern_atom(false, name))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut atoms = [0; N];
    for (atom, cookie) in atoms.iter_mut().zip(cookies) {
        *atom = cookie.reply()?.atom;
    }
    Ok(atoms)
}

fn property(
    conn: &impl Connection,
    window: Window,
    name: Atom,
    type_: Atom,
) -> Result<GetPropertyReply, QueryError> {
    Ok(conn
        .get_property(false, window, name, type_, 0, PROPERTY_LENGTH)?
        .reply()?)
}

/// A property's text: UTF-8 when it is valid UTF-8, else Latin-1 (the ICCCM `STRING` encoding);
/// None when blank.
fn text(bytes: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    };
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!text.is_empty()).then(|| text.to_owned())
}

/// The workflow that applies to `ctx`: among the enabled workflows that list its app id in
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_read_as_utf8_or_latin1() {
        assert_eq!(
            text("Grüße — Editor".as_bytes()).as_deref(),
            Some("Grüße — Editor")
        );
        assert_eq!(text(b"Gr\xfc\xdfe").as_deref(), Some("Grüße"));
        assert_eq!(text(b" \0").as_deref(), None);
    }

    #[test]
    fn an_unreachable_display_gives_an_empty_context() {
        // No server listens on this display number.
        let source = X11Context::new(":4093").with_timeout(Duration::from_secs(5));
        assert!(source.query().is_err());
        assert_eq!(source.current(), AppContext::default());
    }
}
