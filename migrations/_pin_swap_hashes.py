"""pin-swap's `hash` parameter: what happens to the `sha256`/`hash` of a fetcher whose revision changes.

- "keep" (the default): the hash is left as it is and warned ("hash must be refreshed").
- "remove": the fetcher's `sha256`/`hash` binding is deleted (its whole line when it has
  one of its own), so Nix fetches the new revision unpinned or reports the right hash.
- a sha256 value (after `hash = "compute"`, the one pinshift.facts.pin_inputs computed): the
  NAR hash of the new revision's unpacked archive, written where that is the hash Nix
  checks: `builtins.fetchTarball`/`fetchTarball`, `fetchzip` and `fetchFromGitHub`
  (without `postFetch`, `stripRoot = false`, `fetchSubmodules = true` or another
  argument that changes what is hashed). An existing `sha256`/`hash` keeps its
  notation (Nix base32, base16, `sha256:` prefix or SRI `sha256-…`; an empty or
  unreadable one gets base32 for `sha256`, SRI for `hash`); a fetchTarball without one
  gets `sha256 = "<base32>";` after its last binding, laid out like it, and the
  bare-URL form `fetchTarball "<url>"` becomes `fetchTarball { url = "<url>"; sha256 = "…"; }`.
  Fetchers already at the new revision get it too, so a run after a swap made with
  "keep" fills the hashes in, and a second run changes nothing. Other fetchers
  (`fetchurl` hashes the tarball file itself; `fetchgit`/`builtins.fetchGit` a git
  checkout) are warned, never given a hash that is not theirs.
- legacy `new-hash`: the text as given, written into every swapped fetcher's
  `sha256`/`hash`/`narHash`/`outputHash` string, nothing inserted (as before `hash` existed).
"""

from __future__ import annotations

from pinshift.edits import Edit
from pinshift.nixpkgs.nar import hash_format, render_sha256
from pinshift.steps.kind import StepOutput
from pinshift.steps import layout
from pinshift.syntax.queries import as_string, unwrap

UNPACKING = ("fetchTarball", "fetchzip", "fetchFromGitHub")
# arguments that make the fetcher hash something other than the unpacked archive, unless they have this value
_CHANGES_CONTENT = {"postFetch": None, "extraPostFetch": None, "stripRoot": b"true", "fetchSubmodules": b"false",
                    "leaveDotGit": b"false", "deepClone": b"false", "forceFetchGit": b"false",
                    "sparseCheckout": None, "fetchLFS": b"false"}
_WRITABLE = ("sha256", "hash")


def is_plain_string(node) -> bool:
    string = as_string(node)
    return string is not None and not string.indented and all(p.kind == "literal" for p in string.parts)


def why_not_computable(doc, call) -> str | None:
    """Why the computed hash is not this fetcher's hash, or None when it is."""
    name = call.function.rsplit(".", 1)[-1]
    if name not in UNPACKING:
        what = "the downloaded file itself" if name == "fetchurl" else "a git checkout"
        return f"{call.function} hashes {what}, not the unpacked archive pinshift computes"
    for argument, harmless in _CHANGES_CONTENT.items():
        value = call.args.get(argument)
        if value is not None and (harmless is None or doc.text(unwrap(value)) != harmless):
            return f"{call.function} with {argument} hashes something else than the unpacked archive"
    return None


def _refresh_warning(doc, node, key: str, short: str, why: str) -> tuple[int, str]:
    line = doc.position(node.start_byte)[0]
    return node.start_byte, f"hash must be refreshed: {doc.path}:{line} ({key} still belongs to {short}; {why})"


def _removal(doc, value, reason: str) -> Edit | None:
    """Delete the binding of `value`: its whole line when it stands alone there."""
    binding = value.parent
    if binding is None or binding.type != "binding":
        return None
    data, start, end = doc.data, binding.start_byte, binding.end_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    before, after = data[line_start:start], data[end:line_end].rstrip(b"\r")
    if not before.strip() and not after.strip():  # the line holds nothing else: it goes, with its line ending
        if line_end < len(data):
            return Edit(line_start, line_end + 1, b"", reason)
        start = max(line_start - (2 if data[max(line_start - 2, 0) : line_start] == b"\r\n" else 1), 0)
        return Edit(start, len(data), b"", reason)
    if not before.strip():  # first on its line: keep the indentation for what follows
        while end < line_end and data[end : end + 1] in (b" ", b"\t"):
            end += 1
        return Edit(start, end, b"", reason)
    while start > line_start and data[start - 1 : start] in (b" ", b"\t"):
        start -= 1
    return Edit(start, end, b"", reason)


