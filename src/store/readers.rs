//! Read-only connections beside the writer. In WAL mode they read while a write transaction
//! runs (an import holding the writer never delays them), and every statement outside an
//! explicit transaction starts a fresh read transaction, so a read sees each committed write.
//! Long reads (searches, exports) take one of fewer [`Slots`], so short reads always find one.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::{CACHE_KIB, StoreError};

/// Read connections opened at most (each opened on first need).
pub const READERS: usize = 4;
/// Long reads at once: fewer than [`READERS`], so short reads never wait behind them.
pub const LONG_READS: usize = 2;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pool of read connections to one database file.
pub struct Readers {
    path: PathBuf,
    idle: Mutex<Idle>,
    returned: Condvar,
}

struct Idle {
    connections: Vec<Connection>,
    opened: usize,
}

impl Readers {
    pub fn new(path: &Path) -> Readers {
        Readers {
            path: path.to_path_buf(),
            idle: Mutex::new(Idle {
                connections: Vec::new(),
                opened: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// An idle connection, a new one while fewer than [`READERS`] are open, else the next
    /// one returned.
    pub fn take(&self) -> Result<Reader<'_>, StoreError> {
        let mut idle = lock(&self.idle);
        loop {
            if let Some(conn) = idle.connections.pop() {
                return Ok(Reader::new(conn, self));
            }
            if idle.opened < READERS {
                idle.opened += 1;
                drop(idle);
                return match open_reader(&self.path) {
                    Ok(conn) => Ok(Reader::new(conn, self)),
                    Err(err) => {
                        self.forget_one();
                        Err(err)
                    }
                };
            }
            idle = self
                .returned
                .wait(idle)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn forget_one(&self) {
        lock(&self.idle).opened -= 1;
        self.returned.notify_one();
    }
}

/// A connection that may only read: `query_only`, so a write sent to it by mistake fails.
fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(open_err)?;
    conn.pragma_update(None, "query_only", "ON")
        .map_err(open_err)?;
    conn.pragma_update(None, "cache_size", -CACHE_KIB)
        .map_err(open_err)?;
    Ok(conn)
}

/// A read connection, back in the pool when dropped.
pub struct Reader<'a> {
    conn: Option<Connection>,
    pool: &'a Readers,
}

impl<'a> Reader<'a> {
    fn new(conn: Connection, pool: &'a Readers) -> Reader<'a> {
        Reader {
            conn: Some(conn),
            pool,
        }
    }
}

impl std::ops::Deref for Reader<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("a reader holds its connection until dropped")
    }
}

impl std::ops::DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("a reader holds its connection until dropped")
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        // A transaction left open would pin an old snapshot: such a connection is closed.
        if conn.is_autocommit() {
            lock(&self.pool.idle).connections.push(conn);
            self.pool.returned.notify_one();
        } else {
            drop(conn);
            self.pool.forget_one();
        }
    }
}

/// A counting semaphore for blocking threads.
pub struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    pub fn new(count: usize) -> Slots {
        Slots {
            free: Mutex::new(count),
            freed: Condvar::new(),
        }
    }

    /// A slot, waiting as long as it takes.
    pub fn take(&self) -> Slot<'_> {
        let mut free = lock(&self.free);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *free -= 1;
        Slot(self)
    }

    /// A slot, or None when none frees up before `deadline`.
    pub fn take_until(&self, deadline: Instant) -> Option<Slot<'_>> {
        let mut free = lock(&self.free);
        while *free == 0 {
            let left = deadline.checked_duration_since(Instant::now())?;
            free = self
                .freed
                .wait_timeout(free, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        *free -= 1;
        Some(Slot(self))
    }
}

/// A taken slot, given back when dropped.
pub struct Slot<'a>(&'a Slots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *lock(&self.0.free) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    #[test]
    fn readers_are_reused_and_never_more_than_the_limit() {
        let (_dir, store) = temp_store();
        let held: Vec<_> = (0..READERS).map(|_| store.read().unwrap()).collect();
        assert_eq!(lock(&store.readers.idle).opened, READERS);
        let waiter = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let started = Instant::now();
                let reader = store.read().unwrap();
                drop(reader);
                started.elapsed()
            });
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
            waiter.join().unwrap()
        });
        assert!(waiter >= Duration::from_millis(150), "{waiter:?}");
        assert_eq!(lock(&store.readers.idle).opened, READERS);
    }

    #[test]
    fn a_reader_cannot_write_and_sees_each_committed_write() {
        let (_dir, store) = temp_store();
        let reader = store.read().unwrap();
        assert!(
            reader
                .execute("INSERT INTO secrets (name, value) VALUES ('a', 'b')", [])
                .is_err()
        );
        store.set_secret("a", "1").unwrap();
        assert_eq!(store.secret("a").unwrap().as_deref(), Some("1"));
        store.set_secret("a", "2").unwrap();
        let read: String = reader
            .query_row("SELECT value FROM secrets WHERE name = 'a'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(read, "2");
    }

    #[test]
    fn reads_go_on_while_a_write_transaction_is_open() {
        let (_dir, store) = temp_store();
        store.set_secret("a", "before").unwrap();
        let mut writer = store.conn();
        let tx = writer.transaction().unwrap();
        tx.execute("UPDATE secrets SET value = 'during' WHERE name = 'a'", [])
            .unwrap();
        assert_eq!(store.secret("a").unwrap().as_deref(), Some("before"));
        tx.commit().unwrap();
        drop(writer);
        assert_eq!(store.secret("a").unwrap().as_deref(), Some("during"));
    }

    #[test]
    fn short_reads_find_a_reader_while_every_long_read_slot_is_taken() {
        let (_dir, store) = temp_store();
        let long: Vec<_> = (0..LONG_READS)
            .map(|_| store.long_read().unwrap())
            .collect();
        let started = Instant::now();
        for _ in 0..100 {
            store
                .pref(&crate::store::preferences::SELECTED_MODEL)
                .unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(long);
    }

    #[test]
    fn a_slot_frees_up_for_the_next_taker_or_the_deadline_passes() {
        let slots = Slots::new(1);
        let first = slots.take();
        let soon = Instant::now() + Duration::from_millis(100);
        assert!(slots.take_until(soon).is_none());
        assert!(Instant::now() >= soon);
        drop(first);
        assert!(slots.take_until(Instant::now()).is_some());
    }
}
