import hashlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from dbr.datasets import download
from dbr.datasets.download import (
    cache_or_load_file,
    cached_download,
    get_dataset_directory,
    get_dataset_root,
    set_dataset_root,
)

PAYLOAD = bytes(range(256)) * 4000
PAYLOAD_SHA256 = hashlib.sha256(PAYLOAD).hexdigest()
PAYLOAD_MD5 = hashlib.md5(PAYLOAD).hexdigest()
# The mirror replaces the host: this URL is never contacted while DBR_DATASET_MIRROR is set.
URL = "https://datasets.example.invalid/data/payload.bin"


def _url_cache_path(url):
    name = hashlib.md5(url.encode("utf-8")).hexdigest()
    return os.path.join(get_dataset_root(), "_dl_cache", name)


def _leftovers(directory):
    return [name for name in os.listdir(directory) if name.endswith(".part")]


@pytest.fixture
def clean_root(monkeypatch):
    monkeypatch.setattr(download, "_dataset_root", None)
    monkeypatch.delenv("DBR_DATASET_ROOT", raising=False)
    monkeypatch.delenv("DBR_DATASET_MIRROR", raising=False)


def test_root_comes_from_the_environment(clean_root, monkeypatch, tmp_path):
    monkeypatch.setenv("DBR_DATASET_ROOT", str(tmp_path / "env-root"))
    assert get_dataset_root() == str(tmp_path / "env-root")


