"""The dataset cache: where datasets live, checksummed atomic downloads, cached parsed files.

Every dataset file lives under the *dataset root*: ``DBR_DATASET_ROOT`` when set, else
``dbr/dataset`` in the user's cache directory (``$XDG_CACHE_HOME``, by default
``~/.cache``). :func:`set_dataset_root` overrides both for this process.

``DBR_DATASET_MIRROR`` replaces the host of every download: a file is then fetched from
the mirror's base URL (``http://``, ``https://`` or ``file://``) joined with the file's
relative path. The loaders of this package lay a mirror out like the dataset root, one
folder per dataset (``mnist/train-images-idx3-ubyte.gz``, ``ptb/ptb.train.txt``, ...).
"""

import contextlib
import hashlib
import http.client
import os
import re
import secrets
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

import filelock

_ROOT_ENV = "DBR_DATASET_ROOT"
_MIRROR_ENV = "DBR_DATASET_MIRROR"
_DIGEST_LENGTHS = {"sha256": 64, "md5": 32}
_CHUNK_SIZE = 1 << 20
_TIMEOUT_S = 60.0
_TEMP_DIR_PREFIX = ".tmp-"

_dataset_root = None


def _default_dataset_root():
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(cache_home, "dbr", "dataset")


def get_dataset_root():
    """Return the root directory under which datasets are downloaded and cached.

    It is the path given to :func:`set_dataset_root` when one was given, else the
    environment variable ``DBR_DATASET_ROOT`` (read at each call), else ``dbr/dataset``
    in the user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``).

    Returns:
        str: The dataset root.
    """
    if _dataset_root is not None:
        return _dataset_root
    from_env = os.environ.get(_ROOT_ENV)
    if from_env:
        return os.path.expanduser(from_env)
    return _default_dataset_root()


def set_dataset_root(path):
    """Set the root directory under which datasets are downloaded and cached.

    The setting holds for this process and takes precedence over ``DBR_DATASET_ROOT``;
    ``None`` removes it, so that the environment variable or the default applies again.
    The directory is created when a dataset is first stored there.

    Args:
        path (str or os.PathLike or None): The new dataset root.

    Returns:
        str: The dataset root in effect before the call.
    """
    global _dataset_root
    old_root = get_dataset_root()
    _dataset_root = None if path is None else os.path.expanduser(os.fspath(path))
    return old_root


def get_dataset_directory(dataset_name, create_directory=True):
    """Return the directory of a dataset under the dataset root, creating it by default.

    Args:
        dataset_name (str): The dataset's directory relative to the dataset root; it may
            have several components, such as ``"mnist"`` or ``"myproject/corpus"``.
        create_directory (bool): Create the directory (and its parents) when missing.

    Returns:
        str: The path of the dataset directory.

    Raises:
        ValueError: If ``dataset_name`` is absolute or climbs out of the root with ``..``.
        OSError: If the directory cannot be created.
    """
    parts = _relative_parts(dataset_name, "get_dataset_directory", "dataset_name")
    path = os.path.join(get_dataset_root(), *parts)
    if create_directory:
        _make_directory(path, "get_dataset_directory")
    return path


def cached_download(url, *, sha256=None, md5=None, path=None):
    """Download a file once and return the path of its copy in the dataset cache.

    When the cache already holds the file (and it matches the given checksums), no
    network access happens. Otherwise the file is downloaded into a temporary file in
    the cache directory, verified, and renamed into place, so the cache never holds a
    partial file; a cached file that fails its checksum is downloaded again. A file lock
    (``.<name>.lock`` beside the cached file) makes concurrent processes download the
    file only once.

    When ``DBR_DATASET_MIRROR`` is set, the file is fetched from the mirror instead of
    ``url``: from ``<mirror>/<path>``, or from the mirror joined with the path part of
    ``url`` when ``path`` is not given. The cache key is ``url`` either way.

    Args:
        url (str): Where the file is published.
        sha256 (str or None): The file's expected SHA-256, as 64 hex digits.
        md5 (str or None): The file's expected MD5, as 32 hex digits. When both checksums
            are given, both are verified; when neither is, the file is not verified.
        path (str or None): Where to keep the file, relative to the dataset root, with
            ``/`` separators (such as ``"mnist/train-images-idx3-ubyte.gz"``); it is also
            the file's path on the mirror. By default the file is kept as
            ``_dl_cache/<MD5 of url>``.

    Returns:
        str: The path of the cached file.

    Raises:
        OSError: If the file cannot be downloaded (the message names the URL that failed,
            where to put a copy of the file to work offline, and ``DBR_DATASET_ROOT``; when
            the cache holds a copy that fails its checksum, that copy with its expected and
            actual digests), or if the downloaded file does not match its checksum (the
            file is not kept).
        ValueError: If a checksum is not a hex digest of the right length, or ``path`` is
            not a relative path inside the dataset root.
    """
    expected = _expected_digests(sha256, md5)
    if path is None:
        url_digest = hashlib.md5(url.encode("utf-8"), usedforsecurity=False).hexdigest()
        relative = f"_dl_cache/{url_digest}"
        mirror_relative = urllib.parse.urlsplit(url).path.lstrip("/")
    else:
        relative = "/".join(_relative_parts(path, "cached_download", "path"))
        mirror_relative = urllib.parse.quote(relative)
    cache_path = os.path.join(get_dataset_root(), *relative.split("/"))
    if _matches(cache_path, expected):
        return cache_path

    _make_directory(os.path.dirname(cache_path), "cached_download")
    with filelock.FileLock(_lock_path(cache_path)):
        failures = _checksum_failures(cache_path, expected)
        if failures == {}:
            return cache_path
        mirror = os.environ.get(_MIRROR_ENV)
        source = f"{mirror.rstrip('/')}/{mirror_relative}" if mirror else url
        _download(
            source, cache_path, expected, url=url, relative=relative, mirror=mirror,
            cached_failures=failures,
        )  # fmt: skip
    return cache_path


