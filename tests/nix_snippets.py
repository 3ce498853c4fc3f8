"""Small Nix snippets around the corners where tree-sitter-nix and Nix disagree (issue 36), made from a seed.

A random expression of Nix's grammar (functions and formals with `@`, lets, withs, ifs, every binary
operator including `?`, selects with `or`, applications, lists, attrsets with dotted, quoted and
interpolated names and inherits, strings, paths), with names drawn now and then from the keywords and
`or`, tokens joined by gaps (spaces, none, comments; in half the snippets now and then an odd one: a
form feed, a vertical tab, a lone CR, a `#` comment ended by a CR, a no-break space, a NUL), and two in
five then mutated (a token dropped, doubled, swapped, or an operator or bracket put in). Most are
invalid; some one in four is valid, and the valid ones are where pinshift once said yes to what Nix
rejects.
"""

from __future__ import annotations

import random

NAMES = ["a", "b", "f", "x"]
KEYWORDS = ["if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or"]
BINARY = ["==", "!=", "<", ">", "<=", ">=", "&&", "||", "->", "//", "++", "+", "-", "*", "/", "?"]
PLAIN_GAPS = [" "] * 20 + ["\n", "\t", "", "", "\r\n", " # c\n", "/* c */"]
ODD_GAPS = ["\r", "\f", "\v", " # c\r", " #\r x ", "\u00a0", "\0"]
ATOMS = ["1", "2.5", ".5", "0", '"s"', "''s''", "./p", "a/b", "/b", "<p>", "~/p", "-b/c", "+b/c", ".b/c", "x.a/b"]
NAMED = ["''a''", "''\na''", "''''\\n''", "''\n  a''", '"\\na"', '"a"', "''a$''"]  # inside `${ }`
STRAY = KEYWORDS + BINARY + ["{", "}", "(", ")", "[", "]", ";", ",", ".", "=", "@", ":", "..."]


class Snippets:
    """Snippets of one seed: `snippet()` makes the next."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def chance(self, p: float) -> bool:
        return self.random.random() < p

    def name(self) -> list[str]:
        return [self.random.choice(KEYWORDS if self.chance(0.04) else NAMES)]

    def attr(self, depth: int) -> list[str]:
        pick = self.random.random()
        if pick < 0.6:
            return self.name()
        if pick < 0.75:
            return ['"' + self.random.choice(NAMES) + '"']
        if pick < 0.85:
            return ["${", *self.expr(depth + 1), "}"]
        return ["${", self.random.choice(NAMED), "}"]

    def attrpath(self, depth: int) -> list[str]:
        found = self.attr(depth)
        while self.chance(0.3):
            found += [".", *self.attr(depth)]
        return found

    def atom(self, depth: int) -> list[str]:
        pick = self.random.randrange(6)
        if pick == 0:
            return self.name()
        if pick == 1:
            return [self.random.choice(ATOMS)]
        if pick == 2:
            return ['"${', *self.expr(depth + 1), '}"']
        if pick == 3:
            return ["(", *self.expr(depth + 1), ")"]
        if pick == 4:
            return ["[", *sum((self.select(depth + 1) for _ in range(self.random.randint(0, 3))), []), "]"]
        return self.attrset(depth)

    def attrset(self, depth: int) -> list[str]:
        found = [self.random.choice(["{", "{", "rec {", "let {"])]
        for _ in range(self.random.randint(0, 3)):
            pick = self.random.random()
            if pick < 0.7:
                found += [*self.attrpath(depth), "=", *self.expr(depth + 1), ";"]
            elif pick < 0.85:
                found += ["inherit", *sum((self.attr(depth) for _ in range(self.random.randint(0, 2))), []), ";"]
            else:
                found += ["inherit", "(", *self.expr(depth + 1), ")", *self.name(), ";"]
        return found + ["}"]

    def select(self, depth: int) -> list[str]:
        found = self.atom(depth)
        pick = self.random.random()
        if pick < 0.25:
            found += [".", *self.attrpath(depth)]
            if self.chance(0.3):
                found += ["or", *self.select(depth + 1)]
        elif pick < 0.32:
            found += ["or"]
        return found

    def operation(self, depth: int) -> list[str]:
        if depth > 3 or self.chance(0.5):
            found = self.select(depth)
            while self.chance(0.25):
                found += self.select(depth + 1)
            return found
        if self.chance(0.15):
            return [self.random.choice(["-", "!"]), *self.operation(depth + 1)]
        operator = self.random.choice(BINARY)
        if operator == "?":
            return [*self.operation(depth + 1), "?", *self.attrpath(depth)]
        return [*self.operation(depth + 1), operator, *self.operation(depth + 1)]

    def formals(self, depth: int) -> list[str]:
        items = [self.name() + (["?", *self.expr(depth + 1)] if self.chance(0.3) else [])
                 for _ in range(self.random.randint(0, 3))]
        if self.chance(0.2):
            items.append(["..."])
        found = ["{"]
        for index, item in enumerate(items):
            found += item + ([","] if index + 1 < len(items) or self.chance(0.3) else [])
        return found + ["}"]

    def expr(self, depth: int = 0) -> list[str]:
        if depth > 4:
            return self.atom(9)
        pick = self.random.random()
        if pick < 0.45:
            return self.operation(depth)
        if pick < 0.55:
            return [*self.name(), ":", *self.expr(depth + 1)]
        if pick < 0.65:
            head = self.formals(depth)
            if self.chance(0.2):
                head = [*self.name(), "@", *head]
            elif self.chance(0.2):
                head = [*head, "@", *self.name()]
            return [*head, ":", *self.expr(depth + 1)]
        if pick < 0.75:
            found = ["let"]
            for _ in range(self.random.randint(0, 2)):
                found += [*self.attrpath(depth), "=", *self.expr(depth + 1), ";"]
            return found + ["in", *self.expr(depth + 1)]
        if pick < 0.8:
            return ["with", *self.expr(depth + 1), ";", *self.expr(depth + 1)]
        if pick < 0.85:
            return ["assert", *self.expr(depth + 1), ";", *self.expr(depth + 1)]
        if pick < 0.9:
            return ["if", *self.expr(depth + 1), "then", *self.expr(depth + 1), "else", *self.expr(depth + 1)]
        return self.operation(depth)

    def mutated(self, tokens: list[str]) -> list[str]:
        pick = self.random.random()
        if pick < 0.6 or len(tokens) < 2:
            return tokens
        at = self.random.randrange(len(tokens))
        if pick < 0.7:
            return tokens[:at] + tokens[at + 1 :]
        if pick < 0.8:
            return tokens[:at] + [self.random.choice(STRAY)] + tokens[at:]
        if pick < 0.9:
            other = self.random.randrange(len(tokens))
            tokens = list(tokens)
            tokens[at], tokens[other] = tokens[other], tokens[at]
            return tokens
        return tokens[:at] + [tokens[at]] + tokens[at:]

    def gap(self, odd: bool) -> str:
        return self.random.choice(ODD_GAPS) if odd and self.chance(0.08) else self.random.choice(PLAIN_GAPS)

    def snippet(self) -> bytes:
        odd = self.chance(0.5)  # half the snippets have odd gaps now and then, half none
        return "".join(token + self.gap(odd) for token in self.mutated(self.expr())).encode()


def snippets(seed: int, count: int) -> list[bytes]:
    """`count` snippets of `seed`: the same ones on every run."""
    made = Snippets(seed)
    return [made.snippet() for _ in range(count)]
