"""pinshift agrees with `nix-instantiate --parse` on small snippets made around issue 36's corners.

Hand-picked shapes (tests/test_oracle.py) cover each rule; these cover what nobody picked: snippets of
Nix's grammar with keywords and `or` among the names, odd gaps between tokens (none, form feeds, lone
CRs ending `#` comments, NULs) and random mutations (tests/nix_snippets.py). The seeds are fixed, so a
run is repeatable and a failure names its snippet; Nix's verdict is the truth ("undefined variable"
counts as valid syntax, as everywhere in pinshift).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from nix_snippets import snippets

from pinshift.syntax.document import parse_document

SEEDS = (36, 3600)
COUNT = 200  # per seed: some 70 Nix-valid snippets in all, at some 20-50 ms a call to nix-instantiate


@pytest.mark.nix
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_snippets_agree_with_nix(seed, nix_oracle):
    cases = snippets(seed, COUNT)
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(nix_oracle, cases))
    disagreements = []
    for source, (accepted, message) in zip(cases, verdicts):
        accepted = accepted or "undefined variable" in message
        found = parse_document(source, "f.nix").problems
        if accepted != (not found):
            said = str(found[0]) if found else "no problem"
            disagreements.append(f"{source!r}: Nix {'accepts' if accepted else 'rejects'} ({message.strip()[:80]}); "
                                 f"pinshift: {said}")
    assert disagreements == []
    assert sum(accepted or "undefined variable" in message for accepted, message in verdicts) >= COUNT // 10


def test_the_snippets_are_the_same_on_every_run():
    assert snippets(36, 20) == snippets(36, 20)
    assert snippets(36, 20) != snippets(37, 20)