def test_default_root_is_in_the_user_cache_directory(clean_root, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert get_dataset_root() == os.path.join(tmp_path, "cache", "dbr", "dataset")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_dataset_root() == os.path.join(tmp_path, "home", ".cache", "dbr", "dataset")


def test_set_dataset_root_overrides_the_environment_and_returns_the_old_root(
    clean_root, monkeypatch, tmp_path
):
    monkeypatch.setenv("DBR_DATASET_ROOT", str(tmp_path / "env-root"))
    assert set_dataset_root(tmp_path / "mine") == str(tmp_path / "env-root")
    assert get_dataset_root() == str(tmp_path / "mine")
    assert set_dataset_root(None) == str(tmp_path / "mine")
    assert get_dataset_root() == str(tmp_path / "env-root")


def test_get_dataset_directory(clean_root, monkeypatch, tmp_path):
    monkeypatch.setenv("DBR_DATASET_ROOT", str(tmp_path))
    path = get_dataset_directory("a/b", create_directory=False)
    assert path == os.path.join(tmp_path, "a", "b")
    assert not os.path.exists(path)
    assert get_dataset_directory("a/b") == path
    assert os.path.isdir(path)


@pytest.mark.parametrize("name", ["/etc", "../outside", "a/../../b", ""])
def test_get_dataset_directory_rejects_paths_outside_the_root(clean_root, name):
    with pytest.raises(ValueError, match="get_dataset_directory: dataset_name"):
        get_dataset_directory(name, create_directory=False)


def test_download_through_the_mirror(dataset_server):
    dataset_server.write("data/payload.bin", PAYLOAD)
    path = cached_download(URL, sha256=PAYLOAD_SHA256)
    assert path == _url_cache_path(URL)
    with open(path, "rb") as file:
        assert file.read() == PAYLOAD
    assert dataset_server.requests == ["/data/payload.bin"]
    assert _leftovers(os.path.dirname(path)) == []

    assert cached_download(URL, sha256=PAYLOAD_SHA256) == path
    assert dataset_server.requests == ["/data/payload.bin"]


def test_download_to_a_named_path(dataset_server):
    dataset_server.write("mine/payload.bin", PAYLOAD)
    path = cached_download(URL, md5=PAYLOAD_MD5, path="mine/payload.bin")
    assert path == os.path.join(get_dataset_root(), "mine", "payload.bin")
    with open(path, "rb") as file:
        assert file.read() == PAYLOAD
    assert dataset_server.requests == ["/mine/payload.bin"]


def test_download_without_a_mirror_uses_the_url(dataset_server, monkeypatch):
    dataset_server.write("direct.bin", PAYLOAD)
    monkeypatch.delenv("DBR_DATASET_MIRROR")
    url = dataset_server.url + "/direct.bin"
    path = cached_download(url, sha256=PAYLOAD_SHA256, md5=PAYLOAD_MD5)
    with open(path, "rb") as file:
        assert file.read() == PAYLOAD
    assert dataset_server.requests == ["/direct.bin"]


def test_file_url_mirror(dataset_server, monkeypatch):
    dataset_server.write("data/payload.bin", PAYLOAD)
    monkeypatch.setenv("DBR_DATASET_MIRROR", dataset_server.directory.as_uri())
    path = cached_download(URL, sha256=PAYLOAD_SHA256)
    with open(path, "rb") as file:
        assert file.read() == PAYLOAD
    assert dataset_server.requests == []


def test_corrupt_cached_file_is_fetched_again(dataset_server):
    dataset_server.write("data/payload.bin", PAYLOAD)
    path = cached_download(URL, sha256=PAYLOAD_SHA256)
    with open(path, "r+b") as file:
        file.write(b"garbage")

    assert cached_download(URL, sha256=PAYLOAD_SHA256) == path
    with open(path, "rb") as file:
        assert file.read() == PAYLOAD
    assert dataset_server.count("/data/payload.bin") == 2


def test_cached_file_without_checksum_is_not_verified(dataset_server):
    dataset_server.write("data/payload.bin", PAYLOAD)
    path = cached_download(URL)
    with open(path, "wb") as file:
        file.write(b"edited by the user")
    assert cached_download(URL) == path
    with open(path, "rb") as file:
        assert file.read() == b"edited by the user"
    assert dataset_server.count("/data/payload.bin") == 1


@pytest.mark.parametrize("algorithm", ["sha256", "md5"])
def test_corrupt_served_file_raises_and_is_not_kept(dataset_server, algorithm):
    dataset_server.write("data/payload.bin", PAYLOAD[:-1] + b"!")
    expected = {"sha256": PAYLOAD_SHA256, "md5": PAYLOAD_MD5}[algorithm]
    with pytest.raises(OSError) as info:
        cached_download(URL, **{algorithm: expected})
    message = str(info.value)
    assert f"/data/payload.bin is corrupt or not the expected one: its {algorithm} is" in message
    assert f"expected {expected}" in message
    path = _url_cache_path(URL)
    assert not os.path.exists(path)
    assert _leftovers(os.path.dirname(path)) == []


@pytest.mark.parametrize(
    "kwargs", [{"sha256": "abc"}, {"md5": PAYLOAD_SHA256}, {"sha256": "z" * 64}, {"md5": 5}]
)
def test_malformed_checksum_is_rejected(dataset_server, kwargs):
    (name,) = kwargs
    with pytest.raises(ValueError, match=f"cached_download: {name} must be"):
        cached_download(URL, **kwargs)
    assert dataset_server.requests == []


def test_missing_file_on_the_server(dataset_server):
    with pytest.raises(OSError, match="HTTP 404") as info:
        cached_download(URL, sha256=PAYLOAD_SHA256, path="mine/payload.bin")
    assert os.path.join(get_dataset_root(), "mine", "payload.bin") in str(info.value)
    assert _leftovers(os.path.join(get_dataset_root(), "mine")) == []


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_offline_error_says_what_is_missing_and_where_to_put_it(dataset_server, monkeypatch):
    mirror = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("DBR_DATASET_MIRROR", mirror)
    with pytest.raises(OSError) as info:
        cached_download(URL, sha256=PAYLOAD_SHA256, path="mine/payload.bin")
    message = str(info.value)
    root = get_dataset_root()
    expected_parts = [
        f"cannot download mine/payload.bin from {mirror}/mine/payload.bin",
        f"the mirror DBR_DATASET_MIRROR={mirror}; original URL {URL}",
        "Connection refused",
        f"put a copy of it at {os.path.join(root, 'mine', 'payload.bin')}",
        f"sha256 {PAYLOAD_SHA256}",
        f"The dataset root is {root}; set DBR_DATASET_ROOT",
    ]
    for part in expected_parts:
        assert part in message


@pytest.mark.parametrize("algorithm", ["sha256", "md5"])
def test_offline_with_a_corrupt_cached_copy_says_it_failed_its_checksum(
    dataset_server, monkeypatch, algorithm
):
    monkeypatch.setenv("DBR_DATASET_MIRROR", f"http://127.0.0.1:{_closed_port()}")
    cache_path = os.path.join(get_dataset_root(), "mine", "payload.bin")
    os.makedirs(os.path.dirname(cache_path))
    corrupt = b"garbage" + PAYLOAD[7:]
    with open(cache_path, "wb") as file:
        file.write(corrupt)
    expected = {"sha256": PAYLOAD_SHA256, "md5": PAYLOAD_MD5}[algorithm]
    actual = getattr(hashlib, algorithm)(corrupt).hexdigest()
    with pytest.raises(OSError) as info:
        cached_download(URL, **{algorithm: expected}, path="mine/payload.bin")
    message = str(info.value)
    assert "not in the dataset cache" not in message
    assert f"The file in the dataset cache, {cache_path}, failed its checksum" in message
    assert f"its {algorithm} is {actual}, expected {expected}" in message
    assert "Connection refused" in message
    with open(cache_path, "rb") as file:
        assert file.read() == corrupt  # left for the user to inspect or replace


def test_concurrent_processes_download_once(dataset_server):
    dataset_server.write("data/payload.bin", PAYLOAD)
    # The slow answer keeps the first download in flight while the second process asks.
    dataset_server.delay_s = 1.5
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=cached_download, args=(URL,), kwargs={"sha256": PAYLOAD_SHA256})
        for _ in range(2)
    ]
    for process in processes:
        process.start()
    deadline = time.monotonic() + 60
    while not dataset_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    both_running_during_download = all(process.is_alive() for process in processes)
    for process in processes:
        process.join(120)
    assert [process.exitcode for process in processes] == [0, 0]
    assert both_running_during_download
    assert dataset_server.requests == ["/data/payload.bin"]
    with open(_url_cache_path(URL), "rb") as file:
        assert file.read() == PAYLOAD


