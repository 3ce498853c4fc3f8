"""`pinshift scan` output: the summary first (matrices, drift), per-recipe facts with --verbose.

Text and Markdown fit on a screen for hundreds of recipes: one matrix per
package, drift grouped by value with counts and the first file of each
minority group; `--verbose` lists every file of every group and every
recipe's facts. JSON always carries everything.
"""

from __future__ import annotations

import json
import re

from pinshift.languages import markdown_escape as md_escape
from pinshift.languages.display import visible_data

from pinshift.languages.fit import fit_line, fit_table
from pinshift.facts.facts import GPU_NAMES, RecipeFacts
from pinshift.facts.matrix import PIN_DRIFT, SET_DRIFT, Aggregates, Drift, Matrix, isa_of, share

_FULL_REVISION = re.compile(r"[0-9a-f]{40}\Z")
CALLER = "uses the caller's nixpkgs"


def _short(value: str) -> str:
    return value[:7] if _FULL_REVISION.match(value) else value


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# --- per recipe ------------------------------------------------------------------------------------


def _pins(facts: RecipeFacts) -> str:
    shown = "; ".join(f"{p.kind} {p.shown} ({'hash' if p.has_hash else 'no hash'})" for p in facts.pins)
    if facts.uses_caller_nixpkgs:
        return f"{shown}; {CALLER}" if shown else CALLER
    return shown or "-"


def _sourced(fact) -> str:
    return f"{fact.value} ({fact.source})" if fact is not None else "-"


def _gpu(facts: RecipeFacts) -> str:
    """`sm90 (gpuArchNum); gpuArchNum=90 gpuArchSM=9.0 gpuTargets=9.0`; `- (cpu)` for a CPU or Darwin build."""
    stated = " ".join(f"{name}={facts.gpu[name].value}" for name in GPU_NAMES if name in facts.gpu)
    if not (facts.builds or facts.pins):
        return stated or "-"
    if facts.kind != "gpu":
        return f"- ({facts.kind})" + (f"; {stated}" if stated else "")
    return _sourced(facts.target) + (f"; {stated}" if stated else "")


def _cpu(facts: RecipeFacts) -> str:
    if not facts.cpu_flags:
        return f"- ({facts.isa.value} from the file name)" if facts.isa else "-"
    source = f", {facts.cpu_flags_source}" if facts.cpu_flags_source and facts.cpu_flags_source != "cpuFlags" else ""
    return f"{' '.join(facts.cpu_flags)} ({isa_of(facts.cpu_flags) or 'unknown ISA'}{source})"


def _cuda(facts: RecipeFacts) -> str:
    if facts.kind == "gpu" or facts.cuda is None:
        return _sourced(facts.cuda)
    return f"- ({facts.kind} build; {facts.cuda.source})"


def _package(facts: RecipeFacts) -> str:
    if facts.package is None or not (facts.builds or facts.pins):
        return facts.package_path or "-"
    return f"{facts.package.value} ({facts.package.source})" + (f"; {facts.package_path}" if facts.package_path else "")


def _rows(facts: RecipeFacts) -> list[tuple[str, str]]:
    return [
        ("pins", _pins(facts)),
        ("package", _package(facts)),
        ("version", _sourced(facts.version)),
        ("override", ", ".join(o.value for o in facts.overrides) or "-"),
        ("gpu", _gpu(facts)),
        ("cuda", _cuda(facts)),
        ("python", _sourced(facts.python)),
        ("cpu", _cpu(facts)),
        ("pname", facts.pname.value if facts.pname else (facts.pname_expression or "-")),
        ("platforms", ", ".join(facts.platforms) or "-"),
        ("metadata-rev", facts.metadata_rev.value if facts.metadata_rev else "-"),
    ]


# --- the summary -----------------------------------------------------------------------------------


def _matrix_table(matrix: Matrix, markdown: bool, width: int | None = None) -> list[str]:
    header = ["gpu", "cuda", *matrix.columns]
    body = [[gpu, cuda, *(str(matrix.cells.get((gpu, cuda, c), "")) for c in matrix.columns)]
            for gpu, cuda in matrix.rows]
    if markdown:
        lines = ["| " + " | ".join(map(md_escape.cell, header)) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(map(md_escape.cell, r)) + " |" for r in body]
    if width is not None:
        return fit_table([header, *body], width, keep=2)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *body]]


def _group_lines(drift: Drift, short, verbose: bool) -> list[tuple[str, list[str]]]:
    """(line, files listed under it) per group: the majority says so, the others name their first file."""
    width = max(len(short(value)) for value, _ in drift.groups)
    total = sum(len(paths) for _, paths in drift.groups)
    out = []
    for value, paths in drift.groups:
        line = f"{short(value).ljust(width)}  {_plural(len(paths), 'recipe')}"
        if value == drift.majority:
            out.append((line + f" ({share(len(paths), total)})", list(paths) if verbose else []))
        elif verbose:
            out.append((line, list(paths)))
        else:
            out.append((line + (f": {paths[0]}" if len(paths) == 1 else f", first: {paths[0]}"), []))
    return out


