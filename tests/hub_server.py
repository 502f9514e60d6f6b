"""A small local Hugging Face Hub for tests: the HTTP endpoints ``huggingface_hub`` 2.x and ``transformers`` call.

There is no public Hub server to install, so this module implements, with the standard library only (PyYAML is
used for ``validate-yaml`` when installed), the subset of the Hub's HTTP API that pushing and loading a model needs:

======================================================  ==================================================
request                                                 used by
======================================================  ==================================================
``POST /api/repos/create``                              ``HfApi.create_repo`` (409 + ``url`` if it exists)
``POST /api/validate-yaml``                             ``create_commit`` of any ``README.md``
``POST /api/models/{ns}/{name}/preupload/{rev}``         upload mode per file (``regular`` / ``lfs``)
``POST /{ns}/{name}.git/info/lfs/objects/batch``         LFS batch API (basic transfer) ...
``PUT /lfs-objects/{oid}``                              ... and the upload itself (sha256 checked)
``POST /api/models/{ns}/{name}/commit/{rev}``            NDJSON ``header`` / ``file`` / ``lfsFile`` /
                                                        ``deletedFile`` / ``deletedFolder`` lines
``POST /api/models/{ns}/{name}/branch/{branch}``         ``HfApi.create_branch`` (revisions)
``GET /api/models/{id}[/revision/{rev}]``               ``HfApi.model_info`` / ``repo_info``
``GET /api/models/{id}/tree/{rev}[/{path}]``            ``list_repo_tree`` / ``list_repo_files``
``GET /api/models/{id}/refs``                           ``list_repo_refs``
``HEAD|GET /{ns}/{name}/resolve/{rev}/{file}``           ``hf_hub_download`` (``X-Repo-Commit``, ``ETag``,
                                                        ``Content-Length``; 404 + ``X-Error-Code``)
``GET /api/whoami-v2``                                  ``HfApi.whoami``
======================================================  ==================================================

Behaviour copied from the real Hub (and relied on by the client):

* Writes need ``Authorization: Bearer <token>`` with the server's token (401 otherwise). A private repo answers
  ``401`` + ``X-Error-Code: RepoNotFound`` to a request without the right token, as the Hub does.
* A missing file is ``404`` with ``X-Error-Code: EntryNotFound``; an unknown branch/commit ``RevisionNotFound``.
* Files uploaded through LFS are served with their sha256 as ``ETag``/``X-Linked-Etag``; regular files with their
  git blob sha1. Committing an ``lfsFile`` whose object was never uploaded is a ``400``.
* A new repo starts with one commit holding ``.gitattributes``.

Clients must have ``HF_ENDPOINT=<url>`` and ``HF_HUB_DISABLE_XET=1`` in their environment **before** importing
``huggingface_hub`` / ``transformers`` / ``datasets`` (they read them at import), which is why the tests run the
client code in a subprocess (see ``tests/test_hub.py``).

Use from Python::

    with LocalHub(token="hf_test") as hub:   # starts on a free port in a daemon thread
        env = hub.client_env(home=tmp_path)  # HF_ENDPOINT, HF_HUB_DISABLE_XET=1, HF_TOKEN, HF_HOME ...

or as a process (``python tests/hub_server.py --port 8787 --token hf_local``) for the manual pushes of
``docs/results.md``. Test hooks: ``hub.fail_next[<endpoint name>] = (status, message)`` makes the next request to that
endpoint (``"commit"``, ``"preupload"``, ``"lfs_batch"``, ``"create"``) fail; ``hub.requests`` logs every
``(method, path)``; ``hub.unhandled`` the requests no route matched.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

#: Paths stored through LFS whatever their size (the Hub's default ``.gitattributes`` patterns that matter here).
LFS_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".ckpt",
    ".h5",
    ".msgpack",
    ".onnx",
    ".arrow",
    ".parquet",
    ".npy",
    ".npz",
    ".pkl",
    ".zip",
    ".gz",
    ".tar",
)
#: Files larger than this go through LFS (the Hub: 10 MB).
LFS_THRESHOLD = 10 * 1024 * 1024
GITATTRIBUTES = "".join(f"*{s} filter=lfs diff=lfs merge=lfs -text\n" for s in LFS_SUFFIXES).encode()


def git_blob_sha1(data: bytes) -> str:
    """Git's object id of a blob: ``sha1(b"blob <len>\\0" + data)`` (hex)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class StoredFile:
    """One file of a commit: ``data`` for a regular file, ``lfs_oid`` (sha256 hex) for an LFS file."""

    size: int
    data: bytes | None = None
    lfs_oid: str | None = None

    @property
    def pointer(self) -> bytes:
        return f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.lfs_oid}\nsize {self.size}\n".encode()

    @property
    def blob_oid(self) -> str:
        return git_blob_sha1(self.data if self.lfs_oid is None else self.pointer)


