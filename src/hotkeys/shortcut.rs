//! Key combinations such as `Ctrl+Alt+Space`: parsed case-insensitively, validated, written in
//! one canonical form, and translated to X11 keysyms and the portal's trigger syntax.

use std::fmt;
use std::str::FromStr;

/// A modifier key. The canonical order is the order of [`Modifier::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    Ctrl,
    Alt,
    Shift,
    Super,
}

impl Modifier {
    pub const ALL: [Modifier; 4] = [
        Modifier::Ctrl,
        Modifier::Alt,
        Modifier::Shift,
        Modifier::Super,
    ];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Modifier::Ctrl => "Ctrl",
            Modifier::Alt => "Alt",
            Modifier::Shift => "Shift",
            Modifier::Super => "Super",
        }
    }

    /// Every accepted spelling (compared without regard to case).
    fn spellings(self) -> &'static [&'static str] {
        match self {
            Modifier::Ctrl => &["Ctrl", "Control"],
            Modifier::Alt => &["Alt"],
            Modifier::Shift => &["Shift"],
            Modifier::Super => &["Super", "Meta", "Win", "Logo"],
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// Its name in the XDG shortcuts syntax the desktop portal reads.
    fn portal_name(self) -> &'static str {
        match self {
            Modifier::Ctrl => "CTRL",
            Modifier::Alt => "ALT",
            Modifier::Shift => "SHIFT",
            Modifier::Super => "LOGO",
        }
    }

    fn parse(text: &str) -> Option<Modifier> {
        Modifier::ALL.into_iter().find(|modifier| {
            modifier
                .spellings()
                .iter()
                .any(|spelling| spelling.eq_ignore_ascii_case(text))
        })
    }
}

/// A set of modifiers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Modifiers(u8);

impl Modifiers {
    pub fn contains(self, modifier: Modifier) -> bool {
        self.0 & modifier.bit() != 0
    }

    fn insert(&mut self, modifier: Modifier) {
        self.0 |= modifier.bit();
    }

    /// The modifiers held, in canonical order.
    pub fn iter(self) -> impl Iterator<Item = Modifier> {
        Modifier::ALL.into_iter().filter(move |m| self.contains(*m))
    }
}

/// A key that is not a modifier: its canonical name and its X11 keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    name: &'static str,
    keysym: u32,
}

impl Key {
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The X11 keysym (the unshifted symbol: `a` for the A key).
    pub fn keysym(self) -> u32 {
        self.keysym
    }

    /// Whether the key may be a shortcut on its own: keys that type nothing (F1–F24, Pause...).
    /// Any other key needs Ctrl, Alt or Super, or the shortcut would take it from typing.
    pub fn standalone(self) -> bool {
        self.name.starts_with('F') && self.name.len() > 1 && self.name[1..].parse::<u8>().is_ok()
            || matches!(self.name, "Pause" | "Print" | "ScrollLock" | "Menu")
    }

    /// Its name in the XDG shortcuts syntax (the xkb keysym name).
    fn portal_name(self) -> String {
        match NAMED.iter().find(|named| named.name == self.name) {
            Some(named) => named.xkb.to_string(),
            // Letters are named by their lowercase keysym; digits and F-keys as they are.
            None if self.name.len() == 1 => self.name.to_ascii_lowercase(),
            None => self.name.to_string(),
        }
    }
}

/// A key with a name of its own (letters, digits and F-keys are generated).
struct NamedKey {
    name: &'static str,
    aliases: &'static [&'static str],
    keysym: u32,
    /// The xkb keysym name, as the portal's trigger syntax writes it.
    xkb: &'static str,
}

const fn named(
    name: &'static str,
    aliases: &'static [&'static str],
    keysym: u32,
    xkb: &'static str,
) -> NamedKey {
    NamedKey {
        name,
        aliases,
        keysym,
        xkb,
    }
}

