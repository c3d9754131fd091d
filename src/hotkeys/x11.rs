//! The X11 backend: grabs each binding's key on the root window (XGrabKey through x11rb), with
//! the CapsLock and NumLock variants so that those locks do not hide a press, and reads the key
//! events on a thread of its own. The bindings are re-read from the store every
//! [`bindings::POLL`]; on a change every grab is released and the new set taken.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt, Grab, GrabMode, Keycode, ModMask, Window};
use x11rb::protocol::{ErrorKind, Event};
use x11rb::rust_connection::RustConnection;

use super::bindings::{self, Binding, Watch};
use super::shortcut::{Modifier, Modifiers};
use super::slots::Slot;
use super::{Presses, SharedStatus, Status};
use crate::store::Store;

type Failure = Box<dyn std::error::Error + Send + Sync>;

// The core protocol's modifier bits (x11rb's `ModMask` values, usable in constants).
const SHIFT: u16 = 1;
const LOCK: u16 = 1 << 1;
const CONTROL: u16 = 1 << 2;
const MOD1: u16 = 1 << 3;
const MOD2: u16 = 1 << 4;
const MOD4: u16 = 1 << 6;
/// The modifier bits a binding is matched on (locks and mouse buttons are not).
const MATCHED: u16 = SHIFT | CONTROL | MOD1 | MOD4;
/// NumLock's keysym, to find which modifier bit it sets.
const NUM_LOCK_KEYSYM: u32 = 0xff7f;
/// A press of a key already held counts as new after this long without an event of that key
/// (a lost release must not block the key for good); auto-repeat sends one every ~40 ms.
const HELD_FOR_GOOD: u32 = 1000;

/// Starts the backend thread for `display`.
pub(super) fn spawn(display: String, store: Arc<Store>, presses: Presses, status: SharedStatus) {
    let thread_status = status.clone();
    let started = std::thread::Builder::new()
        .name("hotkeys-x11".into())
        .spawn(move || {
            if let Err(err) = run(&display, &store, &presses, &thread_status) {
                thread_status.give_up(format!("X11 display {display}: {err}"));
            }
        });
    if let Err(err) = started {
        status.give_up(format!("cannot start the X11 hotkey thread: {err}"));
    }
}

fn modifier_mask(modifier: Modifier) -> u16 {
    match modifier {
        Modifier::Ctrl => CONTROL,
        // The usual X11 mapping: Alt on Mod1, Super on Mod4.
        Modifier::Alt => MOD1,
        Modifier::Shift => SHIFT,
        Modifier::Super => MOD4,
    }
}

fn mask_of(modifiers: Modifiers) -> u16 {
    modifiers
        .iter()
        .map(modifier_mask)
        .fold(0, |mask, bit| mask | bit)
}

/// The keyboard as the server maps it: keysyms per keycode, and NumLock's modifier bit.
struct Keymap {
    first: Keycode,
    per_keycode: usize,
    keysyms: Vec<u32>,
    num_lock: u16,
}

impl Keymap {
    fn read(conn: &RustConnection) -> Result<Keymap, Failure> {
        let setup = conn.setup();
        let (first, last) = (setup.min_keycode, setup.max_keycode);
        let mapping = conn
            .get_keyboard_mapping(first, last - first + 1)?
            .reply()?;
        let mut keymap = Keymap {
            first,
            per_keycode: usize::from(mapping.keysyms_per_keycode),
            keysyms: mapping.keysyms,
            num_lock: MOD2,
        };
        let modifiers = conn.get_modifier_mapping()?.reply()?;
        let per_modifier = usize::from(modifiers.keycodes_per_modifier()).max(1);
        let num_lock_keys = keymap.keycodes(NUM_LOCK_KEYSYM);
        if let Some(index) = modifiers
            .keycodes
            .iter()
            .position(|code| *code != 0 && num_lock_keys.contains(code))
        {
            keymap.num_lock = 1 << (index / per_modifier);
        }
        Ok(keymap)
    }

    /// The keycodes that type `keysym` unshifted or shifted.
    fn keycodes(&self, keysym: u32) -> Vec<Keycode> {
        if self.per_keycode == 0 {
            return Vec::new();
        }
        self.keysyms
            .chunks(self.per_keycode)
            .enumerate()
            .filter(|(_, row)| row.iter().take(2).any(|sym| *sym == keysym))
            .filter_map(|(index, _)| Keycode::try_from(usize::from(self.first) + index).ok())
            .collect()
    }

    /// The lock combinations each grab is repeated with.
    fn lock_variants(&self) -> [u16; 4] {
        let caps = LOCK;
        [0, caps, self.num_lock, caps | self.num_lock]
    }
}

/// The grabs held: which slot each (keycode, modifiers) pair stands for.
#[derive(Default)]
struct Grabs(HashMap<(Keycode, u16), &'static Slot>);

impl Grabs {
    fn slot(&self, keycode: Keycode, state: u16) -> Option<&'static Slot> {
        self.0.get(&(keycode, state & MATCHED)).copied()
    }
}

