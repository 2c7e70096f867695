"""Atomic writes: every file warpviz writes appears whole or not at all (no Qt).

A temporary file of its own beside the target (``tempfile.mkstemp``: unique per writer,
so two threads or processes writing one path never share it), given the mode the target
has or, for a new file, what the umask makes of 0666 (mkstemp makes it private, 0600);
written, flushed to the disk (``fsync``), then renamed over the target, and the folder
flushed too where the platform allows it (so the rename itself survives a power cut). On
any failure (a full disk, a file-size limit, a quota) the temporary file is removed and the
target keeps its old content. ``write_atomic`` raises ``WriteError`` then: an ``OSError``
and a ``WarpvizError`` whose message names the file and says what went wrong in words.

``viz.export`` builds its exports on ``temp_beside`` and ``commit``; results files,
calibrations, traces, the compile cache and the app's scenarios, autosaves and recovery
files use ``write_atomic`` / ``atomic_target``.

Names made from what a file says (a trace's ``name``, a scenario's title) become file
names only through ``safe_name`` (one path component, no folder, no ``..``; by
``pathvalidate``), and ``inside`` checks that a path stays in its folder.

Only regular files are written: a target that is a FIFO, a device, a socket or a folder
(or a link to one, or anything under /dev, /proc or /sys) is refused before anything is
written (``SpecialFileError``, a ``WriteError``), and checked again just before the rename.
A target that is a symbolic link is written where the link points (the file it names gets
the new content, the link stays a link). ``write_new`` writes a file that must not exist
yet (never replacing another writer's file of the same name: two windows saving a copy at
once get two files).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from .errors import WarpvizError
from .i18n import tr

_UMASK: int | None = None
_UMASK_LOCK = threading.Lock()


def umask() -> int:
    """The process umask (read once: os.umask can only be read by setting it)."""
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


# ---------------------------------------------------------------------------- errors in words


def os_error_words(err: BaseException) -> str:
    """What an OSError means for the user, in words, with the system's own text after it:
    "the disk is full (No space left on device)"."""
    if not isinstance(err, OSError):
        return str(err)
    system = err.strerror or str(err)
    words = {
        errno.ENOSPC: tr("the disk is full"),
        errno.EFBIG: tr("the file is larger than this disk or the file-size limit allows"),
        errno.EDQUOT: tr("your disk quota is used up"),
        errno.EACCES: tr("permission denied"),
        errno.EPERM: tr("permission denied"),
        errno.EROFS: tr("the disk is read-only"),
        errno.EIO: tr("the disk reported an input/output error"),
    }.get(err.errno)
    return f"{words} ({system})" if words else system


def write_failure(path: str | os.PathLike, err: BaseException) -> str:
    """The one-sentence message for a write of ``path`` that failed with ``err``."""
    return tr("Could not write {path}: {why}. The file keeps its old content.", path=path,
              why=os_error_words(err))


class WriteError(WarpvizError, OSError):
    """A write that failed; the target was left as it was. ``str(err)`` is the message for
    the user (``write_failure``); ``errno``, ``strerror`` and ``filename`` are the OS error's."""

    def __init__(self, path: str | os.PathLike, err: OSError):
        OSError.__init__(self, err.errno, err.strerror or str(err), str(path))
        self.path = Path(path)
        self.cause = err

    def __str__(self) -> str:
        return write_failure(self.path, self.cause)


def _kind_of(mode: int) -> str:
    return (tr("a FIFO (named pipe)") if stat.S_ISFIFO(mode) else tr("a character device") if stat.S_ISCHR(mode)
            else tr("a block device") if stat.S_ISBLK(mode) else tr("a socket") if stat.S_ISSOCK(mode)
            else tr("a folder") if stat.S_ISDIR(mode) else tr("not a regular file"))


