#!/usr/bin/env python3
"""Checks every link of the documentation, offline.

    check-links.py [FILE...]    default: README.md and docs/*.md, docs/*.rst

A relative link (Markdown ``[text](target)``, ``![alt](target)``, a
reference definition, an HTML ``href`` or ``src``, a reStructuredText
```text <target>`_`` link, or the path of an include, image or
``c-header`` directive) must name a file or folder of the repository: one
git tracks or would track (not an ignored build output), inside the
repository. Its ``#anchor``, where it has one, must be a heading of that
file (the anchor GitHub and MyST give it) or an explicit target. Only
``https://`` links may leave the repository; they are not fetched, so the
check needs no network. Exits 1, naming each bad link with its file and
line, if any is broken.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Link:
    """A link found in a file: where it is and what it names."""

    file: Path
    line: int
    target: str
    from_root: bool = False  # a directive path, relative to the repository


def repository_files() -> set[str]:
    """The repository's files, relative to its root: what git tracks or
    would track, or, outside a git checkout, every file but build outputs."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], capture_output=True, check=True).stdout
        return {name for name in out.decode().split("\0") if name}
    except (OSError, subprocess.CalledProcessError):
        # The folders .gitignore names.
        skip = re.compile(r"(^|/)(build[^/]*|__pycache__|\.git|[^/]*\.egg-info|\.venv)/|^out/")
        return {str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                if p.is_file() and not skip.search(str(p.relative_to(ROOT)))}


