//! Listing folders ahead of the walk, on helper threads: the walk (`job/walk.rs`) takes
//! each folder's sorted entries from here when a helper has listed it already, waits when
//! one is listing it, and lists it itself otherwise, so the order and the events stay those
//! of the walk alone.
//!
//! Why: listing a tree is the kernel's `getdents64` and one `fstatat` a file, a few
//! microseconds each and nothing else to overlap them with on a re-run into an unchanged
//! store; on two cores, two listers halve it (`benches/NOTES.md`). Whoever lists a folder
//! queues its subfolders at the front of the queue, in order, so the helpers list in the
//! walk's own order (depth first), just ahead of it. At most `AHEAD` listings wait to be
//! taken, so memory stays bounded on any tree however slowly the run consumes it.

use std::collections::{HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::listing::{join, list, Entry};

/// Listings done and not yet taken, at most.
const AHEAD: usize = 4096;

/// Where a queued folder stands.
#[derive(Debug)]
enum FolderSlot {
    /// In the queue, listed by nobody yet.
    Queued,
    /// Being listed by a helper.
    Busy,
    /// Listed: its entries, or why it could not be.
    Done(io::Result<Vec<Entry>>),
}

#[derive(Debug, Default)]
struct PrefetchState {
    /// Folders to list, the next first.
    queue: VecDeque<OsString>,
    /// Every folder queued and not yet taken by the walk.
    slots: HashMap<OsString, FolderSlot>,
    /// Listings done and not yet taken.
    done: usize,
    /// Set when the walk is dropped: the helpers stop.
    stop: bool,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<PrefetchState>,
    /// A helper finished a listing (the walk may be waiting for it).
    listed: Condvar,
    /// Work was queued, a listing taken, or the walk stopped (helpers may be waiting).
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, PrefetchState> {
        // A helper that panicked leaves consistent state behind (every change is one step).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Helper threads listing the walk's folders ahead of it.
#[derive(Debug)]
pub struct Prefetch {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
}

impl Prefetch {
    /// `threads` helpers (at least one).
    #[must_use]
    pub fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(PrefetchState::default()),
            listed: Condvar::new(),
            changed: Condvar::new(),
        });
        let helpers = (0..threads.max(1))
            .map(|_| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || help(&shared))
            })
            .collect();
        Self { shared, helpers }
    }

    /// Queues `folders` (the PATHs of a walk, so listing starts before the walk does).
    pub fn queue(&self, folders: &[OsString]) {
        let mut state = self.shared.lock();
        for folder in folders {
            if !state.slots.contains_key(folder) {
                state.slots.insert(folder.clone(), FolderSlot::Queued);
                state.queue.push_back(folder.clone());
            }
        }
        drop(state);
        self.shared.changed.notify_all();
    }

    /// The entries of `folder`, sorted: a helper's listing when there is one (waiting for
    /// it when a helper is at it), else listed here; its subfolders are queued either way.
    ///
    /// # Errors
    /// The folder could not be listed.
    pub fn take(&self, folder: &OsStr) -> io::Result<Vec<Entry>> {
        let mut state = self.shared.lock();
        loop {
            match state.slots.remove(folder) {
                Some(FolderSlot::Done(listing)) => {
                    state.done -= 1;
                    drop(state);
                    self.shared.changed.notify_all();
                    return listing;
                }
                Some(FolderSlot::Busy) => {
                    state.slots.insert(folder.to_owned(), FolderSlot::Busy);
                    state = self
                        .shared
                        .listed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                // Queued (a helper that pops it finds no slot and passes), or never queued.
                Some(FolderSlot::Queued) | None => {
                    drop(state);
                    let listing = list(folder);
                    if let Ok(entries) = &listing {
                        queue_subfolders(&self.shared, folder, entries);
                    }
                    return listing;
                }
            }
        }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        for helper in self.helpers.drain(..) {
            let _ = helper.join();
        }
    }
}

/// The subfolders the walk will open (not hidden, not links), at the front of the queue in
/// their order.
fn queue_subfolders(shared: &Shared, folder: &OsStr, entries: &[Entry]) {
    let subfolders: Vec<OsString> = entries
        .iter()
        .filter(|(name, kind, _)| {
            name.as_bytes().first() != Some(&b'.') && kind.is_some_and(|kind| kind.is_dir())
        })
        .map(|(name, _, _)| join(folder, name))
        .collect();
    if subfolders.is_empty() {
        return;
    }
    let mut state = shared.lock();
    for subfolder in subfolders.into_iter().rev() {
        if !state.slots.contains_key(&subfolder) {
            state.slots.insert(subfolder.clone(), FolderSlot::Queued);
            state.queue.push_front(subfolder);
        }
    }
    drop(state);
    shared.changed.notify_all();
}

/// A helper: lists the next queued folder the walk has not claimed, until the walk stops.
fn help(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        let next = if state.done < AHEAD {
            state.queue.pop_front()
        } else {
            None
        };
        let Some(folder) = next else {
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        match state.slots.get_mut(&folder) {
            Some(slot @ FolderSlot::Queued) => *slot = FolderSlot::Busy,
            _ => continue, // claimed by the walk
        }
        drop(state);
        let listing = list(&folder);
        if let Ok(entries) = &listing {
            queue_subfolders(shared, &folder, entries);
        }
        state = shared.lock();
        state.slots.insert(folder, FolderSlot::Done(listing));
        state.done += 1;
        shared.listed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::super::walk::{Event, NoGlobs, Walk};
    use std::fs;
    use std::os::unix::fs::symlink;

    fn events(mut walk: Walk) -> Vec<Event> {
        let mut out = Vec::new();
        loop {
            let wanted = out.len() + 5;
            let Ok(more) = walk.next_events(&mut NoGlobs, &mut out, wanted);
            if !more {
                return out;
            }
        }
    }

    #[test]
    fn a_walk_listed_ahead_finds_what_a_walk_alone_finds_in_its_order() {
        let root = std::env::temp_dir().join(format!("spanchunk-prefetch-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for a in 0..6 {
            for b in 0..5 {
                let folder = root.join(format!("d{a}/e{b}"));
                fs::create_dir_all(folder.join(".hidden")).unwrap();
                for c in 0..4 {
                    fs::write(folder.join(format!("f{c}.txt")), "x").unwrap();
                }
                fs::write(folder.join(".hidden/no.txt"), "x").unwrap();
            }
        }
        fs::create_dir(root.join("closed")).unwrap();
        symlink(root.join("d0"), root.join("link")).unwrap(); // said, not followed
        let paths = vec![
            root.clone().into_os_string(),
            root.join("d1").into_os_string(),
        ];
        let alone = events(Walk::new(paths.clone()));
        assert_eq!(alone.len(), 6 * 5 * 4 + 1); // the files, and the folder link
        for threads in [1, 2, 4] {
            assert_eq!(events(Walk::with_prefetch(paths.clone(), threads)), alone);
        }
        // A walk dropped half way stops its helpers.
        let mut walk = Walk::with_prefetch(paths, 2);
        let mut out = Vec::new();
        let _ = walk.next_events(&mut NoGlobs, &mut out, 3);
        drop(walk);
        fs::remove_dir_all(&root).unwrap();
    }
}
