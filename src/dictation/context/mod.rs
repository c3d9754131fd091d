//! Which application dictation is talking to. The port ([`AppContextSource`]) and its adapters:
//! the focused X11 window ([`x11`]) or a fixed context ([`sim`]), chosen by [`detect_in`].

mod sim;
mod x11;

pub use sim::StaticContext;
pub use x11::X11Context;

use super::desktop::DesktopEnv;

/// The application in front when dictation starts; every part is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppContext {
    /// The window title.
    pub app_name: Option<String>,
    /// On Linux the class part of the window's `WM_CLASS` (what rules' `bundle_identifiers`
    /// hold).
    pub app_id: Option<String>,
    /// The page open in a browser, when known.
    pub url: Option<String>,
}

/// Tells which application is in front.
pub trait AppContextSource: Send + Sync {
    /// The current context; empty when it cannot be told. Never fails, may block up to the
    /// source's timeout: call it from a blocking thread.
    fn current(&self) -> AppContext;
}

/// The source for this process's desktop session: X11 when `DISPLAY` is set, else an empty
/// static context.
pub fn detect() -> Box<dyn AppContextSource> {
    detect_in(&DesktopEnv::from_env())
}

/// [`detect`] for the given desktop session.
pub fn detect_in(env: &DesktopEnv) -> Box<dyn AppContextSource> {
    match &env.display {
        Some(display) => Box::new(X11Context::new(display.clone())),
        None => Box::new(StaticContext::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_display_means_an_empty_static_context() {
        let source = detect_in(&DesktopEnv::headless());
        assert_eq!(source.current(), AppContext::default());
        let scenario = AppContext {
            app_name: Some("Notes".into()),
            app_id: Some("org.example.Notes".into()),
            url: None,
        };
        assert_eq!(StaticContext(scenario.clone()).current(), scenario);
    }
}