def _drift_block(name: str, what: str, drift: Drift, short, verbose: bool, drifting: bool,
                 apart: str = "") -> list[tuple[str, list[str]]]:
    """The lines of one drift: `drifting` is matrix.drift_markers' word (status's Drift column says the same)."""
    if not drift.groups:
        return [(f"{name}: none found", [])]
    total = sum(len(paths) for _, paths in drift.groups)
    if len(drift.groups) == 1 and drift.majority is not None:
        if drifting:
            return [(f"{name}: all {_plural(total, 'pinned recipe')} pin {short(drift.majority)}, {apart}", [])]
        return [(f"{name}: none (all {_plural(total, 'recipe')}: {short(drift.majority)})", [])]
    if not drifting:
        shown = ", ".join(f"{short(value)} ({len(paths)})" for value, paths in drift.groups)
        return [(f"{name}: none (one {what} per Python: {shown})", [])]
    head = f"{name}: {_plural(len(drift.groups), what)} among {_plural(total, 'recipe')}"
    return [(head, [])] + [("  " + line, files) for line, files in _group_lines(drift, short, verbose)]


def _unpinned_block(paths: tuple[str, ...], label: str, verbose: bool) -> list[tuple[str, list[str]]]:
    if not paths:
        return []
    line = f"{label}: {_plural(len(paths), 'recipe')}"
    if verbose:
        return [(line, list(paths))]
    return [(line + (f": {paths[0]}" if len(paths) == 1 else f", first: {paths[0]}"), [])]


def _drift(agg: Aggregates, verbose: bool) -> list[tuple[str, list[str]]]:
    pinned = bool(agg.pins.groups)
    apart = "beside recipes with no pin of their own (below)"
    caller = f"{CALLER} (no pin of their own" + (": drift beside the pinned ones)" if pinned else ", not drift)")
    return (_drift_block("pin drift", "revision", agg.pins, _short, verbose, PIN_DRIFT in agg.markers, apart)
            + _unpinned_block(agg.caller, caller, verbose)
            + _unpinned_block(agg.unpinned, "no pin (neither a fetcher nor function arguments)", verbose)
            + _drift_block("package-set drift", "package set", agg.package_sets, str, verbose,
                           SET_DRIFT in agg.markers))


def _helpers(agg: Aggregates, verbose: bool) -> list[str]:
    """`not recipes: 2 helper files (…)`: the files pinshift.facts.recipe_set does not count, and why."""
    helpers = sorted((agg.helpers or {}).items())
    if not helpers:
        return []
    shown = helpers if verbose else helpers[:3]
    listed = "; ".join(f"{path} ({why})" for path, why in shown)
    more = f"; and {len(helpers) - len(shown)} more" if len(shown) < len(helpers) else ""
    return [f"not recipes: {_plural(len(helpers), 'helper file')}, not counted: {listed}{more}"]


def _problems(recipes: list[RecipeFacts]) -> list[str]:
    broken = [f for f in recipes if f.problems]
    if not broken:
        return []
    return [f"syntax problems in {_plural(len(broken), 'file')} (first: {broken[0].problems[0]}; "
            "`pinshift parse` lists them)"]


def _hint(agg: Aggregates, verbose: bool) -> list[str]:
    summarized = len(agg.pins.groups) > 1 or agg.caller or agg.unpinned or len(agg.package_sets.groups) > 1
    return [] if verbose else ["(--verbose lists each recipe's facts" + (" and every file of each group)"
                                                                         if summarized else ")")]


def render_scan(recipes: list[RecipeFacts], agg: Aggregates, fmt: str, verbose: bool = False,
                width: int | None = None) -> str:
    """The scan in `fmt`; text fitted to `width` columns when given (pinshift.languages.fit: the matrix in blocks of
    columns, every other line wrapped)."""
    if fmt == "json":
        return json.dumps(visible_data({"recipes": [f.to_json() for f in recipes], **agg.to_json()}), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(recipes, agg, verbose)
    lines = [f"{_plural(len(recipes), 'file')} scanned, {_plural(agg.count, 'recipe')}"
             f"{'' if len(agg.matrices) < 2 else ' in ' + _plural(len(agg.matrices), 'package')}", ""]
    for matrix in agg.matrices:
        lines += [f"{matrix.package} ({_plural(matrix.count, 'recipe')})", *_matrix_table(matrix, False, width), ""]
    for line, files in _drift(agg, verbose):
        lines.append(line)
        indent = "      " if line.startswith("  ") else "    "
        lines.extend(indent + path for path in files)
    lines += _helpers(agg, verbose) + _problems(recipes) + _hint(agg, verbose)
    if verbose:
        lines.append("")
        for facts in recipes:
            lines.append(facts.path)
            lines.extend(f"  {key:<13}{value}" for key, value in _rows(facts))
            lines.extend(f"  problem      {p}" for p in facts.problems)
    if width is not None:
        lines = [piece for line in lines for piece in fit_line(line, width, keep_tokens=verbose)]
    return "\n".join(lines) + "\n"


def _markdown(recipes: list[RecipeFacts], agg: Aggregates, verbose: bool) -> str:
    lines = []
    for matrix in agg.matrices:
        lines += [f"## Variant matrix: {md_escape.text(matrix.package)} ({_plural(matrix.count, 'recipe')})", "",
                  *_matrix_table(matrix, True), ""]
    lines += ["## Drift", ""]
    for line, files in _drift(agg, verbose):
        lines.append(f"  - {md_escape.text(line.strip())}" if line.startswith("  ") else f"- {md_escape.text(line)}")
        indent = "    - " if line.startswith("  ") else "  - "
        lines.extend(f"{indent}{md_escape.code(path)}" for path in files)
    lines += [f"- {md_escape.text(line)}" for line in _helpers(agg, verbose) + _problems(recipes)]
    if verbose:
        keys = [k for k, _ in _rows(RecipeFacts(""))]
        lines += ["", "## Recipes", "", "| file | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
        for facts in recipes:
            cells = [md_escape.cell(v) for _, v in _rows(facts)]
            lines.append(f"| {md_escape.code(facts.path, table=True)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