def _written(digest: bytes, key: str, current: str) -> str:
    found = hash_format(current)
    if found is None:
        return render_sha256(digest, "base32" if key == "sha256" else "sri")
    return render_sha256(digest, *found)


def _insertion(doc, call, text: bytes, reason: str) -> list[Edit] | None:
    """`sha256 = "...";` into a fetchTarball without a hash (the bare-URL form becomes an attrset)."""
    if call.function.rsplit(".", 1)[-1] != "fetchTarball":
        return None
    if call.form == "url":
        url = call.url
        return [Edit(url.start_byte, url.start_byte, b"{ url = ", reason),
                Edit(url.end_byte, url.end_byte, b"; " + text + b" }", reason)]
    argument = unwrap(call.node.child_by_field_name("argument"))
    binding_set = next((c for c in argument.named_children if c.type == "binding_set"), None)
    siblings = [c for c in binding_set.named_children if c.type != "comment"] if binding_set is not None else []
    if not siblings:
        return None
    return [layout.insert_after_binding(doc.data, siblings, text, reason)]


def plan_hashes(doc, calls, params, out: StepOutput, short: str) -> None:
    """Hash edits and warnings for `calls`: (FetcherCall, swapped) pairs, swapped False for a fetcher
    already at the new revision (only a sha256 value is written there)."""
    digest = params.digest
    for call, swapped in calls:
        if params.new_hash is not None:
            if swapped:
                _legacy(doc, call, params.new_hash, out, short)
            continue
        if digest is None:
            if swapped:
                _keep_or_remove(doc, call, params.hash, out, short)
            continue
        why = why_not_computable(doc, call)
        if why is not None:
            for key, node in sorted(call.hashes.items()):
                if swapped:
                    out.warn(*_refresh_warning(doc, node, key, short, f"{why}: update it by hand"))
            continue
        _write(doc, call, digest, params.new[:7], out, short, swapped)


def _legacy(doc, call, value: str, out: StepOutput, short: str) -> None:
    for key, node in sorted(call.hashes.items()):
        if is_plain_string(node):
            out.edits.append(Edit(node.start_byte + 1, node.end_byte - 1, value.encode(), f"pin-swap: new {key}"))
        else:
            out.warn(*_refresh_warning(doc, node, key, short, 'set hash = "compute" or update it by hand'))


def _keep_or_remove(doc, call, mode: str, out: StepOutput, short: str) -> None:
    for key, node in sorted(call.hashes.items()):
        edit = _removal(doc, node, f"pin-swap: remove {key} (it belonged to {short})") if mode == "remove" else None
        if edit is None:
            out.warn(*_refresh_warning(doc, node, key, short, 'set hash = "compute" or update it by hand'))
        else:
            out.edits.append(edit)


def _write(doc, call, digest: bytes, new_short: str, out: StepOutput, short: str, swapped: bool) -> None:
    written = False
    for key, node in sorted(call.hashes.items()):
        if key not in _WRITABLE or not is_plain_string(node):
            if swapped:
                why = "not a plain string: update it by hand" if key in _WRITABLE else \
                    f"pinshift writes only sha256 and hash: update {key} by hand"
                out.warn(*_refresh_warning(doc, node, key, short, why))
            continue
        written = True
        current = doc.text(node)[1:-1].decode("utf-8", "replace")
        text = _written(digest, key, current)
        if text != current:
            out.edits.append(Edit(node.start_byte + 1, node.end_byte - 1, text.encode(),
                                  f"pin-swap: {key} of nixpkgs {new_short}"))
    if written or any(key in call.hashes for key in _WRITABLE):
        return
    line = f'sha256 = "{render_sha256(digest, "base32")}";'.encode()
    edits = _insertion(doc, call, line, f"pin-swap: insert sha256 of nixpkgs {new_short}")
    if edits is None:
        out.warn(call.node.start_byte, f"{doc.path}:{doc.position(call.node.start_byte)[0]}: {call.function} has "
                                       "no sha256 to update and none can be inserted here: add it by hand")
    else:
        out.edits.extend(edits)
