"""Python sources through libcst: string-literal contents, f-string literal parts and comments as byte ranges.

libcst reads the bytes itself (honouring a BOM or an encoding cookie) and
reports positions as 1-based lines and 0-based columns counted in characters.
pinshift edits bytes, so every column is converted through the line's own
bytes: in `x = "é1"` the string's content starts at character 5 but byte 6.

Examples:
    `url = f"https://x/{rev}.tar.gz"` gives two "string" spans, `https://x/` and
    `.tar.gz`; the `{rev}` expression is code and never a span.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from pinshift.languages.text import Occurrence, Span, TextDocument, char_to_byte_offsets, innermost, word_matches

_BOM = b"\xef\xbb\xbf"


@dataclass
class PythonDocument(TextDocument):
    """A Python file: its libcst module (None when it does not parse) and byte-ranged spans."""

    module: cst.Module | None = None

    @cached_property
    def _positions(self):
        return MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)

    def _offset(self, line: int, column: int) -> int:
        """Byte offset of libcst's (1-based line, 0-based character column)."""
        if line > len(self.lines):
            return len(self.data)
        start, end = self.lines[line - 1]
        if line == 1 and self.data.startswith(_BOM):
            start += len(_BOM)
        encoding = self.module.encoding if self.module is not None else "utf-8"
        if encoding.replace("_", "-").lower() == "utf-8-sig":
            encoding = "utf-8"  # the BOM was skipped above; encoding each character must not add one
        text = self.data[start:end].decode(encoding, "surrogateescape")
        offsets = char_to_byte_offsets(text, encoding)
        return start + offsets[min(column, len(text))]

    def byte_range(self, node: cst.CSTNode) -> tuple[int, int]:
        """The (start, end) bytes of a node of `self.module`."""
        where = self._positions[node]
        return self._offset(where.start.line, where.start.column), self._offset(where.end.line, where.end.column)

    def nodes(self, *types: type) -> list[cst.CSTNode]:
        """Every node of the module (of `types`, when given), in source order."""
        if self.module is None:
            return []
        found = [n for n in self._positions if not types or isinstance(n, types)]
        return sorted(found, key=self.byte_range)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node, as libcst renders it (identical to the input)."""
        return self.module.code_for_node(node)

    def string_content(self, node: cst.SimpleString) -> tuple[int, int]:
        """Bytes between the quotes of a plain string literal (prefix and quotes excluded)."""
        start, end = self.byte_range(node)
        prefix = len(node.prefix)
        quote = len(node.quote)
        return start + prefix + quote, end - quote

    @cached_property
    def spans(self) -> tuple[Span, ...]:
        """String contents ("string"), f-string literal parts ("string") and comments ("comment"), in order."""
        if self.module is None:
            return ()
        out = []
        for node in self._positions:
            if isinstance(node, cst.SimpleString):
                out.append(Span(*self.string_content(node), "string"))
            elif isinstance(node, cst.FormattedStringText):
                out.append(Span(*self.byte_range(node), "string"))
            elif isinstance(node, cst.Comment):
                out.append(Span(*self.byte_range(node), "comment"))
        return tuple(sorted(out, key=lambda s: (s.start, s.end)))

    def strings(self) -> list[Span]:
        return [s for s in self.spans if s.kind == "string"]

    def comments(self) -> list[Span]:
        return [s for s in self.spans if s.kind == "comment"]


def occurrences(doc: PythonDocument, needle: bytes, include_comments: bool = False) -> list[Occurrence]:
    """Whole-word occurrences: editable in string literals (and comments, if asked), never in code."""
    found = []
    for match in word_matches(doc.data, needle):
        span = innermost(doc.spans, match.start, match.end)
        if span is None:
            found.append(Occurrence(match.start, match.end, "code", False, "libcst", "not inside a string literal"))
        elif span.kind == "comment" and not include_comments:
            found.append(Occurrence(match.start, match.end, "comment", False, "libcst", "in a comment (set include-comments to change comments)"))
        else:
            found.append(Occurrence(match.start, match.end, span.kind, True, "libcst"))
    return found


def parse_document(data: bytes, path: str = "<memory>") -> PythonDocument:
    """Parse Python bytes; a syntax error becomes the document's one problem (the step then refuses the file)."""
    doc = PythonDocument(path=path, data=data, parser=parse_document)
    try:
        doc.module = cst.parse_module(data)
    except cst.ParserSyntaxError as error:
        line = min(max(error.raw_line, 1), max(len(doc.lines), 1))
        offset = doc.lines[line - 1][0] if doc.lines else 0
        doc.problems = (doc.problem(offset, f"Python syntax error: {error.message}"),)
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        doc.problems = (doc.problem(0, f"cannot decode Python source: {error}"),)
    return doc
