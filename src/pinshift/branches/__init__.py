"""Branches: a recipe run onto one base or many, committed one step at a time on a new branch.

`migrate` (one base: prepare, plan, check, commit each step, `--resume`, `--keep-partial`), `resume` (an
existing branch's commits checked against the recipe, and the base it is on), `doc_facts` (`{facts.…}`
filled from the planned recipes, typed values held to them), `fanout`
(several bases: their targets named and checked before any work, one worker per base), `workers` (the
fan-out's worker processes: a signal reaches all of them, none outlives pinshift).

May import: pinshift.errors, pinshift.interrupts, pinshift.files, pinshift.git, pinshift.nixpkgs,
pinshift.recipes, pinshift.steps, pinshift.planning, pinshift.facts, pinshift.status, pinshift.evaluation,
pinshift.verify.
"""