/// Releases every grab and takes those of `bindings`; a binding that cannot be grabbed is
/// logged with the fix.
fn grab_all(
    conn: &RustConnection,
    root: Window,
    keymap: &Keymap,
    bindings: &[Binding],
) -> Result<Grabs, Failure> {
    conn.ungrab_key(Grab::ANY, root, ModMask::ANY)?.check()?;
    let mut grabs = Grabs::default();
    for binding in bindings {
        let (name, shortcut) = (binding.slot.name, binding.shortcut);
        let keycodes = keymap.keycodes(shortcut.key.keysym());
        if keycodes.is_empty() {
            tracing::warn!(
                "hotkey {name} ({shortcut}): the keyboard has no {} key; choose another with `verbatim config hotkey {name} SHORTCUT`",
                shortcut.key.name()
            );
            continue;
        }
        let mask = mask_of(shortcut.modifiers);
        let mut taken_elsewhere = false;
        for &keycode in &keycodes {
            for lock in keymap.lock_variants() {
                let grabbed = conn
                    .grab_key(
                        false,
                        root,
                        ModMask::from(mask | lock),
                        keycode,
                        GrabMode::ASYNC,
                        GrabMode::ASYNC,
                    )?
                    .check();
                match grabbed {
                    Ok(()) => {}
                    Err(ReplyError::X11Error(err)) if err.error_kind == ErrorKind::Access => {
                        taken_elsewhere = true;
                    }
                    Err(err) => return Err(err.into()),
                }
            }
            grabs.0.insert((keycode, mask), binding.slot);
        }
        if taken_elsewhere {
            tracing::warn!(
                "hotkey {name} ({shortcut}): another program already holds this key combination (X11 BadAccess), so it may not reach Verbatim; free it there, or choose another with `verbatim config hotkey {name} SHORTCUT`"
            );
        }
    }
    Ok(grabs)
}

/// Presses of held keys: auto-repeat must not toggle dictation over and over.
#[derive(Default)]
struct Held(HashMap<Keycode, u32>);

impl Held {
    /// Whether a press of `keycode` at `time` (ms) is a new press.
    fn pressed(&mut self, keycode: Keycode, time: u32) -> bool {
        let previous = self.0.insert(keycode, time);
        previous.is_none_or(|last| time.wrapping_sub(last) > HELD_FOR_GOOD)
    }

    fn released(&mut self, keycode: Keycode) {
        self.0.remove(&keycode);
    }
}

fn run(
    display: &str,
    store: &Store,
    presses: &Presses,
    status: &SharedStatus,
) -> Result<(), Failure> {
    let (conn, screen) = x11rb::connect(Some(display))?;
    let root = conn
        .setup()
        .roots
        .get(screen)
        .ok_or("the display has no such screen")?
        .root;
    let mut keymap = Keymap::read(&conn)?;
    let mut watch = Watch::default();
    let mut bindings = Vec::new();
    let mut grabs = Grabs::default();
    let mut held = Held::default();
    let mut next_check = Instant::now();
    loop {
        if Instant::now() >= next_check {
            if let Some(changed) = watch.changed(store) {
                bindings = changed;
                grabs = grab_all(&conn, root, &keymap, &bindings)?;
                let bound = bindings::describe(&bindings);
                let name = display;
                tracing::info!("global hotkeys (X11 display {name}): {bound}");
                status.set(Status {
                    backend: Some("x11"),
                    detail: format!("X11 display {display}; bound: {bound}"),
                });
            }
            next_check = Instant::now() + bindings::POLL;
        }
        let mut pending = conn.poll_for_event()?;
        while let Some(event) = pending.take() {
            match event {
                Event::KeyPress(press) => {
                    if held.pressed(press.detail, press.time)
                        && let Some(slot) = grabs.slot(press.detail, u16::from(press.state))
                    {
                        // The dispatcher ends only with the runtime, and so does the server.
                        let _ = presses.send(slot);
                    }
                }
                Event::KeyRelease(release) => {
                    // Auto-repeat: a release followed at once by a press of the same key at the
                    // same time. The key is still held; both are skipped.
                    match conn.poll_for_event()? {
                        Some(Event::KeyPress(next))
                            if next.detail == release.detail && next.time == release.time =>
                        {
                            held.pressed(next.detail, next.time);
                        }
                        next => {
                            held.released(release.detail);
                            pending = next;
                        }
                    }
                }
                Event::MappingNotify(_) => {
                    keymap = Keymap::read(&conn)?;
                    grabs = grab_all(&conn, root, &keymap, &bindings)?;
                }
                _ => {}
            }
            if pending.is_none() {
                pending = conn.poll_for_event()?;
            }
        }
        wait_readable(&conn, next_check.saturating_duration_since(Instant::now()))?;
    }
}

/// Waits until the connection has something to read, or `timeout` has passed.
fn wait_readable(conn: &RustConnection, timeout: Duration) -> std::io::Result<()> {
    let mut fd = libc::pollfd {
        fd: conn.stream().as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = timeout.as_millis().clamp(1, 60_000) as libc::c_int;
    // SAFETY: one valid pollfd for the duration of the call.
    let ready = unsafe { libc::poll(&mut fd, 1, millis) };
    if ready < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_repeat_is_one_press_and_a_lost_release_does_not_block_the_key() {
        let mut held = Held::default();
        assert!(held.pressed(65, 1000));
        assert!(!held.pressed(65, 1040));
        assert!(!held.pressed(65, 1080));
        held.released(65);
        assert!(held.pressed(65, 1500));
        // No release came; long after, the key counts as pressed again.
        assert!(held.pressed(65, 4000));
        assert!(held.pressed(66, 4000));
    }

    #[test]
    fn locks_do_not_change_which_slot_a_press_is() {
        let slot = super::super::slots::find("dictation.toggle").unwrap();
        let mut grabs = Grabs::default();
        let mask = CONTROL | MOD1;
        grabs.0.insert((65, mask), slot);
        let caps_and_num = LOCK | MOD2;
        assert_eq!(grabs.slot(65, mask | caps_and_num), Some(slot));
        assert_eq!(grabs.slot(65, mask | SHIFT), None);
        assert_eq!(grabs.slot(66, mask), None);
    }
}