# -- Markdown -----------------------------------------------------------------

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*(\{([\w-]+)\})?\s*(.*)$")
ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
HTML_ATTR = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""")
MYST_TARGET = re.compile(r"^\(([\w.:-]+)\)=\s*$")
AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>]+)>")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
PATH_DIRECTIVES = {"include", "literalinclude", "image", "figure"}


def markdown_lines(text: str) -> Iterator[tuple[int, str, Optional[str]]]:
    """(line number, line, directive) for the lines outside fenced code;
    a MyST directive's fence line comes with the directive's name."""
    fence: Optional[str] = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            if m.group(3):
                yield number, m.group(4), m.group(3)
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(
                    fence[0]):
                fence = None
            continue
        yield number, line, None


def inline_targets(line: str) -> Iterator[str]:
    """The targets of the inline links and images of a line of Markdown."""
    line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    i = 0
    while True:
        start = line.find("](", i)
        if start < 0:
            break
        j = start + 2
        depth = 0
        while j < len(line):
            if line[j] == "(":
                depth += 1
            elif line[j] == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        body = line[start + 2:j].strip()
        if body.startswith("<"):
            yield body[1:body.find(">")]
        elif body:
            yield body.split()[0]
        i = j
    for m in AUTOLINK.finditer(line):
        yield m.group(1)


def github_slug(heading: str) -> str:
    """The anchor GitHub (and MyST's heading anchors) give a heading."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").strip().lower()
    kept = []
    for c in text:
        category = unicodedata.category(c)
        if c in " -_" or category[0] in "LNM":
            kept.append(c)
    return "".join(kept).replace(" ", "-")


def markdown_anchors(text: str) -> set[str]:
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    previous = ""
    for _, line, directive in markdown_lines(text):
        if directive is not None:
            previous = ""
            continue
        title: Optional[str] = None
        m = ATX.match(line)
        if m:
            title = m.group(2)
        elif SETEXT.match(line) and previous.strip():
            title = previous.strip()
        if title is not None:
            slug = github_slug(title)
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
        anchors.update(HTML_ANCHOR.findall(line))
        m2 = MYST_TARGET.match(line)
        if m2:
            anchors.add(m2.group(1))
        previous = line
    return anchors


def markdown_links(path: Path, text: str) -> Iterator[Link]:
    for number, line, directive in markdown_lines(text):
        if directive is not None:
            if directive in PATH_DIRECTIVES and line.strip():
                yield Link(path, number, line.strip())
            continue
        for target in inline_targets(line):
            yield Link(path, number, target)
        m = REFERENCE.match(line)
        if m:
            yield Link(path, number, m.group(1))
        for target in HTML_ATTR.findall(line):
            yield Link(path, number, target)


# -- reStructuredText ------------------------------------------------------------

RST_LINK = re.compile(r"`[^`<]*<([^>`]+)>`__?")
RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+([\w:-]+)::\s*(\S+)")
RST_TARGET = re.compile(r"^\s*\.\.\s+_([^:]+):")


def rst_links(path: Path, text: str) -> Iterator[Link]:
    for number, line in enumerate(text.split("\n"), 1):
        for target in RST_LINK.findall(line):
            yield Link(path, number, target)
        m = RST_DIRECTIVE.match(line)
        if m and m.group(1) in PATH_DIRECTIVES:
            yield Link(path, number, m.group(2))
        elif m and m.group(1) == "c-header":
            yield Link(path, number, m.group(2), from_root=True)


def rst_anchors(text: str) -> set[str]:
    """Section ids (as docutils makes them from titles) and explicit targets."""
    lines = text.split("\n")
    anchors = set()
    for i in range(1, len(lines)):
        under = lines[i].strip()
        title = lines[i - 1].strip()
        if (title and len(under) >= len(title) and len(set(under)) == 1
                and not under[0].isalnum()):
            anchors.add(re.sub(r"[^a-z0-9]+", "-", title.replace("`", "").lower()).strip("-"))
    for line in lines:
        m = RST_TARGET.match(line)
        if m:
            anchors.add(re.sub(r"[^a-z0-9]+", "-", m.group(1).lower()).strip("-"))
    return anchors


# -- checking ------------------------------------------------------------------------


class Checker:
    def __init__(self) -> None:
        self.files = repository_files()
        self.folders = {str(Path(f).parent) for f in self.files}
        for folder in list(self.folders):
            parts = Path(folder).parts
            self.folders.update(str(Path(*parts[:i])) for i in range(1, len(parts)))
        self.anchors: dict[Path, set[str]] = {}
        self.external = 0

    def anchors_of(self, path: Path) -> Optional[set[str]]:
        if path not in self.anchors:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".md":
                self.anchors[path] = markdown_anchors(text)
            elif path.suffix == ".rst":
                self.anchors[path] = rst_anchors(text)
            else:
                return None
        return self.anchors[path]

    def problem(self, link: Link) -> Optional[str]:
        """Why the link is broken, or None."""
        target = link.target
        parts = urlsplit(target)
        if parts.scheme or target.startswith("//"):
            if parts.scheme == "https" and parts.netloc:
                self.external += 1
                return None
            return "leaves the repository: only https:// links may"
        path_part = unquote(parts.path)
        if path_part.startswith("/"):
            return "an absolute path: links must be relative to the file"
        base = ROOT if link.from_root else link.file.parent
        resolved = (base / path_part).resolve() if path_part else link.file
        try:
            relative = str(resolved.relative_to(ROOT))
        except ValueError:
            return "leaves the repository"
        if path_part and relative not in self.files and relative not in self.folders:
            return f"{relative} is not a file of the repository"
        if parts.fragment:
            if relative in self.folders:
                return "an anchor in a folder"
            anchors = self.anchors_of(resolved)
            if anchors is None:
                return f"an anchor in {relative}, which has none"
            if unquote(parts.fragment) not in anchors:
                return f"no anchor '#{parts.fragment}' in {relative}"
        return None

    def check(self, paths: list[Path]) -> int:
        links: list[Link] = []
        for path in paths:
            text = path.read_text(encoding="utf-8")
            found = rst_links(path, text) if path.suffix == ".rst" else markdown_links(path, text)
            links.extend(found)
        bad = 0
        for link in links:
            why = self.problem(link)
            if why:
                bad += 1
                print(f"{link.file.relative_to(ROOT)}:{link.line}: link '{link.target}': {why}")
        if bad:
            print(f"check-links: {bad} broken of {len(links)} links in {len(paths)} files")
            return 1
        print(f"check-links: {len(links)} links in {len(paths)} files resolve "
              f"({self.external} https, not fetched)")
        return 0


def main(argv: list[str]) -> int:
    if argv:
        paths = [Path(a).resolve() for a in argv]
    else:
        docs = sorted(p for p in (ROOT / "docs").rglob("*")
                      if p.suffix in (".md", ".rst") and "_build" not in p.parts)
        paths = [ROOT / "README.md", *docs]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"check-links: no such file: {', '.join(missing)}")
        return 2
    return Checker().check(paths)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