/// The keys with names of their own, in the order the error message lists them.
const NAMED: &[NamedKey] = &[
    named("Space", &[], 0x0020, "space"),
    named("Enter", &["Return"], 0xff0d, "Return"),
    named("Tab", &[], 0xff09, "Tab"),
    named("Escape", &["Esc"], 0xff1b, "Escape"),
    named("Backspace", &[], 0xff08, "BackSpace"),
    named("Delete", &["Del"], 0xffff, "Delete"),
    named("Insert", &["Ins"], 0xff63, "Insert"),
    named("Home", &[], 0xff50, "Home"),
    named("End", &[], 0xff57, "End"),
    named("PageUp", &["PgUp", "Prior"], 0xff55, "Prior"),
    named("PageDown", &["PgDn", "Next"], 0xff56, "Next"),
    named("Left", &["ArrowLeft"], 0xff51, "Left"),
    named("Up", &["ArrowUp"], 0xff52, "Up"),
    named("Right", &["ArrowRight"], 0xff53, "Right"),
    named("Down", &["ArrowDown"], 0xff54, "Down"),
    named("Minus", &["-"], 0x002d, "minus"),
    named("Equal", &["Equals", "="], 0x003d, "equal"),
    named("Comma", &[","], 0x002c, "comma"),
    named("Period", &["Dot", "."], 0x002e, "period"),
    named("Slash", &["/"], 0x002f, "slash"),
    named("Backslash", &["\\"], 0x005c, "backslash"),
    named("Semicolon", &[";"], 0x003b, "semicolon"),
    named("Apostrophe", &["Quote", "'"], 0x0027, "apostrophe"),
    named("Grave", &["Backquote", "Backtick", "`"], 0x0060, "grave"),
    named("BracketLeft", &["["], 0x005b, "bracketleft"),
    named("BracketRight", &["]"], 0x005d, "bracketright"),
    named("Print", &["PrintScreen", "PrtSc"], 0xff61, "Print"),
    named("Pause", &["Break"], 0xff13, "Pause"),
    named("ScrollLock", &[], 0xff14, "Scroll_Lock"),
    named("Menu", &[], 0xff67, "Menu"),
];

const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &str = "0123456789";
/// F1 is keysym 0xffbe; F1–F24 follow one another.
const F1_KEYSYM: u32 = 0xffbe;
const FUNCTION_KEYS: u32 = 24;

/// The canonical names of the F-keys, F1 to F24.
static FUNCTION_NAMES: [&str; FUNCTION_KEYS as usize] = [
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "F13", "F14", "F15",
    "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24",
];

/// The key named `text` (any case, canonical names and aliases).
pub fn key(text: &str) -> Option<Key> {
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        let upper = c.to_ascii_uppercase();
        if let Some(index) = LETTERS.find(upper) {
            return Some(Key {
                name: &LETTERS[index..=index],
                keysym: u32::from(upper.to_ascii_lowercase()),
            });
        }
        if let Some(index) = DIGITS.find(c) {
            return Some(Key {
                name: &DIGITS[index..=index],
                keysym: u32::from(c),
            });
        }
    }
    if let Some(number) = text
        .strip_prefix(['F', 'f'])
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| (1..=FUNCTION_KEYS).contains(n) && !text[1..].starts_with(['0', '+']))
    {
        return Some(Key {
            name: FUNCTION_NAMES[number as usize - 1],
            keysym: F1_KEYSYM + number - 1,
        });
    }
    NAMED
        .iter()
        .find(|named| {
            named.name.eq_ignore_ascii_case(text)
                || named.aliases.iter().any(|a| a.eq_ignore_ascii_case(text))
        })
        .map(|named| Key {
            name: named.name,
            keysym: named.keysym,
        })
}

/// Every key name [`key`] accepts in canonical form, for help and error messages.
pub fn key_names() -> Vec<&'static str> {
    let letters = (0..LETTERS.len()).map(|i| &LETTERS[i..=i]);
    let digits = (0..DIGITS.len()).map(|i| &DIGITS[i..=i]);
    letters
        .chain(digits)
        .chain(FUNCTION_NAMES)
        .chain(NAMED.iter().map(|named| named.name))
        .collect()
}

/// A key combination: modifiers and one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shortcut {
    pub modifiers: Modifiers,
    pub key: Key,
}