def cache_or_load_file(path, creator, loader):
    """Load a cached file, or create it first when it does not exist.

    When ``path`` exists, return ``loader(path)``. Otherwise call ``creator(temp_path)``,
    which writes the file at ``temp_path`` and returns its content; the file is then
    renamed to ``path`` and the content returned. ``temp_path`` lies in a fresh temporary
    directory beside ``path`` and has the same base name (so, for instance,
    :func:`numpy.savez` adds no extension to it). A file lock (``.<name>.lock`` beside
    ``path``) makes concurrent threads or processes create the file only once, and the
    rename makes a reader never see a partial file. The temporary directory is named
    ``.tmp-<name>-*``; one that a killed process left behind is removed by the next call
    that creates the file.

    Args:
        path (str or os.PathLike): Where the file is cached.
        creator (callable): ``creator(temp_path)`` writes the file and returns its content.
        loader (callable): ``loader(path)`` reads the file and returns its content.

    Returns:
        The object returned by ``creator`` or ``loader``.

    Raises:
        RuntimeError: If ``creator`` returns without writing ``temp_path``.
    """
    path = os.fspath(path)
    if os.path.exists(path):
        return loader(path)
    return _create_or_load(path, creator, loader, "cache_or_load_file")


# What a loader given to _create_or_load returns to have the file created again.
_REBUILD = object()


def _create_or_load(path, creator, loader, function_name):
    """Under the file lock of ``path``: ``loader(path)`` if the file exists (unless that
    returns ``_REBUILD``), else write it with ``creator`` through a temporary directory
    beside it, replace ``path`` with it, and return ``creator``'s content."""
    directory, name = os.path.split(os.path.abspath(path))
    _make_directory(directory, function_name)
    with filelock.FileLock(_lock_path(path)):
        if os.path.exists(path):
            content = loader(path)
            if content is not _REBUILD:
                return content
        _remove_stale_temporaries(directory, name)
        temp_dir = tempfile.mkdtemp(prefix=f"{_TEMP_DIR_PREFIX}{name}-", dir=directory)
        try:
            temp_path = os.path.join(temp_dir, name)
            content = creator(temp_path)
            if not os.path.exists(temp_path):
                raise RuntimeError(
                    f"{function_name}: the creator returned without writing {temp_path} "
                    f"(the temporary path of {path})"
                )
            os.replace(temp_path, path)
        finally:
            shutil.rmtree(temp_dir, ignore_errors=True)
    return content


def _relative_parts(path, function_name, argument):
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"{function_name}: {argument} must be a str path, got {text!r}")
    parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
    if text.startswith(("/", "\\")) or os.path.isabs(text) or not parts:
        raise ValueError(
            f"{function_name}: {argument} must be a non-empty path relative to the "
            f"dataset root, got {text!r}"
        )
    if ".." in parts:
        raise ValueError(
            f"{function_name}: {argument} must stay inside the dataset root, got {text!r}"
        )
    return parts


def _lock_path(path):
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.lock")


def _remove_stale_temporaries(directory, name):
    """Remove the temporaries that writers of ``name`` killed before their rename left in
    ``directory``: ``.tmp-<name>-*`` directories and ``.<name>.<pid>.<token>.part`` files.

    The caller holds the file lock of ``name``, and every writer of ``name`` holds it while
    its temporary exists, so any temporary of ``name`` found now belongs to a writer that
    is gone. Temporaries of other files in the folder may be in use and are left alone.
    """
    temp_dir = re.compile(re.escape(f"{_TEMP_DIR_PREFIX}{name}-") + "[a-z0-9_]+")
    part_file = re.compile(re.escape(f".{name}.") + r"[0-9]+\.[0-9a-f]{8}\.part")
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if temp_dir.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        elif part_file.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.remove(entry.path)


