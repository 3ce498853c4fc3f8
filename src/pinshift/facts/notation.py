"""One notation per fact: GPU targets, CUDA and Python versions, CPU ISAs, as recipes and their names write them.

Recipes of one maintainer write the same fact several ways; every report compares and counts them
in one notation:

- GPU target: `sm<N>`, the compute capability without its dot, an architecture-specific suffix kept.
  `"9.0"`, `"90"`, `"sm_90"`, `"SM90"`, `"compute_90"`, `"90-real"`, `"9.0+PTX"` -> sm90;
  `"12.0"` -> sm120; `"9.0a"`, `"sm_90a"` -> sm90a. A list (`"8.6;9.0"`, `"8.6 9.0"`) is several targets.
- CUDA: `X.Y`, never a bare major: `cudaPackages_12_9` -> 12.9; `cudaPackages_13` names only the
  major (the newest 13.x at the pin), so the minor comes from the file name (`cuda13_0` -> 13.0) or
  a `cudaVersion` binding, else it is shown as `13.x`.
- Python: `3.13` (`python313Packages`, `python313`, `py313`, `python3.13`).
- CPU ISA: the names the seed uses (`avx2`, `avx512`, `avx512bf16`, `armv9`, ...), read from compiler flags.

`name_parts` reads a recipe's file name (`onnxruntime-python312-cuda12_4-sm75-avx2`) token by token,
so names of other projects, without a Python or ISA part, or with `cu124`/`py312` tokens still say what
they say.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# ISA name -> the compiler flags that mark it; the first ISA with a matching flag wins (most specific first).
ISA_MARKERS = (
    ("armv9", ("-march=armv9",)),
    ("armv8_2", ("-march=armv8.2",)),
    ("avx512bf16", ("-mavx512bf16",)),
    ("avx512vnni", ("-mavx512vnni",)),
    ("avx512", ("-mavx512f", "-march=x86-64-v4")),
    ("avx2", ("-mavx2", "-march=x86-64-v3", "-march=haswell")),
    ("avx", ("-mavx", "-march=sandybridge", "-march=ivybridge")),
)
ISAS = tuple(name for name, _ in ISA_MARKERS)
ARM_ISAS = frozenset({"armv9", "armv8_2"})

_SM = re.compile(r"(?:sm_?|compute_)?(\d+)(?:\.(\d+))?([a-z]?)(?:\+ptx|-real|-virtual)?", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"[;,\s]+")
_FLAG = re.compile(r"(?<![\w-])-m[\w.=+-]+")


def normalize_sm(value: str) -> str | None:
    """The SM number a GPU target names, whatever the notation; None when it names none.

    Examples:
        "8.6", "sm_86", "sm86", "86", "86-real" -> "86";  "12.0" -> "120";  "sm_90a", "9.0a" -> "90a";
        "ampere", "native", "9" -> None
    """
    match = _SM.fullmatch(value.strip())
    if match is None:
        return None
    major, minor, suffix = match.groups()
    number = int(major + (minor or ""))
    if not 30 <= number <= 199:
        return None
    return f"{number}{suffix.lower()}"


def sm_targets(value: str) -> tuple[str, ...]:
    """Every target a value names, as `sm<N>` labels: `"8.6;9.0+PTX"` -> ("sm86", "sm90")."""
    found = []
    for part in _LIST_SPLIT.split(value.strip().strip('"')):
        sm = normalize_sm(part) if part else None
        if sm is not None and f"sm{sm}" not in found:
            found.append(f"sm{sm}")
    return tuple(found)


def sm_key(label: str) -> tuple:
    """Sort key of an `sm<N>` label: by number, `sm90` before `sm90a` before `sm100`."""
    match = re.fullmatch(r"sm(\d+)([a-z]?)", label)
    return (0, int(match.group(1)), match.group(2)) if match else (1, 0, label)


def cuda_version(major: str, minor: str | None) -> str:
    """`12.9`; `13.x` when only the major is known."""
    return f"{int(major)}.{int(minor)}" if minor is not None else f"{int(major)}.x"


_CUDA_SET = re.compile(r"cudaPackages(?:_(\d+))?(?:_(\d+))?\Z")
_CUDA_TEXT = re.compile(r"(\d+)(?:[._](\d+))?(?:\.\d+)*\Z")


def cuda_set_version(name: str) -> tuple[str, str | None] | None:
    """(major, minor) a package set names: `cudaPackages_12_9` -> ("12", "9"), `cudaPackages_13` ->
    ("13", None); ("", None) for `cudaPackages` (the pin's default); None for another name."""
    match = _CUDA_SET.fullmatch(name)
    if match is None:
        return None
    return match.group(1) or "", match.group(2)


def cuda_text_version(text: str) -> tuple[str, str | None] | None:
    """(major, minor) of a written CUDA version: `"12.4"`, `"12_4"`, `"12.4.1"` -> ("12", "4"); `"13"` -> ("13", None)."""
    match = _CUDA_TEXT.fullmatch(text.strip())
    if match is None or not 7 <= int(match.group(1)) <= 30:
        return None
    return match.group(1), match.group(2)


def isa_of(flags) -> str | None:
    """The ISA compiler flags target (`avx512` for `-mavx512f ...`), None without a known flag."""
    for name, markers in ISA_MARKERS:
        for flag in flags:
            if any(flag == m or flag.startswith(m + "-") or flag.startswith(m + "+") for m in markers):
                return name
    return None


def flags_in(text: str) -> tuple[str, ...]:
    """The `-m...` compiler flags in a piece of text (`export CXXFLAGS="$CXXFLAGS -mavx2 -mfma"`)."""
    return tuple(_FLAG.findall(text))


_PYTHON_TEXT = re.compile(r"(?:python|py)(3)\.?(\d{1,2})\Z")


def python_version(name: str) -> str | None:
    """`3.13` from `python313`, `py313`, `python3.13`; None for anything else (`python3` says no minor)."""
    match = _PYTHON_TEXT.fullmatch(name)
    return f"{match.group(1)}.{int(match.group(2))}" if match else None


# --- file names ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NameParts:
    """What a file name says, token by token; None where it says nothing."""

    project: str  # the tokens before the first variant token: `pytorch`, `onnxruntime`, `comfyui`
    python: str | None = None  # `3.13`
    cuda: str | None = None  # `12.4`; `13.x` for a bare `cuda13`
    cuda_token: str | None = None  # as written: `cuda12_4`
    sm: str | None = None  # `sm90a`
    cpu: bool = False
    darwin: bool = False
    isa: str | None = None
    others: tuple[str, ...] = ()  # tokens after the project that are none of these

    @property
    def convention(self) -> bool:
        """Whether the name reads as `<project>[-python<XY>]-(cuda<X>_<Y>-sm<N>|cpu|darwin-<backend>)[-<isa>]`."""
        target = (self.cuda is not None and self.sm is not None) or self.cpu or self.darwin
        return bool(self.project) and target and not self.others


_TOKENS = (
    ("python", re.compile(r"(?:python|py)3\.?\d{1,2}\Z")),
    ("cuda", re.compile(r"(?:cuda(\d+)(?:[_.](\d+))?|cu(\d{2})(\d))\Z")),
    ("sm", re.compile(r"sm_?(\d+[a-z]?)\Z")),
    ("cpu", re.compile(r"cpu\Z")),
    ("darwin", re.compile(r"darwin\Z")),
)


def recipe_stem(path: str) -> str:
    """The name a recipe file gives its package, as Flox names it: `foo` for `.flox/pkgs/foo.nix` and for
    `.flox/pkgs/foo/default.nix`."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    if parts[-1] == "default.nix" and len(parts) > 1:
        return parts[-2]
    return parts[-1].removesuffix(".nix")


@functools.lru_cache(maxsize=4096)
def name_parts(stem: str) -> NameParts:
    """The parts of a recipe's file name (without `.nix`).

    Examples:
        "pytorch-python313-cuda12_9-sm90-avx512" -> project pytorch, 3.13, 12.9, sm90, avx512
        "vllm-python313-cuda12_9-sm90a"          -> project vllm, 3.13, 12.9, sm90a, no ISA
        "onnxruntime-gpu-py312-cu124-sm75"       -> project onnxruntime-gpu, 3.12, 12.4, sm75
        "pytorch-python313-darwin-mps"           -> darwin (the backend token after it is no ISA)
    """
    tokens = stem.split("-")
    project, found, others = [], {}, []
    seen_marker = False
    previous = None
    for token in tokens:
        kind = next((k for k, pattern in _TOKENS if pattern.fullmatch(token)), None)
        if kind is None and token in ISAS:
            kind = "isa"
        if kind is None:
            if not seen_marker:
                project.append(token)
            elif previous != "darwin":  # `darwin-mps`: the backend
                others.append(token)
            previous = None
            continue
        seen_marker = True
        found.setdefault(kind, token)
        previous = kind
    cuda = cuda_token = None
    if "cuda" in found:
        cuda_token = found["cuda"]
        match = _TOKENS[1][1].fullmatch(cuda_token)
        major, minor = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        cuda = cuda_version(major, minor)
    sm = None
    if "sm" in found:
        number = normalize_sm(found["sm"])
        sm = f"sm{number}" if number else None
    python = python_version(found["python"].replace(".", "")) if "python" in found else None
    return NameParts("-".join(project), python, cuda, cuda_token, sm, "cpu" in found, "darwin" in found,
                     found.get("isa"), tuple(others))
