"""Sphinx directive ``c-header``: the reference of a C header, from the header.

``.. c-header:: include/mpidht.h`` (a path relative to the repository's
root) reads the header when the documentation is built and turns it into
Sphinx's C domain: every function, type, struct with its members, enum
with its enumerators and macro becomes an entry that can be linked to
(``:c:func:`mpidht_create```) and appears in the index. The comment above
a declaration is its documentation and is shown verbatim (the header's
comments are contracts), with the names the header declares linked; a
comment that stands alone becomes a block of its own, and a banner
(``/* ---- */ /* Title */ /* ---- */``) a section heading. The X-macro
lists (``MPIDHT_STATUS_LIST``, ``MPIDHT_STATS_LIST``) are expanded where
the header expands them.

The parser knows the shapes this project's headers use and nothing more:
anything else fails the build, as does a declaration of the header that
ends up undocumented, so the reference can neither go stale nor silently
drop a part of the API.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


class HeaderError(Exception):
    """The header has a shape this parser does not know."""


@dataclass
class Token:
    """A blank line, a comment, a preprocessor line or a line of code."""

    kind: str  # "blank", "comment", "pp" or "code"
    text: str
    line: int
    trailing: bool = False  # a comment after code on the same line


@dataclass
class Member:
    """An enumerator or a struct member."""

    decl: str
    doc: list[str] = field(default_factory=list)


@dataclass
class Decl:
    """One declaration of the header, as the C domain will show it."""

    kind: str  # "function", "macro", "type", "struct", "enum"
    signature: str
    name: str
    doc: list[str] = field(default_factory=list)
    value: str = ""
    members: list[Member] = field(default_factory=list)
    tag: str = ""  # the struct or enum tag of a typedef


@dataclass
class Block:
    """A free-standing comment, a heading, or declarations with their comment."""

    heading: str = ""
    text: str = ""
    decls: list[Decl] = field(default_factory=list)


@dataclass
class XList:
    """An X-macro list: per entry its arguments as written, and which of
    them are string literals (their text, unquoted, documents the entry)."""

    entries: list[list[str]]
    docs: list[list[str]]


# -- tokens --------------------------------------------------------------


def _split_comment(code: str) -> tuple[str, Optional[str]]:
    """The code before a ``/*`` that is not inside a string, and the rest."""
    in_string = False
    i = 0
    while i < len(code):
        c = code[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif code.startswith("/*", i):
            return code[:i], code[i:]
        i += 1
    return code, None


def _comment_text(raw: str) -> str:
    """The text of a ``/* ... */`` comment: delimiters and the leading
    `` * `` of each line removed, the indentation inside kept."""
    body = raw.strip()
    if not (body.startswith("/*") and body.endswith("*/")):
        raise HeaderError(f"not a comment: {raw!r}")
    lines = body[2:-2].split("\n")
    out = []
    for i, line in enumerate(lines):
        if i == 0:
            out.append(line.strip())
            continue
        stripped = line.lstrip()
        if stripped.startswith("* ") or stripped == "*":
            stripped = stripped[2:]
        out.append(stripped.rstrip())
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def tokenize(text: str) -> list[Token]:
    """The header as tokens, one per line or per comment."""
    lines = text.split("\n")
    tokens: list[Token] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        start = i + 1
        if not stripped:
            tokens.append(Token("blank", "", start))
            i += 1
            continue
        if stripped.startswith("/*"):
            raw = [line]
            while "*/" not in raw[-1]:
                i += 1
                if i == len(lines):
                    raise HeaderError(f"line {start}: unterminated comment")
                raw.append(lines[i])
            joined = "\n".join(raw)
            end = joined.index("*/") + 2
            if joined[end:].strip():
                raise HeaderError(f"line {i + 1}: code after a comment on the same line")
            tokens.append(Token("comment", _comment_text(joined[:end]), start))
            i += 1
            continue
        if stripped.startswith("#"):
            parts = [line]
            while parts[-1].rstrip().endswith("\\"):
                i += 1
                parts.append(lines[i])
            joined = " ".join(p.rstrip().rstrip("\\").strip() for p in parts)
            code, comment = _split_comment(joined)
            tokens.append(Token("pp", " ".join(code.split()), start))
            if comment is not None:
                if not comment.rstrip().endswith("*/"):
                    raise HeaderError(f"line {start}: a comment continues a directive")
                tokens.append(Token("comment", _comment_text(comment), start, trailing=True))
            i += 1
            continue
        code, comment = _split_comment(line)
        tokens.append(Token("code", code.strip(), start))
        if comment is not None:
            raw = [comment]
            while "*/" not in raw[-1]:
                i += 1
                if i == len(lines):
                    raise HeaderError(f"line {start}: unterminated comment")
                raw.append(lines[i])
            tokens.append(Token("comment", _comment_text("\n".join(raw)), start, trailing=True))
        i += 1
    return tokens


# -- X-macro lists ---------------------------------------------------------


def _arguments(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated arguments, as written, of the call whose "(" is
    at start, and the index after its ")"."""
    args: list[str] = []
    current = ""
    depth = 0
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            current += text[i:j + 1]
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                args.append(current.strip())
                return args, i + 1
            depth -= 1
        elif c == "," and depth == 0:
            args.append(current.strip())
            current = ""
            i += 1
            continue
        current += c
        i += 1
    raise HeaderError(f"unbalanced parentheses in {text!r}")