@dataclass
class Repo:
    """A model repo: branches -> commit sha; commits -> (parent, message, {path: StoredFile})."""

    repo_id: str
    private: bool
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, dict] = field(default_factory=dict)

    def resolve(self, rev: str) -> str | None:
        """Commit sha of a branch name or a (full) commit sha; ``None`` if unknown."""
        if rev in self.branches:
            return self.branches[rev]
        return rev if rev in self.commits else None


class HubError(Exception):
    """An HTTP error answer: status, message and optional ``X-Error-Code``."""

    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class LocalHub:
    """An in-memory Hub served over HTTP on ``127.0.0.1`` (see the module docstring for the endpoints).

    Args:
        token: the only accepted write token (and read token for private repos).
        user: the namespace ``whoami`` reports.
        port: TCP port; 0 picks a free one.
    """

    def __init__(self, token: str = "hf_local_test_token", user: str = "tester", port: int = 0):
        self.token, self.user, self.port = token, user, port
        self.repos: dict[str, Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.unhandled: list[tuple[str, str]] = []
        self.auth_headers_seen: list[str] = []
        self.fail_next: dict[str, tuple[int, str]] = {}
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # ------------------------------------------------------------- lifecycle
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalHub is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LocalHub:
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LocalHub:  # noqa: PYI034 (never subclassed; typing.Self needs Python 3.11)
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def client_env(self, home: str | None = None, with_token: bool = True) -> dict[str, str]:
        """Environment variables a client process needs to talk to this Hub (and only to it)."""
        env = {
            "HF_ENDPOINT": self.url,
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_OFFLINE": "0",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "0",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_HUB_ETAG_TIMEOUT": "5",
            "HF_HUB_DOWNLOAD_TIMEOUT": "30",
        }
        if with_token:
            env["HF_TOKEN"] = self.token
        if home is not None:
            env["HF_HOME"] = str(home)
        return env

    # --------------------------------------------------------------- helpers
    def _new_sha(self, repo_id: str, message: str) -> str:
        with self._lock:
            self._counter += 1
            return hashlib.sha1(f"{repo_id}\0{message}\0{self._counter}\0{time.time_ns()}".encode()).hexdigest()

    def _authorized(self, headers) -> bool:
        value = headers.get("Authorization", "")
        if value:
            self.auth_headers_seen.append(value)
        return value == f"Bearer {self.token}"

    def _repo(self, repo_id: str, headers, write: bool = False) -> Repo:
        repo = self.repos.get(repo_id)
        authorized = self._authorized(headers)
        if write and not authorized:
            raise HubError(401, "Invalid credentials in Authorization header")
        if repo is None or (repo.private and not authorized):
            raise HubError(
                401 if not authorized else 404,
                f"Repository Not Found for url: {repo_id}. Please make sure you specified the correct `repo_id`.",
                "RepoNotFound",
            )
        return repo

    def _maybe_fail(self, name: str) -> None:
        with self._lock:
            failure = self.fail_next.pop(name, None)
        if failure is not None:
            raise HubError(failure[0], failure[1])

    def files_at(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        """Content of every file of ``repo_id`` at ``revision`` (LFS files resolved), for assertions."""
        repo = self.repos[repo_id]
        sha = repo.resolve(revision)
        files = repo.commits[sha]["files"]
        return {p: f.data if f.lfs_oid is None else self.lfs_objects[f.lfs_oid] for p, f in files.items()}

    def commit_count(self, repo_id: str, revision: str = "main") -> int:
        """Number of commits in the history of ``revision`` (the initial ``.gitattributes`` commit included)."""
        repo = self.repos[repo_id]
        sha, n = repo.resolve(revision), 0
        while sha is not None:
            n += 1
            sha = repo.commits[sha]["parent"]
        return n

    # -------------------------------------------------------------- handlers
    def create_repo(self, body: dict, headers) -> tuple[int, dict]:
        if not self._authorized(headers):
            raise HubError(401, "Invalid credentials in Authorization header")
        self._maybe_fail("create")
        if body.get("type") not in (None, "model"):
            raise HubError(400, f"this local Hub only stores model repos, not {body.get('type')!r}")
        name = body.get("name")
        if not name or not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,95}", name):
            raise HubError(400, f"Invalid repo name {name!r}")
        repo_id = f"{body.get('organization') or self.user}/{name}"
        url = f"{self.url}/{repo_id}"
        with self._lock:
            if repo_id in self.repos:
                return 409, {"error": "You already created this model repo", "url": url}
            private = body.get("private")
            if private is None:
                private = body.get("visibility") == "private"
            repo = Repo(repo_id=repo_id, private=bool(private))
            sha = self._new_sha(repo_id, "initial commit")
            repo.commits[sha] = {
                "parent": None,
                "message": "initial commit",
                "files": {".gitattributes": StoredFile(size=len(GITATTRIBUTES), data=GITATTRIBUTES)},
            }
            repo.branches["main"] = sha
            self.repos[repo_id] = repo
        return 200, {"url": url, "name": repo_id, "id": repo_id}

    def validate_yaml(self, body: dict) -> tuple[int, dict]:
        content = body.get("content", "")
        match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", content, re.DOTALL)
        if not match:
            return 200, {"errors": [], "warnings": [{"message": "Empty or missing yaml metadata in repo card"}]}
        try:
            import yaml
        except ImportError:  # pragma: no cover - PyYAML is a dependency of the package
            return 200, {"errors": [], "warnings": []}
        try:
            meta = yaml.safe_load(match.group(1))
        except yaml.YAMLError as err:
            return 400, {"errors": [{"message": f"Invalid YAML: {err}"}], "warnings": []}
        if meta is not None and not isinstance(meta, dict):
            return 400, {"errors": [{"message": "metadata must be a YAML mapping"}], "warnings": []}
        errors = []
        for i, entry in enumerate((meta or {}).get("model-index") or []):
            for j, result in enumerate(entry.get("results") or []):
                for key in ("task", "dataset", "metrics"):
                    if key not in result:
                        errors.append({"message": f'"model-index[{i}].results[{j}]" must have "{key}"'})
        return (400 if errors else 200), {"errors": errors, "warnings": []}

    def preupload(self, repo_id: str, rev: str, body: dict, headers) -> tuple[int, dict]:
        repo = self._repo(repo_id, headers, write=True)
        self._maybe_fail("preupload")
        sha = repo.resolve(rev)
        if sha is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        existing = repo.commits[sha]["files"]
        out = []
        for f in body.get("files", []):
            path, size = f["path"], int(f["size"])
            sample = base64.b64decode(f.get("sample", ""))
            lfs = path.endswith(LFS_SUFFIXES) or size > LFS_THRESHOLD or b"\0" in sample
            entry = {"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
            if path in existing:
                old = existing[path]
                entry["oid"] = old.lfs_oid if old.lfs_oid is not None else old.blob_oid
            out.append(entry)
        return 200, {"files": out, "commitOid": sha}

    def lfs_batch(self, repo_id: str, body: dict, headers) -> tuple[int, dict]:
        self._repo(repo_id, headers, write=True)
        self._maybe_fail("lfs_batch")
        if body.get("operation") != "upload":
            raise HubError(400, "only the upload operation is implemented")
        objects = []
        for obj in body.get("objects", []):
            oid, size = obj["oid"], int(obj["size"])
            entry = {"oid": oid, "size": size}
            if oid not in self.lfs_objects:
                entry["actions"] = {"upload": {"href": f"{self.url}/lfs-objects/{oid}?size={size}"}}
            objects.append(entry)
        return 200, {"transfer": "basic", "objects": objects, "hash_algo": "sha256"}

    def lfs_put(self, oid: str, data: bytes) -> tuple[int, dict]:
        if hashlib.sha256(data).hexdigest() != oid:
            raise HubError(400, f"uploaded content does not match LFS oid {oid}")
        with self._lock:
            self.lfs_objects[oid] = data
        return 200, {}

    def commit(self, repo_id: str, rev: str, raw: bytes, headers, query: dict) -> tuple[int, dict]:
        repo = self._repo(repo_id, headers, write=True)
        self._maybe_fail("commit")
        if query.get("create_pr"):
            raise HubError(400, "pull requests are not implemented by this local Hub")
        lines = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "the first NDJSON line must be the commit header")
        header = lines[0]["value"]
        with self._lock:
            head = repo.resolve(rev)
            if head is None or rev not in repo.branches:
                raise HubError(404, f"Invalid rev id: {rev} (commits go to a branch)", "RevisionNotFound")
            parent = header.get("parentCommit")
            if parent is not None and parent != head:
                raise HubError(412, f"A commit has happened since {parent}. Please refresh and try again.")
            files = dict(repo.commits[head]["files"])
            for line in lines[1:]:
                key, value = line.get("key"), line.get("value", {})
                path = value.get("path", "")
                if key == "file":
                    data = (
                        base64.b64decode(value["content"])
                        if value.get("encoding") == "base64"
                        else value["content"].encode()
                    )
                    files[path] = StoredFile(size=len(data), data=data)
                elif key == "lfsFile":
                    if value.get("oid") not in self.lfs_objects:
                        raise HubError(400, f"LFS object {value.get('oid')} for {path} was never uploaded")
                    files[path] = StoredFile(size=int(value["size"]), lfs_oid=value["oid"])
                elif key == "deletedFile":
                    if path not in files:
                        raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                    del files[path]
                elif key == "deletedFolder":
                    prefix = path.rstrip("/") + "/"
                    files = {p: f for p, f in files.items() if not p.startswith(prefix)}
                else:
                    raise HubError(400, f"unknown NDJSON key {key!r}")
            sha = self._new_sha(repo_id, header.get("summary", ""))
            repo.commits[sha] = {"parent": head, "message": header.get("summary", ""), "files": files}
            repo.branches[rev] = sha
        return 200, {"commitUrl": f"{self.url}/{repo_id}/commit/{sha}", "commitOid": sha, "pullRequestUrl": None}

    def create_branch(self, repo_id: str, branch: str, body: dict, headers) -> tuple[int, dict]:
        repo = self._repo(repo_id, headers, write=True)
        with self._lock:
            if branch in repo.branches:
                raise HubError(409, f"Reference refs/heads/{branch} already exists")
            start = repo.resolve(body.get("startingPoint") or "main")
            if start is None:
                raise HubError(404, f"Invalid rev id: {body.get('startingPoint')}", "RevisionNotFound")
            repo.branches[branch] = start
        return 200, {}

    def model_info(self, repo_id: str, rev: str, headers) -> tuple[int, dict]:
        repo = self._repo(repo_id, headers)
        sha = repo.resolve(rev)
        if sha is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = repo.commits[sha]["files"]
        card = self._card_data(files)
        return 200, {
            "pipeline_tag": card.get("pipeline_tag"),
            "library_name": card.get("library_name"),
            "cardData": card,
            "_id": repo_id,
            "id": repo_id,
            "modelId": repo_id,
            "author": repo_id.split("/")[0],
            "sha": sha,
            "private": repo.private,
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": "2026-01-01T00:00:00.000Z",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "siblings": [{"rfilename": p} for p in sorted(files)],
        }

    def _card_data(self, files: dict[str, StoredFile]) -> dict:
        """The README's front matter (the Hub derives ``pipeline_tag`` and ``cardData`` of model info from it)."""
        f = files.get("README.md")
        if f is None or f.data is None:
            return {}
        match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", f.data.decode("utf-8", "replace"), re.DOTALL)
        if not match:
            return {}
        try:
            import yaml

            meta = yaml.safe_load(match.group(1))
        except Exception:  # noqa: BLE001 - a README without valid YAML has no card data
            return {}
        return meta if isinstance(meta, dict) else {}

    def tree(self, repo_id: str, rev: str, path: str, recursive: bool, headers) -> tuple[int, list]:
        repo = self._repo(repo_id, headers)
        sha = repo.resolve(rev)
        if sha is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        files = repo.commits[sha]["files"]
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        if prefix and not any(p.startswith(prefix) for p in files):
            raise HubError(404, f"{path} does not exist on {rev}", "EntryNotFound")
        entries, dirs = [], set()
        for p in sorted(files):
            if not p.startswith(prefix):
                continue
            rest = p[len(prefix) :]
            parts = rest.split("/")
            for k in range(1, len(parts)):
                d = prefix + "/".join(parts[:k])
                if (recursive or k == 1) and d not in dirs:
                    dirs.add(d)
                    entries.append({"type": "directory", "oid": git_blob_sha1(d.encode()), "size": 0, "path": d})
            if len(parts) > 1 and not recursive:
                continue
            f = files[p]
            entry = {"type": "file", "oid": f.blob_oid, "size": f.size, "path": p}
            if f.lfs_oid is not None:
                entry["lfs"] = {"oid": f.lfs_oid, "size": f.size, "pointerSize": len(f.pointer)}
            entries.append(entry)
        return 200, entries

    def refs(self, repo_id: str, headers) -> tuple[int, dict]:
        repo = self._repo(repo_id, headers)
        branches = [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": s} for b, s in sorted(repo.branches.items())]
        return 200, {"branches": branches, "converts": [], "tags": [], "pullRequests": []}

    def resolve_file(self, repo_id: str, rev: str, path: str, headers) -> tuple[str, StoredFile, bytes]:
        repo = self._repo(repo_id, headers)
        sha = repo.resolve(rev)
        if sha is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        f = repo.commits[sha]["files"].get(path)
        if f is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        return sha, f, f.data if f.lfs_oid is None else self.lfs_objects[f.lfs_oid]


_REPO = r"(?P<repo>[^/]+/[^/]+)"


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to :class:`LocalHub` methods; answers JSON (or file bytes) and Hub-style error headers."""

    hub: LocalHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    # ------------------------------------------------------------------ io
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload, extra: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error(self, err: HubError) -> None:
        extra = {"X-Error-Message": err.message.replace("\n", " ")}
        if err.code:
            extra["X-Error-Code"] = err.code
        self._send_json(err.status, {"error": err.message}, extra)

    def _dispatch(self) -> None:
        hub = self.hub
        split = urlsplit(self.path)
        path, query = unquote(split.path), {k: v[-1] for k, v in parse_qs(split.query).items()}
        hub.requests.append((self.command, split.path))
        body = self._body() if self.command in ("POST", "PUT") else b""
        try:
            result = self._route(self.command, path, split.path, query, body)
        except HubError as err:
            self._send_error(err)
            return
        except (ValueError, KeyError) as err:
            self._send_error(HubError(400, f"bad request: {err}"))
            return
        if result is None:
            hub.unhandled.append((self.command, split.path))
            self._send_error(HubError(404, f"local Hub: no route for {self.command} {split.path}"))
        elif isinstance(result, tuple) and len(result) == 2:
            self._send_json(*result)

    def _route(self, method: str, path: str, raw_path: str, query: dict, body: bytes):
        hub = self.hub
        js = lambda: json.loads(body.decode() or "{}")
        if method == "GET" and path == "/api/whoami-v2":
            if not hub._authorized(self.headers):
                raise HubError(401, "Invalid credentials in Authorization header")
            return 200, {"type": "user", "name": hub.user, "orgs": [], "auth": {"type": "access_token"}}
        if method == "POST" and path == "/api/repos/create":
            return hub.create_repo(js(), self.headers)
        if method == "POST" and path == "/api/validate-yaml":
            return hub.validate_yaml(js())
        # revisions may contain "/" once unquoted (refs/pr/1): match on the raw (quoted) path for those routes
        m = re.fullmatch(rf"/api/models/{_REPO}/preupload/(?P<rev>[^/]+)", raw_path)
        if method == "POST" and m:
            return hub.preupload(unquote(m["repo"]), unquote(m["rev"]), js(), self.headers)
        m = re.fullmatch(rf"/api/models/{_REPO}/commit/(?P<rev>[^/]+)", raw_path)
        if method == "POST" and m:
            return hub.commit(unquote(m["repo"]), unquote(m["rev"]), body, self.headers, query)
        m = re.fullmatch(rf"/api/models/{_REPO}/branch/(?P<branch>[^/]+)", raw_path)
        if method == "POST" and m:
            return hub.create_branch(unquote(m["repo"]), unquote(m["branch"]), js(), self.headers)
        m = re.fullmatch(rf"/{_REPO}\.git/info/lfs/objects/batch", path)
        if method == "POST" and m:
            return hub.lfs_batch(m["repo"], js(), self.headers)
        m = re.fullmatch(r"/lfs-objects/(?P<oid>[0-9a-f]{64})", path)
        if method == "PUT" and m:
            return hub.lfs_put(m["oid"], body)
        m = re.fullmatch(rf"/api/models/{_REPO}(/revision/(?P<rev>[^/]+))?", raw_path)
        if method == "GET" and m:
            return hub.model_info(unquote(m["repo"]), unquote(m["rev"] or "main"), self.headers)
        m = re.fullmatch(rf"/api/models/{_REPO}/tree/(?P<rev>[^/]+)(?P<sub>/.*)?", raw_path)
        if method == "GET" and m:
            recursive = query.get("recursive", "false").lower() in ("1", "true")
            return hub.tree(unquote(m["repo"]), unquote(m["rev"]), unquote(m["sub"] or ""), recursive, self.headers)
        m = re.fullmatch(rf"/api/models/{_REPO}/refs", raw_path)
        if method == "GET" and m:
            return hub.refs(unquote(m["repo"]), self.headers)
        m = re.fullmatch(rf"/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<file>.+)", raw_path)
        if method in ("GET", "HEAD") and m:
            sha, f, data = hub.resolve_file(unquote(m["repo"]), unquote(m["rev"]), unquote(m["file"]), self.headers)
            self._send_file(sha, f, data)
            return True
        return None

    def _send_file(self, sha: str, f: StoredFile, data: bytes) -> None:
        etag = f'"{f.lfs_oid or f.blob_oid}"'
        start = 0
        rng = self.headers.get("Range", "")
        m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
        if m and self.command == "GET":
            start = min(int(m.group(1)), len(data))
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("X-Repo-Commit", sha)
        self.send_header("ETag", etag)
        if f.lfs_oid is not None:
            self.send_header("X-Linked-Etag", etag)
            self.send_header("X-Linked-Size", str(f.size))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data[start:])

    do_GET = do_HEAD = do_POST = do_PUT = _dispatch


def main(argv: list[str] | None = None) -> None:
    """Run the local Hub in the foreground until interrupted (Ctrl-C)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--token", default="hf_local_test_token", help="the accepted write token")
    parser.add_argument("--user", default="tester")
    args = parser.parse_args(argv)
    hub = LocalHub(token=args.token, user=args.user, port=args.port).start()
    print(f"local Hub at {hub.url} (HF_ENDPOINT={hub.url} HF_HUB_DISABLE_XET=1)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        hub.stop()


if __name__ == "__main__":
    main()