/// Why a text is not a shortcut; the message says what would be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShortcutError {
    #[error("the shortcut is empty; write it like Ctrl+Alt+Space")]
    Empty,
    #[error(
        "'{0}' has an empty part; separate the keys with single '+' signs, like Ctrl+Alt+Space"
    )]
    EmptyPart(String),
    #[error("'{0}' names {1} twice")]
    Repeated(String, &'static str),
    #[error("'{0}' has no key besides its modifiers; end it with a key, like Ctrl+Alt+Space")]
    NoKey(String),
    #[error("'{shortcut}': '{part}' is not a key name. Valid keys: {}. Modifiers: Ctrl (Control), Alt, Shift, Super (Meta, Win)", key_names().join(", "))]
    UnknownKey { shortcut: String, part: String },
    #[error(
        "'{shortcut}': '{part}' is not a modifier. Modifiers: Ctrl (Control), Alt, Shift, Super (Meta, Win); the key comes last"
    )]
    UnknownModifier { shortcut: String, part: String },
    #[error(
        "'{0}' would take a key from typing: add Ctrl, Alt or Super (only F1-F24, Pause, Print, ScrollLock and Menu work alone)"
    )]
    NeedsModifier(String),
}

impl FromStr for Shortcut {
    type Err = ShortcutError;

    /// `Modifier+...+Key`, any case, spaces around the parts allowed.
    fn from_str(text: &str) -> Result<Shortcut, ShortcutError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ShortcutError::Empty);
        }
        let parts: Vec<&str> = text.split('+').map(str::trim).collect();
        if parts.iter().any(|part| part.is_empty()) {
            return Err(ShortcutError::EmptyPart(text.into()));
        }
        let (last, leading) = parts.split_last().expect("split yields one part at least");
        let mut modifiers = Modifiers::default();
        for part in leading {
            let modifier = Modifier::parse(part).ok_or_else(|| match key(part) {
                Some(_) => ShortcutError::UnknownModifier {
                    shortcut: text.into(),
                    part: part.to_string(),
                },
                None => ShortcutError::UnknownKey {
                    shortcut: text.into(),
                    part: part.to_string(),
                },
            })?;
            if modifiers.contains(modifier) {
                return Err(ShortcutError::Repeated(text.into(), modifier.name()));
            }
            modifiers.insert(modifier);
        }
        let key = match key(last) {
            Some(key) => key,
            None if Modifier::parse(last).is_some() => {
                return Err(ShortcutError::NoKey(text.into()));
            }
            None => {
                return Err(ShortcutError::UnknownKey {
                    shortcut: text.into(),
                    part: last.to_string(),
                });
            }
        };
        let typing_safe = [Modifier::Ctrl, Modifier::Alt, Modifier::Super]
            .into_iter()
            .any(|m| modifiers.contains(m));
        if !typing_safe && !key.standalone() {
            return Err(ShortcutError::NeedsModifier(text.into()));
        }
        Ok(Shortcut { modifiers, key })
    }
}

impl fmt::Display for Shortcut {
    /// The canonical form: `Ctrl+Alt+Shift+Super+Key`, modifiers in that order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for modifier in self.modifiers.iter() {
            write!(f, "{}+", modifier.name())?;
        }
        f.write_str(self.key.name)
    }
}

