"""Where a run writes, made safe: the output's real target, its kind, the lock that keeps two
runs apart, and the files of the run that must never be read as inputs.

- A symbolic link is written through: the target it names is replaced (the temporary file
  made next to the target), and the link stays.
- An output that is not a regular file (``-``, ``/dev/stdout``, ``/dev/null``, a FIFO) is
  streamed to as it is: nothing is renamed over it. A folder is refused.
- Every run into a file holds ``.NAME.lock`` beside it (an advisory ``flock``; the file
  holds the run's pid and is removed when it ends) from before it decides whether the
  output exists until it is done: a second run into the same file waits for the first,
  then sees its output (a store made by the first is updated by the second).
- Holding the lock, a run removes the temporary files (``.NAME.*.tmp``, with a store's
  ``-wal``, ``-shm`` and ``-journal``) that a killed run into the same output left: no live
  run holds them, since every run writes under the lock.
- The output, its temporary files, a store's ``-wal``, ``-shm`` and ``-journal`` and the lock
  are never inputs: given as a PATH, the run is refused; found inside a folder, they are left
  out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

if TYPE_CHECKING:
    from spanchunk.ingest.files import File

#: The files SQLite keeps beside a database while it is open.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")

#: Names of the standard output: written to the process's descriptor 1 as it is (a file
#: the shell opened for it is appended to or truncated as the shell said, never replaced).
STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")

#: The output kinds by name, for messages (each writer's suffixes are in ``_writers``).
KINDS_KNOWN = ".jsonl (or .json, .ndjson), .jsonl.gz, .parquet (.pq), .sqlite (.sqlite3, .db)"


class OutputError(ValueError):
    """The output cannot be written as asked (a usage error: the run does not start)."""


class Target(NamedTuple):
    """Where a run's output goes.

    ``given`` is the name on the command line; ``path`` the file written (a link's target,
    resolved; ``-`` for stdout); ``stream``, whether it is written to as it is (stdout, a
    device, a FIFO) instead of replaced through a temporary file; ``device`` and ``inode``
    those of the existing file (0 when there is none yet).
    """

    given: str
    path: str
    stream: bool
    device: int = 0
    inode: int = 0

    @property
    def exists(self) -> bool:
        """Whether a file is at ``path`` now (a stream always is)."""
        return self.stream or os.path.exists(self.path)

    def own_files(self) -> frozenset[str]:
        """The resolved paths of every file this run may write beside its output (the
        output, a store's side files, the lock): never inputs. Temporary files are hidden
        (their names start with a dot) and the walk leaves them out already."""
        if self.stream:
            return frozenset()
        folder, name = os.path.split(self.path)
        names = [name, *(name + suffix for suffix in SQLITE_SIDE_FILES), lock_name(name)]
        return frozenset(os.path.join(folder, each) for each in names)


def resolve_target(given: str) -> Target:
    """The output named ``given``, resolved.

    Raises:
        OutputError: a folder, or a name whose folder does not exist.
    """
    if given in STDOUT_NAMES:
        return Target(given, "-", stream=True)
    try:
        info = os.stat(given)
    except OSError:
        pass
    else:
        device = given.startswith("/dev/") and not stat.S_ISDIR(info.st_mode)
        if device or not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            # /dev/stdout, /dev/null, a FIFO: opened by the name given (resolving
            # /dev/stdout gives a pipe's name, which cannot be opened).
            return Target(given, given, stream=True, device=info.st_dev, inode=info.st_ino)
    path = os.path.realpath(given)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):
            raise OutputError(
                f"-o {given}: the folder {os.path.dirname(given) or folder} does not exist; "
                "create it first"
            ) from None
        return Target(given, path, stream=False)
    except OSError as error:
        raise OutputError(f"-o {given}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(
            f"-o {given}: is a folder; give a file name, e.g. -o "
            f"{os.path.join(given, 'chunks.jsonl')}"
        )
    return Target(
        given, path, stream=not stat.S_ISREG(info.st_mode), device=info.st_dev, inode=info.st_ino
    )


def check_not_an_input(target: Target, paths: list[str]) -> None:
    """Refuse a run whose output (or a file it writes beside it) is one of its PATHs, by
    device and inode or by resolved path, before anything is read or written.

    Raises:
        OutputError: naming both.
    """
    if target.stream and target.path == "-":
        return
    own = target.own_files()
    for given in paths:
        if given == "-":
            continue
        try:
            info = os.stat(given)
        except OSError:
            continue
        same_file = target.inode != 0 and (info.st_dev, info.st_ino) == (
            target.device,
            target.inode,
        )
        if same_file or os.path.realpath(given) in own:
            raise OutputError(
                f"-o {target.given} is also an input (the PATH {given}): writing it would "
                "replace what is being read. Write the chunks elsewhere, e.g. "
                f"-o {os.path.splitext(os.path.basename(target.path))[0] or 'chunks'}.chunks.jsonl"
            )


class OwnFiles:
    """Tells the files a run writes from its inputs: cheap per file (a set lookup of the
    resolved path the walk gives, and an inode compare for hard links)."""

    def __init__(self, target: Target) -> None:
        self._paths = target.own_files()
        self._inode = (target.device, target.inode) if target.inode else None

    def __contains__(self, file: File) -> bool:
        if file.resolved in self._paths:
            return True
        inode = self._inode
        return inode is not None and file.inode == inode[1] and file.device == inode[0]


def lock_name(name: str) -> str:
    """The lock file of the output named ``name`` (in the same folder)."""
    return f".{name}.lock"


class RunLock:
    """``.NAME.lock`` beside the output, held (``flock``) for the whole run; a second run
    waits for it, saying so on ``stream``. The file is removed when the run ends: a run that
    locks a file since removed (its holder ended between the open and the lock) opens the
    new one and locks again, so two runs never both hold the lock."""

    def __init__(self, target: Target, stream: TextIO | None, timeout: float | None = None) -> None:
        self._descriptor: int | None = None
        self._path = ""
        if target.stream:
            return
        import fcntl  # noqa: PLC0415  (POSIX only; imported when a run writes a file)

        folder, name = os.path.split(target.path)
        path = os.path.join(folder, lock_name(name))
        said = False
        while True:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
                    who = f" (pid {holder})" if holder.isdigit() else ""
                    if not said and stream is not None:
                        limit = "" if timeout is None else f", at most {timeout:g} s"
                        print(
                            f"spanchunk: waiting for another run writing {target.given}{who} "
                            f"to finish{limit}",
                            file=stream,
                            flush=True,
                        )
                        said = True
                    _wait_for_lock(fcntl, descriptor, timeout, target.given, who)
                try:
                    current = os.stat(path).st_ino
                except FileNotFoundError:
                    current = -1
                if current != os.fstat(descriptor).st_ino:
                    os.close(descriptor)  # removed by the run that held it: lock the new one
                    continue
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
            except BaseException:
                os.close(descriptor)
                raise
            break
        self._descriptor = descriptor
        self._path = path

    def release(self) -> None:
        """Remove the lock file and let the next run in."""
        if self._descriptor is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
            with contextlib.suppress(OSError):
                os.close(self._descriptor)
            self._descriptor = None


def _wait_for_lock(
    fcntl: Any, descriptor: int, timeout: float | None, given: str, who: str
) -> None:
    """Take the lock on ``descriptor``, waiting at most ``timeout`` seconds (None: as long
    as it takes).

    Raises:
        TimeoutError: the other run held it longer, naming the fix.
    """
    if timeout is None:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        return
    import time  # noqa: PLC0415

    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"another run writing {given}{who} held it for more than {timeout:g} s: "
                    "let it finish, or wait longer (--lock-timeout SECONDS, or "
                    "lock_timeout=...)"
                ) from None
            time.sleep(0.05)


def remove_stale_temporaries(target: Target) -> list[str]:
    """Remove the temporary files of killed runs into ``target`` (call with the run's lock
    held: no live run then owns one); returns their names."""
    if target.stream:
        return []
    folder, name = os.path.split(target.path)
    prefix = f".{name}."
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    for entry in entries:
        if not entry.startswith(prefix):
            continue
        body = entry[len(prefix) :]
        for suffix in ("", *SQLITE_SIDE_FILES):
            if body.endswith(".tmp" + suffix) and body != "lock":
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, entry))
                    removed.append(entry)
                break
    return sorted(removed)


def describe_os_error(error: OSError) -> str:
    """An ``OSError`` in plain words: the system's message (``No space left on device``),
    and the file when it names one."""
    words = error.strerror or str(error)
    if error.errno == errno.ENOSPC and "No space left on device" not in words:
        words = f"No space left on device ({words})"
    if error.filename and str(error.filename) not in words:
        words = f"{error.filename}: {words}"
    return words


def temporary_file(target: str) -> tuple[int, str]:
    """A new, empty file beside ``target`` (``.NAME.XXXXXXXX.tmp``, mode 0600; a killed
    run's is removed by the next run into ``target``, see ``remove_stale_temporaries``), opened for
    reading and writing: its descriptor and path.

    What ``tempfile.mkstemp`` does (a random name, created exclusively, retried on a clash),
    written here because importing ``tempfile`` (with ``shutil`` and ``random``) cost 5 ms of
    each run's 40 ms startup.
    """
    folder = os.path.dirname(os.path.abspath(target))
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = os.path.join(folder, f".{os.path.basename(target)}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")  # pragma: no cover


def mode_for(target: str) -> int:
    # temporary_file creates the file 0600; give it the mode an ordinary open() would have.
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