class SpecialFileError(WriteError):
    """The target is not a regular file (a FIFO, a device, a socket, a folder, a system file
    under /dev, /proc or /sys): nothing was written and it was left as it was."""

    def __init__(self, path: str | os.PathLike, what: str):
        WriteError.__init__(self, path, OSError(errno.EEXIST, what))
        self.what = what

    def __str__(self) -> str:
        return tr("Will not write {path}: it is {what}, not a regular file; warpviz writes only regular files "
                  "and leaves this one as it is. Choose another file name.", path=self.path, what=self.what)


_SYSTEM = ("/dev", "/proc", "/sys")


def real_target(path: str | os.PathLike) -> Path:
    """Where a write of ``path`` lands: ``path`` itself, or, when it is a symbolic link, the
    file the link names (written there, so the link stays the user's link). Raises
    ``SpecialFileError`` when that is not a regular file (or a file yet to be made): a FIFO,
    a device, a socket, a folder, anything under /dev, /proc or /sys. Never opens it (a FIFO
    would block)."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise WriteError(path, err) from err
    real = path
    if st is not None and stat.S_ISLNK(st.st_mode):
        real = Path(os.path.realpath(path))
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None                       # a dangling link: the file it names is made
        except OSError as err:
            raise WriteError(path, err) from err
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise SpecialFileError(path, _kind_of(st.st_mode))
    if sys.platform.startswith("linux") or sys.platform == "darwin":
        full = os.path.realpath(os.path.abspath(real))
        for d in _SYSTEM:
            if full == d or full.startswith(d + "/"):
                raise SpecialFileError(path, tr("a system file (under {folder})", folder=d))
    return real


def check_regular(path: str | os.PathLike) -> None:
    """``real_target`` for its check alone (SpecialFileError; nothing else)."""
    real_target(path)


# ---------------------------------------------------------------------------- flushing


def fsync_file(path: str | os.PathLike) -> None:
    """Flush ``path``'s data to the disk (raises OSError: a disk that fails to take it)."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    except PermissionError:           # a read-only mode copied from the target: Linux syncs through any fd
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: str | os.PathLike) -> None:
    """Flush a folder's entries (a rename into it) where the platform allows: not on Windows,
    and quietly not on file systems that refuse to sync a folder."""
    if os.name == "nt":
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """A finished temporary file becomes ``path``: fsync, rename over it, fsync the folder.
    ``path`` is checked again first (``real_target``: a FIFO or a device put there since is
    refused, SpecialFileError; a link is written through)."""
    real = real_target(path)
    fsync_file(tmp)
    os.replace(tmp, real)
    fsync_folder(real.parent)