def test_cache_or_load_file_creates_once_then_loads(tmp_path):
    path = tmp_path / "sub" / "cache.txt"
    temp_paths = []

    def creator(temp_path):
        temp_paths.append(temp_path)
        with open(temp_path, "w") as file:
            file.write("content")
        return "created"

    def loader(p):
        with open(p) as file:
            return "loaded " + file.read()

    assert cache_or_load_file(path, creator, loader) == "created"
    assert cache_or_load_file(path, creator, loader) == "loaded content"
    assert len(temp_paths) == 1
    assert os.path.basename(temp_paths[0]) == "cache.txt"
    assert os.path.dirname(os.path.dirname(temp_paths[0])) == str(path.parent)
    assert not os.path.exists(temp_paths[0])
    assert sorted(p.name for p in path.parent.iterdir()) == [".cache.txt.lock", "cache.txt"]


_KILLED_CREATOR = """
import os, signal, sys
from dbr.datasets.download import cache_or_load_file

def creator(temp_path):
    with open(temp_path, "w") as file:
        file.write("half")
    os.kill(os.getpid(), signal.SIGKILL)

cache_or_load_file(sys.argv[1], creator, open)
"""


def test_cache_or_load_file_removes_what_a_killed_creator_left(tmp_path):
    path = tmp_path / "cache.txt"
    killed = subprocess.run([sys.executable, "-c", _KILLED_CREATOR, str(path)], check=False)
    assert killed.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    assert len(left) == 1 and not path.exists()
    # Temporaries of other files in the folder may belong to live writers: they stay.
    other = tmp_path / ".tmp-cache.txt.bak-x1y2z3a4"
    other.mkdir()

    def creator(temp_path):
        with open(temp_path, "w") as file:
            file.write("whole")
        return "created"

    assert cache_or_load_file(path, creator, open) == "created"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".cache.txt.lock",
        other.name,
        "cache.txt",
    ]


def test_download_removes_the_part_file_of_a_killed_download(dataset_server):
    dataset_server.write("data/payload.bin", PAYLOAD)
    dataset_server.delay_s = 30.0
    context = multiprocessing.get_context("spawn")
    process = context.Process(
        target=cached_download, args=(URL,), kwargs={"sha256": PAYLOAD_SHA256}
    )
    process.start()
    deadline = time.monotonic() + 60
    while not dataset_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.join(60)
    directory = os.path.dirname(_url_cache_path(URL))
    assert len(_leftovers(directory)) == 1
    dataset_server.delay_s = 0.0
    assert cached_download(URL, sha256=PAYLOAD_SHA256) == _url_cache_path(URL)
    assert _leftovers(directory) == []


def test_cache_or_load_file_keeps_nothing_when_the_creator_fails(tmp_path):
    path = tmp_path / "cache.txt"

    def failing_creator(temp_path):
        with open(temp_path, "w") as file:
            file.write("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        cache_or_load_file(path, failing_creator, open)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".cache.txt.lock"]


def test_cache_or_load_file_requires_the_creator_to_write(tmp_path):
    with pytest.raises(RuntimeError, match="the creator returned without writing"):
        cache_or_load_file(tmp_path / "cache.txt", lambda temp_path: None, open)


def test_cache_or_load_file_creates_once_under_concurrent_threads(tmp_path):
    path = tmp_path / "cache.txt"
    calls = []
    results = []

    def creator(temp_path):
        calls.append(temp_path)
        time.sleep(0.3)
        with open(temp_path, "w") as file:
            file.write("x")
        return "created"

    def load(p):
        return "loaded"

    threads = [
        threading.Thread(target=lambda: results.append(cache_or_load_file(path, creator, load)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert sorted(results) == ["created", "loaded", "loaded", "loaded"]
