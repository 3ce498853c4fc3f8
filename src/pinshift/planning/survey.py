"""The survey: a step kind's `prepare` sees every file (as the steps before it left them) before it plans.

`SurveyDocuments` hands `prepare` the files parsed lazily, one at a time. A kind that splits `prepare` into
per-file `survey` and `resolve` is instead guessed from a few files (`guess_params`) and surveyed while it
plans; the runner checks the guess against every file's survey.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pinshift import languages
from pinshift.errors import PinshiftError, StepScriptError
from pinshift.files.tree import SkippedFile
from pinshift.planning.jobs import StepJob
from pinshift.planning.working_set import WorkingSet


def needs_survey(job: StepJob) -> bool:
    return job.kind.needs_survey(job.params)


class SurveyDocuments(Sequence):
    """The parsed, problem-free documents a `prepare` hook looks at, parsed lazily on each pass.

    A re-iterable sequence rather than a list, so a survey of ten thousand files
    never holds ten thousand trees at once.
    """

    def __init__(self, files: WorkingSet, job: StepJob, paths: Sequence[str]):
        self.files, self.job = files, job
        self.paths = [p for p in paths if self._wanted(p)]

    def _wanted(self, path: str) -> bool:
        if not self.job.applies_to(path, languages.language_for(path)):
            return False
        try:
            data = self.files.read(path)
        except SkippedFile:
            return False
        return not self.job.needles or any(n in data for n in self.job.needles)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        path = self.paths[index]
        return languages.parse(languages.language_for(path), self.files.read(path), path)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            doc = self[index]
            if not doc.problems:
                yield doc


SAMPLE_FILES = 16  # documents a guess is made from


def can_speculate(job: StepJob) -> bool:
    """A kind whose `prepare` splits into per-file `survey` + `resolve` can be surveyed while it plans."""
    return job.kind.can_survey


def guess_params(files: WorkingSet, job: StepJob, paths: Sequence[str]) -> Any:
    """`resolve` over the first few surveyable files, or None when that is not enough to guess."""
    sample = []
    applying = [p for p in paths if job.applies_to(p, languages.language_for(p))]
    ahead, batch = 0, SAMPLE_FILES * 4
    for number, path in enumerate(applying):
        if len(sample) >= SAMPLE_FILES:
            break
        if number == ahead:  # read ahead in doubling batches: files without the step's needles may come first
            files.prefetch(applying[ahead : ahead + batch])
            ahead, batch = ahead + batch, batch * 2
        language = languages.language_for(path)
        try:
            data = files.read(path)
        except SkippedFile:
            continue
        if job.needles and not any(n in data for n in job.needles):
            continue
        doc = languages.parse(language, data, path)
        if not doc.problems:
            sample.append(job.kind.survey(doc, job.params))
    try:
        return job.kind.resolve(job.params, sample)
    except StepScriptError:
        raise
    except PinshiftError:
        return None


def segment_paths(jobs: Sequence[StepJob], all_paths) -> list[str]:
    return [p for p in all_paths if any(j.applies_to(p, languages.language_for(p)) for j in jobs)]