def commit_new(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """Like ``commit``, for a ``path`` that must not exist: FileExistsError (``tmp`` left for
    the caller to remove) when another writer made it first; never replaces it. A hard link,
    which fails when the name exists, then the temporary name removed; where the file system
    has no hard links, the name is reserved with O_EXCL and the temporary file renamed over
    that empty file of our own."""
    path = Path(path)
    fsync_file(tmp)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:                     # no hard links here (FAT, some network file systems)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)      # FileExistsError: taken
        os.close(fd)
        try:
            os.replace(tmp, path)
        except BaseException:
            path.unlink(missing_ok=True)        # the empty file we reserved
            raise
    else:
        os.unlink(tmp)
    fsync_folder(path.parent)


# ---------------------------------------------------------------------------- writing


def temp_beside(path: Path, prefix: str | None = None, suffix: str = ".tmp", folder: Path | None = None) -> Path:
    """A new, empty temporary file in ``folder`` (default: ``path``'s folder), named
    ``.<name>.XXXX<suffix>`` unless ``prefix`` is given, with the mode ``path`` has or would
    get. Raises OSError."""
    path = real_target(path)
    fd, name = tempfile.mkstemp(dir=folder if folder is not None else path.parent,
                                prefix=prefix if prefix is not None else f".{path.name}.", suffix=suffix)
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:                       # none yet (or removed by another writer meanwhile)
        mode = 0o666 & ~umask()
    try:
        os.fchmod(fd, mode)
    except (OSError, AttributeError):     # AttributeError: no fchmod on Windows
        pass
    os.close(fd)
    return Path(name)


@contextmanager
def atomic_target(path: str | os.PathLike, new: bool = False):
    """``with atomic_target(path) as tmp:`` write ``tmp`` (by name); leaving the block
    flushes it and renames it over ``path`` (``commit``); an exception removes it and leaves
    ``path`` as it was. ``new``: ``path`` must not exist (``commit_new``: FileExistsError
    when another writer made it meanwhile). SpecialFileError, before anything is written,
    when ``path`` is a FIFO, a device or another special file."""
    path = Path(path)
    tmp = temp_beside(path)
    try:
        yield tmp
        (commit_new if new else commit)(tmp, path)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass


def write_atomic(path: str | os.PathLike, data: bytes | str, new: bool = False) -> Path:
    """Writes ``data`` (text as UTF-8) to ``path`` atomically, making its folder if needed.
    Raises ``WriteError`` (an OSError) when it cannot: ``path`` then has its old content;
    ``SpecialFileError`` (a WriteError) for a FIFO, a device or another special file.
    ``new``: ``path`` must not exist yet: FileExistsError (not a WriteError) when it does,
    even when another process made it a moment ago."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if new and os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        with atomic_target(path, new=new) as tmp:
            with open(tmp, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
    except WriteError:
        raise
    except FileExistsError as err:
        if new:
            raise
        raise WriteError(path, err) from err
    except OSError as err:
        raise WriteError(path, err) from err
    return path


def write_new(path: str | os.PathLike, data: bytes | str) -> Path:
    """``write_atomic(path, data, new=True)``: a file that must not exist yet."""
    return write_atomic(path, data, new=True)


def write_text(path: str | os.PathLike, text: str) -> Path:
    """``write_atomic`` for text (UTF-8): where ``Path.write_text`` would write in place."""
    return write_atomic(path, text)


# ---------------------------------------------------------------------------- files in a user's folder

OWN_MANIFEST = ".warpviz-written.json"      # the files warpviz wrote into a folder, with their SHA-256s
MAX_MANIFEST_BYTES = 16 << 20


class NotOursError(WarpvizError, FileExistsError):
    """Files warpviz would write are in the folder already and it cannot prove it wrote them
    (not in its manifest, or changed since): nothing was written."""

    def __init__(self, folder: str | os.PathLike, names: list[str]):
        FileExistsError.__init__(self, errno.EEXIST, "exists", str(Path(folder) / names[0]))
        self.folder, self.names = Path(folder), sorted(names)

    def __str__(self) -> str:
        shown = ", ".join(self.names[:3]) + (tr(" and {n} more", n=len(self.names) - 3) if len(self.names) > 3
                                            else "")
        return tr("{folder} already holds {names}, which warpviz did not write (or which changed since it did); "
                  "warpviz never replaces files it did not make, so nothing was written. Choose a new or empty "
                  "folder, or move them away.", folder=self.folder, names=shown)


def sha256_file(path: str | os.PathLike) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def written_by_warpviz(folder: str | os.PathLike, manifest: str = OWN_MANIFEST) -> dict[str, list[str]]:
    """{name: [sha256, ...]} of the files warpviz wrote into ``folder`` (its manifest; {} when
    there is none). A manifest warpviz did not write (a special file, too large, another
    format) is NotOursError: it is the user's file and stays."""
    import json
    import re

    path = Path(folder) / manifest
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise WriteError(path, err) from err
    try:
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_MANIFEST_BYTES:
            raise ValueError
        with open(path, "rb") as f:
            doc = json.loads(f.read(MAX_MANIFEST_BYTES + 1).decode("utf-8"))
        files = doc.get("files") if isinstance(doc, dict) and doc.get("written_by") == "warpviz" else None
        if not isinstance(files, dict):
            raise ValueError
    except (OSError, ValueError, RecursionError):
        raise NotOursError(folder, [manifest]) from None
    return {n: h for n, h in files.items() if isinstance(n, str) and inside(folder, n) and "/" not in n
            and isinstance(h, list) and all(isinstance(x, str) and re.fullmatch(r"[0-9a-f]{64}", x) for x in h)}


def _write_manifest(folder: Path, files: dict[str, list[str]], manifest: str) -> None:
    import json

    doc = {"written_by": "warpviz", "what": "files warpviz wrote into this folder: it replaces only these, and "
           "only while their content is unchanged", "files": dict(sorted(files.items()))}
    write_atomic(folder / manifest, json.dumps(doc, indent=0) + "\n")


def write_files(folder: str | os.PathLike, files, manifest: str = OWN_MANIFEST) -> Path:
    """Write ``files`` ({name: bytes or text, or a function writing the file at the path it is
    given}) into ``folder`` (made if needed), each atomically, without replacing anything
    warpviz did not write: a name already there must be in the folder's manifest with its
    content unchanged, else NotOursError before anything is written. The folder's other
    entries are never touched. The manifest (``.warpviz-written.json``) then names every file
    written with its SHA-256. Raises WriteError (a full disk...) with nothing half written:
    the temporary files are removed."""
    folder = Path(folder)
    for name in files:
        if not inside(folder, name) or Path(name).name != name or name == manifest:
            raise ValueError(f"{name!r} is not a file name in {folder}")
    created = not os.path.lexists(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(folder, err) from err
    try:
        _write_files(folder, files, manifest)
    except BaseException:
        if created:
            try:
                os.rmdir(folder)            # made here, and empty again: gone (never when it holds anything)
            except OSError:
                pass
        raise
    return folder


def _write_files(folder: Path, files, manifest: str) -> None:
    known = written_by_warpviz(folder, manifest)
    ours, theirs = set(), []
    for name in files:
        p = folder / name
        if not os.path.lexists(p):
            continue
        try:
            mine = stat.S_ISREG(os.lstat(p).st_mode) and name in known and sha256_file(p) in known[name]
        except OSError:
            mine = False
        (ours.add(name) if mine else theirs.append(name))
    if theirs:
        raise NotOursError(folder, theirs)
    temps: dict[str, Path] = {}
    current = folder
    try:
        hashes = {}
        for name, data in files.items():
            current = folder / name
            tmp = temps[name] = temp_beside(folder / name)
            if callable(data):
                data(tmp)
            else:
                with open(tmp, "wb") as f:
                    f.write(data.encode("utf-8") if isinstance(data, str) else bytes(data))
            hashes[name] = sha256_file(tmp)
        both = dict(known)
        for name, h in hashes.items():
            both[name] = sorted(set(known.get(name, [])) | {h}) if name in ours else [h]
        _write_manifest(folder, both, manifest)        # first: a crash half way leaves every file provably ours
        for name, tmp in temps.items():
            current = folder / name
            (commit if name in ours else commit_new)(tmp, folder / name)
        current = folder / manifest
        _write_manifest(folder, {**known, **{n: [h] for n, h in hashes.items()}}, manifest)
    except FileExistsError:                             # made by someone else meanwhile
        raise NotOursError(folder, [current.name]) from None
    except WriteError:
        raise
    except OSError as err:
        raise WriteError(current, err) from err
    finally:
        for tmp in temps.values():
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass


# ---------------------------------------------------------------------------- names from file content


MAX_NAME = 120      # characters of a name made from file content (the extension comes on top)


def safe_name(text: object, fallback: str = "warpviz", max_len: int = MAX_NAME) -> str:
    """``text`` (a trace's name, a scenario's title...) as one file name component: no folder
    separator, no ``..``, no control or reserved characters, no reserved device name
    (``CON``...), not hidden (no leading dot), at most ``max_len`` characters; ``fallback``
    when nothing is left. Only ever a name *in* a folder, never a path out of it."""
    from pathvalidate import is_valid_filename, sanitize_filename

    def clean(t: str) -> str:
        name = sanitize_filename(t.strip(" ."), replacement_text="_", platform="universal", max_len=max_len)
        name = name.strip(" .")            # no hidden file, no trailing dot or space (Windows drops them)
        return name if name and is_valid_filename(name, platform="universal") else ""

    return clean(str(text)) or clean(str(fallback)) or "warpviz"


def inside(folder: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Does ``path`` (relative to ``folder``, or absolute) stay inside ``folder`` once its
    ``..`` are taken out? Decided on the names alone (a link the user made in the folder is
    the user's), so it holds for files that do not exist yet."""
    try:
        base = os.path.normpath(os.path.abspath(os.fspath(folder)))
        full = os.path.normpath(os.path.join(base, os.fspath(path)))
        return full != base and os.path.commonpath([base, full]) == base
    except (TypeError, ValueError):      # a NUL in a name, two drives on Windows
        return False


# ---------------------------------------------------------------------------- bounded reading


class ReadRefused(WarpvizError, ValueError):
    """A file warpviz would not read, or could not: ``path``, ``problem`` (what is wrong, in
    words) and ``fix``. ``str(err)`` is the one paragraph: "PATH: problem; fix"."""

    def __init__(self, path: str | os.PathLike, problem: str, fix: str, kind: str = "", size: int = 0):
        self.path, self.problem, self.fix = Path(path), problem, fix
        self.kind = kind          # missing | folder | special | large | grew | unreadable | encoding | json
        self.size = size          # the file's size, for "large"
        super().__init__(f"{path}: {problem}; {fix}")


_SPECIAL = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
            (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))



def open_regular(path: str | os.PathLike, limit: int, what: str):
    """``(file, size)``: ``path`` opened for reading in binary, a regular file of at most
    ``limit`` bytes. Opened without blocking (``O_NONBLOCK``) and checked on the open
    descriptor (``fstat``): a FIFO, a device such as ``/dev/zero``, a socket or a folder is
    refused before a byte is read, so a FIFO swapped in cannot hang the reader. Raises
    ``ReadRefused`` naming the file, the problem and the limit. The caller reads at most
    what it needs (``read_bytes_limited`` reads ``limit`` + 1)."""
    fix_path = tr("check the path and its permissions")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ReadRefused(path, tr("no such file"), fix_path, "missing") from None
    except IsADirectoryError:
        raise ReadRefused(path, tr("this is a folder, not a {what}", what=what), tr("give the file itself"),
                          "folder") from None
    except (OSError, ValueError) as err:        # ValueError: a NUL byte in the name
        raise ReadRefused(path, tr("cannot be read ({why})", why=os_error_words(err)), fix_path,
                          "unreadable") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ReadRefused(path, tr("this is a folder, not a {what}", what=what), tr("give the file itself"),
                              "folder")
        if not stat.S_ISREG(st.st_mode):
            kind = next((w for test, w in _SPECIAL if test(st.st_mode)), "not a regular file")
            raise ReadRefused(path, tr("this is {kind}, not a {what}: warpviz reads only regular files",
                                       kind=kind, what=what), tr("give a file saved on disk"), "special")
        if st.st_size > limit:
            raise ReadRefused(path, tr("it has {size}, over warpviz's limit of {limit} for a {what}",
                                       size=format_bytes(st.st_size), limit=format_bytes(limit), what=what),
                              tr("check that this is the right file"), "large", st.st_size)
        return os.fdopen(fd, "rb"), st.st_size
    except BaseException:
        os.close(fd)
        raise


def read_bytes_limited(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (``open_regular``); no
    more than ``limit`` + 1 bytes are ever read (a file that grows meanwhile is refused too).
    ``what`` names the file in the message ("results file"). Raises ``ReadRefused``."""
    f, _ = open_regular(path, limit, what)
    try:
        with f:
            data = f.read(limit + 1)
    except OSError as err:
        raise ReadRefused(path, tr("cannot be read ({why})", why=os_error_words(err)),
                          tr("check the path and its permissions"), "unreadable") from None
    if len(data) > limit:
        raise ReadRefused(path, tr("it grew past warpviz's limit of {limit} for a {what} while it was read",
                                   limit=format_bytes(limit), what=what), tr("give a file that is not being written"),
                          "grew")
    return data


def read_text_limited(path: str | os.PathLike, limit: int, what: str) -> str:
    """``read_bytes_limited`` as UTF-8 text (a leading byte-order mark dropped); a file that
    is not UTF-8 is a ``ReadRefused`` naming the line of the first bad byte."""
    data = read_bytes_limited(path, limit, what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise ReadRefused(path, tr("this {what} is not UTF-8 text (line {line} has the byte {byte})",
                                   what=what, line=line, byte=f"0x{data[err.start]:02x}"), tr("save the file as UTF-8"),
                          "encoding") from None
    return text[1:] if text.startswith("\ufeff") else text


MAX_JSON_DEPTH = 32          # nesting of a JSON file warpviz reads (its own files nest 6 deep)
MAX_JSON_DIGITS = 40         # digits of one JSON integer (Python refuses over 4,300 with a ValueError)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _no_huge_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_JSON_DIGITS:
        raise ValueError(f"an integer of {len(digits.lstrip('-')):,} digits (at most {MAX_JSON_DIGITS})")
    return int(digits)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number warpviz reads (only finite numbers)")


def parse_json(text: str, path: str | os.PathLike, what: str):
    """A JSON document read from ``path`` (for the messages): at most MAX_JSON_DEPTH deep,
    integers of at most MAX_JSON_DIGITS digits, no NaN or Infinity; else ``ReadRefused``
    naming the file and the line. Checked in linear time before ``json`` parses it (a deeply
    nested file would raise RecursionError inside it)."""
    import json

    fix = tr("give a {what} as warpviz wrote it", what=what)
    if not text.strip():
        raise ReadRefused(path, tr("the {what} is empty", what=what), fix)
    depth = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            raise ReadRefused(path, tr("the {what} nests more than {n} levels deep", what=what, n=MAX_JSON_DEPTH),
                              fix)
    try:
        return json.loads(text, parse_int=_no_huge_int, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ReadRefused(path, tr("not valid JSON ({msg} at line {line}, column {col})", msg=err.msg,
                                   line=err.lineno, col=err.colno), fix) from None
    except (ValueError, RecursionError) as err:
        raise ReadRefused(path, tr("not a {what} warpviz reads ({why})", what=what, why=str(err)[:200]), fix) from None


def read_json_limited(path: str | os.PathLike, limit: int, what: str):
    """``read_text_limited`` then ``parse_json``: a JSON file of at most ``limit`` bytes."""
    return parse_json(read_text_limited(path, limit, what), path, what)


__all__ = ["ReadRefused", "open_regular", "read_bytes_limited", "read_text_limited", "read_json_limited", "parse_json",
           "MAX_JSON_DEPTH", "MAX_JSON_DIGITS",
           "umask", "temp_beside", "atomic_target", "write_atomic", "write_text", "write_new", "commit", "commit_new",
           "fsync_file", "fsync_folder", "WriteError", "SpecialFileError", "real_target", "check_regular",
           "write_failure", "os_error_words", "safe_name", "inside", "write_files", "written_by_warpviz",
           "NotOursError", "sha256_file", "OWN_MANIFEST", "format_bytes"]


def format_bytes(n: int) -> str:
    """A size in words, the one form every message uses: ``"512 bytes"``, ``"1,024 bytes"``,
    ``"1.5 MiB (1,572,864 bytes)"``, ``"4.00 GiB (4,294,967,296 bytes)"`` (binary units, the
    exact count beside them from 1 MiB on)."""
    n = int(n)
    if abs(n) >= 2**30:
        return f"{n / 2**30:,.2f} GiB ({n:,} bytes)"
    if abs(n) >= 2**20:
        return f"{n / 2**20:,.1f} MiB ({n:,} bytes)"
    return f"{n:,} bytes"