impl Shortcut {
    /// The trigger in the XDG shortcuts syntax the GlobalShortcuts portal reads
    /// (`CTRL+ALT+space`).
    pub fn portal_trigger(&self) -> String {
        let mut parts: Vec<String> = self
            .modifiers
            .iter()
            .map(|m| m.portal_name().to_string())
            .collect();
        parts.push(self.key.portal_name());
        parts.join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Shortcut, ShortcutError> {
        text.parse()
    }

    fn canonical(text: &str) -> String {
        parse(text).unwrap().to_string()
    }

    #[test]
    fn spellings_and_case_give_one_canonical_form() {
        assert_eq!(canonical("Ctrl+Alt+Space"), "Ctrl+Alt+Space");
        assert_eq!(canonical("alt+control+space"), "Ctrl+Alt+Space");
        assert_eq!(canonical(" CTRL + ALT + SPACE "), "Ctrl+Alt+Space");
        assert_eq!(canonical("win+shift+d"), "Shift+Super+D");
        assert_eq!(canonical("Meta+return"), "Super+Enter");
        assert_eq!(canonical("ctrl+pgdn"), "Ctrl+PageDown");
        assert_eq!(canonical("Ctrl+-"), "Ctrl+Minus");
        assert_eq!(canonical("ctrl+alt+f12"), "Ctrl+Alt+F12");
        assert_eq!(canonical("F9"), "F9");
        assert_eq!(canonical("shift+pause"), "Shift+Pause");
        assert_eq!(canonical("Super+7"), "Super+7");
        assert_eq!(parse("control+alt+SPACE"), parse("Alt+Ctrl+Space"));
    }

    #[test]
    fn the_canonical_form_reads_back_as_itself() {
        for name in key_names() {
            let text = format!("Ctrl+Alt+Shift+Super+{name}");
            assert_eq!(canonical(&text), text);
            assert_eq!(canonical(&canonical(&text.to_lowercase())), text);
        }
    }

    #[test]
    fn every_key_name_maps_to_its_own_keysym() {
        let names = key_names();
        let mut keysyms: Vec<u32> = names.iter().map(|n| key(n).unwrap().keysym()).collect();
        assert_eq!(key("a").unwrap().keysym(), 0x61);
        assert_eq!(key("Z").unwrap().keysym(), 0x7a);
        assert_eq!(key("0").unwrap().keysym(), 0x30);
        assert_eq!(key("F1").unwrap().keysym(), 0xffbe);
        assert_eq!(key("F24").unwrap().keysym(), 0xffd5);
        assert_eq!(key("Space").unwrap().keysym(), 0x20);
        assert_eq!(key("Return").unwrap().keysym(), 0xff0d);
        assert_eq!(names.len(), 26 + 10 + 24 + NAMED.len());
        keysyms.sort_unstable();
        keysyms.dedup();
        assert_eq!(keysyms.len(), names.len(), "two names share a keysym");
    }

    #[test]
    fn invalid_shortcuts_say_what_is_wrong() {
        assert_eq!(parse("  "), Err(ShortcutError::Empty));
        assert!(matches!(
            parse("Ctrl++Space"),
            Err(ShortcutError::EmptyPart(_))
        ));
        assert!(matches!(
            parse("Ctrl+Space+"),
            Err(ShortcutError::EmptyPart(_))
        ));
        assert!(matches!(parse("Ctrl+Alt"), Err(ShortcutError::NoKey(_))));
        assert!(matches!(
            parse("Ctrl+ctrl+A"),
            Err(ShortcutError::Repeated(_, "Ctrl"))
        ));
        assert!(matches!(
            parse("A+B"),
            Err(ShortcutError::UnknownModifier { .. })
        ));
        assert!(matches!(
            parse("Space"),
            Err(ShortcutError::NeedsModifier(_))
        ));
        assert!(matches!(
            parse("Shift+A"),
            Err(ShortcutError::NeedsModifier(_))
        ));
        assert!(matches!(
            parse("F25"),
            Err(ShortcutError::UnknownKey { .. })
        ));
        assert!(matches!(parse("F0"), Err(ShortcutError::UnknownKey { .. })));
        assert!(matches!(
            parse("Ctrl+F01"),
            Err(ShortcutError::UnknownKey { .. })
        ));
        assert!(matches!(
            parse("Ctrl+é"),
            Err(ShortcutError::UnknownKey { .. })
        ));
    }

    #[test]
    fn an_unknown_key_lists_the_valid_names() {
        let message = parse("Ctrl+Alt+Spcae").unwrap_err().to_string();
        assert!(
            message.starts_with("'Ctrl+Alt+Spcae': 'Spcae' is not a key name."),
            "{message}"
        );
        for name in ["Space", "F24", "PageDown", "Z", "9", "BracketLeft"] {
            assert!(message.contains(name), "{name} missing from {message}");
        }
        assert!(message.contains("Super (Meta, Win)"), "{message}");
        let hyper = parse("Hyper+A").unwrap_err().to_string();
        assert!(hyper.contains("'Hyper' is not a key name"), "{hyper}");
    }

    #[test]
    fn the_portal_trigger_uses_xkb_names() {
        assert_eq!(
            parse("Ctrl+Alt+Space").unwrap().portal_trigger(),
            "CTRL+ALT+space"
        );
        assert_eq!(
            parse("Super+Shift+PageUp").unwrap().portal_trigger(),
            "SHIFT+LOGO+Prior"
        );
        assert_eq!(parse("Ctrl+d").unwrap().portal_trigger(), "CTRL+d");
        assert_eq!(parse("F9").unwrap().portal_trigger(), "F9");
    }
}