def _make_directory(path, function_name):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise OSError(
            f"{function_name}: cannot create the directory {path} ({error}); set "
            f"{_ROOT_ENV} to a writable directory"
        ) from error


def _expected_digests(sha256, md5):
    expected = {}
    for name, value in (("sha256", sha256), ("md5", md5)):
        if value is None:
            continue
        digest = value.lower() if isinstance(value, str) else None
        if (
            digest is None
            or len(digest) != _DIGEST_LENGTHS[name]
            or any(c not in "0123456789abcdef" for c in digest)
        ):
            raise ValueError(
                f"cached_download: {name} must be {_DIGEST_LENGTHS[name]} hex digits, "
                f"got {value!r}"
            )
        expected[name] = digest
    return expected


def _new_hashers(expected):
    return {
        name: hashlib.md5(usedforsecurity=False) if name == "md5" else hashlib.sha256()
        for name in expected
    }


def _checksum_failures(path, expected):
    """``path``'s checksums that differ from ``expected``, as ``{name: actual digest}``.

    None when ``path`` is not a file; empty when it matches (or nothing is expected).
    """
    if not os.path.isfile(path):
        return None
    if not expected:
        return {}
    hashers = _new_hashers(expected)
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK_SIZE):
            for hasher in hashers.values():
                hasher.update(chunk)
    actual = {name: hasher.hexdigest() for name, hasher in hashers.items()}
    return {name: digest for name, digest in actual.items() if digest != expected[name]}


def _matches(path, expected):
    return _checksum_failures(path, expected) == {}


def _describe(error):
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error) or type(error).__name__


def _download_error(
    error, *, source, url, relative, cache_path, mirror, expected, cached_failures
):
    via = f" (the mirror {_MIRROR_ENV}={mirror}; original URL {url})" if mirror else ""
    checksums = ", ".join(f"{name} {digest}" for name, digest in expected.items())
    if cached_failures:
        differences = "; ".join(
            f"its {name} is {actual}, expected {expected[name]}"
            for name, actual in cached_failures.items()
        )
        cached = (
            f"The file in the dataset cache, {cache_path}, failed its checksum "
            f"({differences}): it is corrupt or another file, and is left as it is. To work "
            "offline, replace it with a good copy"
        )
    else:
        cached = (
            "The file is not in the dataset cache. To work offline, put a copy of it at "
            f"{cache_path}"
        )
    return OSError(
        f"cached_download: cannot download {relative} from {source}{via}: "
        f"{_describe(error)}. {cached}{f' ({checksums})' if checksums else ''}. The dataset "
        f"root is {get_dataset_root()}; set {_ROOT_ENV} (or call set_dataset_root) to use "
        f"another, or set {_MIRROR_ENV} to a server, or a file:// directory, that holds "
        f"{relative}."
    )


def _download(source, cache_path, expected, *, url, relative, mirror, cached_failures=None):
    def fail(error):
        return _download_error(
            error,
            source=source,
            url=url,
            relative=relative,
            cache_path=cache_path,
            mirror=mirror,
            expected=expected,
            cached_failures=cached_failures,
        )

    print(f"Downloading {source} ...", file=sys.stderr)
    directory, name = os.path.split(cache_path)
    _remove_stale_temporaries(directory, name)
    temp_path = os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    # os.open rather than mkstemp, whose 0600 mode would survive the rename.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temp_path, flags, 0o666)
    try:
        hashers = _new_hashers(expected)
        with os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(source, timeout=_TIMEOUT_S)
            except urllib.error.HTTPError as error:
                error.close()
                raise fail(error) from error
            except (OSError, http.client.HTTPException, ValueError) as error:
                raise fail(error) from error
            with response:
                while True:
                    try:
                        chunk = response.read(_CHUNK_SIZE)
                    except (OSError, http.client.HTTPException) as error:
                        raise fail(error) from error
                    if not chunk:
                        break
                    out.write(chunk)
                    for hasher in hashers.values():
                        hasher.update(chunk)
        for name, digest in expected.items():
            actual = hashers[name].hexdigest()
            if actual != digest:
                raise OSError(
                    f"cached_download: the file downloaded from {source} is corrupt or not "
                    f"the expected one: its {name} is {actual}, expected {digest}. It was "
                    f"not kept in the cache ({cache_path})."
                )
        os.replace(temp_path, cache_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temp_path)
        raise