_STRINGS = re.compile(r'(\s*"(?:[^"\\]|\\.)*"\s*)+')


def _unquote(arg: str) -> str:
    """Adjacent string literals as one string."""
    return "".join(m.group(1) for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', arg))


def parse_xlist(body: str, param: str) -> XList:
    """The entries ``PARAM(...)`` of an X-macro's body."""
    entries: list[list[str]] = []
    i = 0
    pattern = re.compile(rf"\b{re.escape(param)}\s*\(")
    while True:
        m = pattern.search(body, i)
        if not m:
            break
        if body[i:m.start()].strip():
            raise HeaderError(f"unexpected text in an X-macro list: {body[i:m.start()]!r}")
        args, i = _arguments(body, m.end() - 1)
        entries.append(args)
    if body[i:].strip() or not entries:
        raise HeaderError(f"unexpected text in an X-macro list: {body[i:]!r}")
    docs = [[_unquote(a) for a in args if _STRINGS.fullmatch(a)] for args in entries]
    return XList(entries, docs)


# -- declarations -----------------------------------------------------------


_DEFINE = re.compile(r"#\s*define\s+(\w+)(\(([^)]*)\))?\s*(.*)")
_FUNCTION = re.compile(r"(.*?\W)(\w+)\s*\((.*)\)\s*;", re.S)
_FUNCTION_POINTER = re.compile(r"typedef\s+(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)\s*;", re.S)
_OPAQUE = re.compile(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;")
_AGGREGATE = re.compile(r"(typedef\s+(enum|struct)\s+(\w+)|enum)\s*\{")
_GUARDS = re.compile(r"#\s*(ifndef|ifdef|if|else|endif|include)\b")


class Parser:
    """Turns a header's tokens into blocks."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.xlists: dict[str, XList] = {}
        self.helpers: dict[str, tuple[list[str], str]] = {}  # NAME_(params): body
        self.blocks: list[Block] = []

    def error(self, token: Token, message: str) -> HeaderError:
        return HeaderError(f"line {token.line}: {message}")

    def parse(self) -> list[Block]:
        pending: list[str] = []  # comments not yet attached
        group: Optional[Block] = None
        while self.pos < len(self.tokens):
            token = self.tokens[self.pos]
            self.pos += 1
            if token.kind == "blank":
                self._flush(pending)
                pending, group = [], None
            elif token.kind == "comment":
                if token.trailing:
                    raise self.error(token, "a trailing comment after nothing documented")
                group = None  # a comment starts the next group
                pending.append(token.text)
            else:
                decls = self._statement(token)
                if not decls:
                    continue
                if group is None:
                    group = Block(text="\n\n".join(pending))
                    self.blocks.append(group)
                    pending = []
                group.decls.extend(decls)
        self._flush(pending)
        return self.blocks

    def _flush(self, comments: list[str]) -> None:
        """Free-standing comments: banners become headings."""
        rule = re.compile(r"-{10,}")
        i = 0
        while i < len(comments):
            if (i + 2 < len(comments) and rule.fullmatch(comments[i])
                    and rule.fullmatch(comments[i + 2])):
                self.blocks.append(Block(heading=comments[i + 1]))
                i += 3
            else:
                self.blocks.append(Block(text=comments[i]))
                i += 1

    def _trailing(self) -> list[str]:
        """The comment after the token just read, on its line."""
        if self.pos < len(self.tokens) and self.tokens[self.pos].trailing:
            self.pos += 1
            return [self.tokens[self.pos - 1].text]
        return []

    def _statement(self, token: Token) -> list[Decl]:
        if token.kind == "pp":
            return self._directive(token)
        if token.text in ('extern "C" {', "}"):
            return []
        m = _AGGREGATE.match(token.text)
        if m:
            return [self._aggregate(token, m)]
        code = [token.text]
        while not code[-1].endswith(";"):
            if self.pos == len(self.tokens) or self.tokens[self.pos].kind != "code":
                raise self.error(token, f"a statement this parser does not know: {code}")
            code.append(self.tokens[self.pos].text)
            self.pos += 1
        text = " ".join(" ".join(code).split())
        trailing = self._trailing()
        m = _OPAQUE.fullmatch(text)
        if m:
            return [Decl("type", m.group(2), m.group(2), trailing, tag=m.group(1))]
        m = _FUNCTION_POINTER.fullmatch(text)
        if m:
            return [Decl("type", text[len("typedef "):-1].strip(), m.group(2), trailing)]
        m = _FUNCTION.fullmatch(text)
        if m and not text.startswith(("typedef", "enum", "struct")):
            signature = text[:-1].replace("( ", "(").replace(" )", ")")
            return [Decl("function", signature, m.group(2), trailing)]
        raise self.error(token, f"a statement this parser does not know: {text}")

    def _directive(self, token: Token) -> list[Decl]:
        text = token.text
        if _GUARDS.match(text) or text.startswith("#undef"):
            self._trailing()
            return []
        m = _DEFINE.fullmatch(text)
        if not m:
            raise self.error(token, f"a directive this parser does not know: {text}")
        name, params, body = m.group(1), m.group(3), m.group(4)
        if not body and params is None and name.endswith("_H"):
            return []  # the include guard
        if name.endswith("_"):  # a helper that expands a list, #undef'd after
            if params is None:
                raise self.error(token, f"helper macro {name} without parameters")
            self.helpers[name] = ([p.strip() for p in params.split(",")], body)
            return []
        trailing = self._trailing()
        if params is not None:
            if not name.endswith("_LIST"):
                raise self.error(token, f"function-like macro {name} is not an X-macro list")
            self.xlists[name] = parse_xlist(body, params.strip())
            return [Decl("macro", f"{name}({params.strip()})", name, trailing)]
        return [Decl("macro", name, name, trailing, value=body)]

    def _expand(self, token: Token, code: str) -> list[tuple[str, list[str]]]:
        """Code with each ``LIST(HELPER)`` expanded: one piece per list entry,
        documented by the entry's string arguments, where the whole line is
        the expansion; else one piece with the expansions inline."""
        calls = list(re.finditer(r"\b(\w+_LIST)\((\w+_)\)", code))
        if not calls:
            return [(code, [])]
        per_call: list[list[tuple[str, list[str]]]] = []
        for m in calls:
            if m.group(1) not in self.xlists or m.group(2) not in self.helpers:
                raise self.error(token, f"unknown list expansion {m.group(0)}")
            params, template = self.helpers[m.group(2)]
            xlist = self.xlists[m.group(1)]
            expansions = []
            for args, docs in zip(xlist.entries, xlist.docs):
                if len(args) != len(params):
                    raise self.error(token, f"{m.group(1)} entry {args} does not fit {params}")
                expanded = template
                for param, arg in zip(params, args):
                    expanded = re.sub(rf"\b{param}\b", arg.replace("\\", "\\\\"), expanded)
                expansions.append((expanded, docs))
            per_call.append(expansions)
        if len(calls) == 1 and calls[0].group(0) == code:
            return per_call[0]
        for m, expansions in zip(reversed(calls), reversed(per_call)):
            code = code[:m.start()] + " ".join(e for e, _ in expansions) + code[m.end():]
        return [(code, [])]

    def _aggregate(self, token: Token, m: re.Match[str]) -> Decl:
        """An enum or struct: its members with their comments."""
        kind = m.group(2) or "enum"
        tag = m.group(3) or ""
        separator = "," if kind == "enum" else ";"
        members: list[Member] = []
        leading: list[str] = []

        def add(t: Token, code: str) -> None:
            nonlocal leading
            for piece, docs in self._expand(t, code):
                for part in [p.strip() for p in piece.split(separator)]:
                    if part:
                        members.append(Member(" ".join(part.split()), leading + docs))
                        leading = []

        rest = token.text[m.end():]
        if "}" in rest:  # the whole body on this line
            body, close = rest.split("}", 1)
            add(token, body)
            close = "}" + close
        else:
            if rest.strip():
                raise self.error(token, "members on the line of an enum's or struct's '{'")
            while True:
                if self.pos == len(self.tokens):
                    raise self.error(token, "unterminated enum or struct")
                t = self.tokens[self.pos]
                self.pos += 1
                if t.kind == "blank":
                    continue
                if t.kind == "comment":
                    if not t.trailing:
                        leading.append(t.text)
                    elif members:
                        members[-1].doc.append(t.text)
                    else:
                        raise self.error(t, "a trailing comment before any member")
                    continue
                if t.kind == "pp":
                    if self._directive(t):
                        raise self.error(t, "a macro defined inside an enum or struct")
                    continue
                if t.text.startswith("}"):
                    close = t.text
                    break
                add(t, t.text)
        notes = leading
        trailing = self._trailing()
        if tag:
            m2 = re.fullmatch(r"\}\s*(\w+)\s*;", close)
            if not m2:
                raise self.error(token, f"expected '}} name;' after typedef {kind} {tag}")
            name = m2.group(1)
        else:
            if close.replace(" ", "") != "};":
                raise self.error(token, "an anonymous enum must end with '};'")
            name = ""
            for member in members:
                member.decl = _evaluate(member.decl)
        decl = Decl(kind, name, name, trailing, members=members, tag=tag)
        if notes:
            decl.members.append(Member("", notes))
        return decl


def _evaluate(enumerator: str) -> str:
    """``NAME = 0 +1 +1`` as ``NAME = 2``: a count an X-macro builds."""
    m = re.fullmatch(r"(\w+)\s*=\s*([0-9+\s]+)", enumerator)
    if not m:
        return enumerator
    return f"{m.group(1)} = {sum(int(n) for n in m.group(2).split('+') if n.strip())}"


# -- rendering ------------------------------------------------------------------


_ROLE = {"function": "func", "macro": "macro", "type": "type", "struct": "struct",
         "enum": "enum", "enumerator": "enumerator"}


def _names(blocks: list[Block]) -> dict[str, str]:
    """Every name the blocks declare, and the C domain role that links it."""
    names: dict[str, str] = {}
    for block in blocks:
        for decl in block.decls:
            if decl.name:
                names[decl.name] = _ROLE[decl.kind]
            if decl.kind == "enum":
                for member in decl.members:
                    if member.decl:
                        names[member.decl.split("=")[0].strip()] = "enumerator"
    return names


class CHeader(SphinxDirective):
    """``.. c-header:: PATH``: the reference of the header at PATH."""

    required_arguments = 1
    option_spec = {"heading": directives.unchanged}
    _texts: dict[str, list[nodes.Node]] = {}
    _counter = itertools.count()

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir).parent
        path = (root / self.arguments[0]).resolve()
        if root.resolve() not in path.parents:
            raise self.error(f"c-header: {self.arguments[0]} lies outside the repository")
        self.env.note_dependency(str(path))
        try:
            blocks = Parser(tokenize(path.read_text(encoding="utf-8"))).parse()
        except (HeaderError, OSError) as e:
            raise self.error(f"c-header {self.arguments[0]}: {e}") from None
        # Names of a header documented earlier on the page link too.
        earlier: dict[str, str] = self.env.temp_data.get("c_header_names") or {}
        names = {**earlier, **_names(blocks)}
        self.env.temp_data["c_header_names"] = names
        self._check_complete(path, blocks)
        heading = self.options.get("heading", "~")
        rst: list[str] = []
        for block in blocks:
            if block.heading:
                rst += ["", block.heading, heading * len(block.heading), ""]
            if block.text and not block.decls:
                rst += self._text(block.text, names, literal=True, indent="")
            if block.decls:
                rst += self._decls(block, names)
        content = StringList(rst, source=str(path))
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, content, node)
        return list(node.children)

    def _check_complete(self, path: Path, blocks: list[Block]) -> None:
        """Every function, type and macro the header declares is documented."""
        documented = {d.name for b in blocks for d in b.decls}
        text = path.read_text(encoding="utf-8")
        declared = set(re.findall(r"^#\s*define\s+(\w+)", text, re.M))
        declared |= set(re.findall(r"^(?!typedef)[A-Za-z][\w\s*]*?\b(\w+)\s*\(", text, re.M))
        declared |= set(re.findall(r"^typedef\b[^;]*?\(\s*\*\s*(\w+)\s*\)", text, re.M))
        declared |= set(re.findall(r"^typedef\s+struct\s+\w+\s+(\w+)\s*;", text, re.M))
        declared |= set(re.findall(r"^\}\s*(\w+)\s*;", text, re.M))
        declared = {n for n in declared if not n.endswith(("_", "_H"))}
        missing = sorted(declared - documented)
        if missing:
            raise self.error(f"c-header {self.arguments[0]}: not documented: {missing}")

    def _text(self, text: str, names: dict[str, str], literal: bool, indent: str) -> list[str]:
        """A placeholder for a comment, built as nodes with the names linked."""
        key = f"c-header-{next(self._counter)}"
        children = list(_linked(text, names))
        node: nodes.Element
        if literal:
            # A raw source unlike the text, as a parsed-literal block has: Sphinx
            # highlights (and so unlinks) a block whose raw source is its text.
            node = nodes.literal_block(f"/* {text} */", "", *children,
                                       classes=["c-header-comment"])
        else:
            node = nodes.paragraph("", "", *children)
        CHeader._texts[key] = [node]
        return ["", f"{indent}.. c-header-text:: {key}", ""]

    def _decls(self, block: Block, names: dict[str, str]) -> list[str]:
        decls = block.decls
        if len(decls) > 1 and all(d.kind == "function" and not d.doc for d in decls):
            # Functions documented together: one entry, several signatures.
            rst = ["", f".. c:function:: {decls[0].signature}"]
            rst += [f"   {d.signature}" for d in decls[1:]]
            if block.text:
                rst += self._text(block.text, names, literal=True, indent="   ")
            return rst
        rst = []
        if block.text and len(decls) > 1:
            rst += self._text(block.text, names, literal=True, indent="")
        for decl in decls:
            text = block.text if len(decls) == 1 else ""
            rst += self._decl(decl, text, names)
        return rst

    def _decl(self, decl: Decl, text: str, names: dict[str, str]) -> list[str]:
        if decl.kind == "enum" and not decl.name:
            rst = ["", ".. c:enum:: @anonymous", ""]
        else:
            rst = ["", f".. c:{decl.kind}:: {decl.signature}", ""]
        if decl.tag and decl.kind == "type":
            rst += [f"   ``typedef struct {decl.tag} {decl.name};`` (opaque)", ""]
        elif decl.tag:
            rst += [f"   ``typedef {decl.kind} {decl.tag} {{ … }} {decl.name};``", ""]
        if decl.value:
            rst += ["   Value: ``" + decl.value.replace("`", "'") + "``", ""]
        if text:
            rst += self._text(text, names, literal=True, indent="   ")
        for doc in decl.doc:
            rst += self._text(" ".join(doc.split()), names, literal=False, indent="   ")
        for member in decl.members:
            if not member.decl:  # comments after the last member
                for doc in member.doc:
                    rst += self._text(doc, names, literal=True, indent="   ")
                continue
            role = "enumerator" if decl.kind == "enum" else "member"
            rst += ["", f"   .. c:{role}:: {member.decl}", ""]
            for doc in member.doc:
                if "\n" in doc and any(line.startswith(" ") for line in doc.split("\n")):
                    rst += self._text(doc, names, literal=True, indent="      ")
                else:
                    rst += self._text(" ".join(doc.split()), names, literal=False,
                                      indent="      ")
        return rst


def _linked(text: str, names: dict[str, str]) -> Iterator[nodes.Node]:
    """Text with each declared name turned into a cross-reference (names
    with an underscore only: the type DHT is also the word DHT)."""
    linked = sorted((n for n in names if "_" in n), key=len, reverse=True)
    if not linked:
        yield nodes.Text(text)
        return
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, linked)) + r")\b")
    last = 0
    for m in pattern.finditer(text):
        if m.start() > last:
            yield nodes.Text(text[last:m.start()])
        name = m.group(1)
        ref = addnodes.pending_xref("", refdomain="c", reftype=names[name], reftarget=name,
                                    refexplicit=False, refwarn=True)
        ref += nodes.literal(name, name, classes=["xref", "c"])
        yield ref
        last = m.end()
    if last < len(text):
        yield nodes.Text(text[last:])


class CHeaderText(SphinxDirective):
    """Internal: puts back the nodes ``c-header`` built for a comment."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        return CHeader._texts.pop(self.arguments[0])


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("c-header", CHeader)
    app.add_directive("c-header-text", CHeaderText)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
