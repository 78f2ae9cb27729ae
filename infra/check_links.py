#!/usr/bin/env python3
"""Checks that every relative link in the repository's Markdown files resolves.

  python3 infra/check_links.py [FILE.md ...]   # default: every *.md of the repository
  python3 infra/check_links.py --self-test

A link is `[text](target)`, `![alt](target)`, `[label]: target` or `<img src="target">`, outside
fenced code blocks and inline code. `http(s):`, `mailto:` and other URLs with a scheme are not
checked. A relative target's file (or folder) must exist, relative to the linking file (`/...`:
relative to the repository root). A `#anchor`, in the same file or in another `.md` file, must be
the GitHub slug of one of that file's headings: lowercase, punctuation dropped but `-` and `_`,
each space a `-`, letters of any script kept, the second and later headings with one slug
suffixed `-1`, `-2` ... Stdlib only; exit code 1 on a broken link. infra/lint.sh runs it.
"""

import os
import re
import sys
import tempfile
import unicodedata
from urllib.parse import unquote

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SKIPPED_DIRS = {"target", "node_modules"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# `[text](target "title")` and `![alt](target)`; the text may hold one level of brackets.
INLINE_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
IMG_SRC = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*([\"'])(.*?)\1", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def slug(heading):
    """GitHub's anchor for a heading's text (before duplicates are numbered)."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    out = []
    for ch in text.strip().lower():
        if ch == " ":
            out.append("-")
        elif ch in "-_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append(ch)
    return "".join(out)


def outside_code(lines):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                continue
            yield number, line
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            if not line.strip().lstrip(fence[0]):
                fence = None


def anchors(path, cache={}):
    """The heading anchors of a Markdown file, duplicates numbered as GitHub numbers them."""
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        seen, found = {}, set()
        for _, line in outside_code(lines):
            match = HEADING.match(line)
            if not match:
                continue
            base = slug(match.group(2) or "")
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def links(lines):
    """(line number, target) of every link outside code."""
    for number, line in outside_code(lines):
        line = CODE_SPAN.sub("", line)
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1)
        match = REFERENCE.match(line)
        if match:
            yield number, match.group(1)
        for match in IMG_SRC.finditer(line):
            yield number, match.group(2)


def check_file(path, root):
    """Problems of one Markdown file, as 'path:line: message' strings."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    shown = os.path.relpath(path, root)
    problems = []
    for number, target in links(lines):
        target = target.strip("<>")
        if not target or SCHEME.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?", 1)[0])
        if not file_part:
            linked = path
        elif file_part.startswith("/"):
            linked = os.path.join(root, file_part.lstrip("/"))
        else:
            linked = os.path.join(os.path.dirname(path), file_part)
        linked = os.path.normpath(linked)
        if not os.path.exists(linked):
            problems.append(f"{shown}:{number}: {target}: no file {os.path.relpath(linked, root)}")
            continue
        if anchor and linked.endswith(".md") and os.path.isfile(linked):
            if unquote(anchor) not in anchors(linked):
                problems.append(
                    f"{shown}:{number}: {target}: no heading with the anchor "
                    f"#{unquote(anchor)} in {os.path.relpath(linked, root)}"
                )
    return problems


def markdown_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def self_test():
    """The slug rules and a broken link of each kind, on files in a temporary folder."""
    assert slug("REST APIs as tools (OpenAPI)") == "rest-apis-as-tools-openapi"
    assert slug("The `cargo lambda watch` loop") == "the-cargo-lambda-watch-loop"
    assert slug("Lambda functions at b731714") == "lambda-functions-at-b731714"
    assert slug("연차 휴가 규정, 2026") == "연차-휴가-규정-2026"
    assert slug("A_b: c.d / e") == "a_b-cd--e"
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "guide.md"), "w", encoding="utf-8") as f:
            f.write("# Guide\n\n## Setup\n\n## Setup\n\n### The `x` loop\n\n```sh\n# not a heading\n```\n")
        good = (
            "[a](docs/guide.md) [b](docs/guide.md#setup-1) [c](#top) [d](https://example.com/x)\n"
            "# Top\n![e](docs/) <img src=\"docs/guide.md\"> `[f](nowhere.md)`\n"
            "```\n[g](nowhere.md)\n```\n[h]: docs/guide.md#guide\n[i](docs/guide.md#the-x-loop)\n"
        )
        bad = (
            "[a](docs/missing.md)\n[b](docs/guide.md#setup-2)\n[c](#nowhere)\n"
            '<img src="docs/missing.svg">\n[d](docs/guide.md#not-a-heading)\n'
        )
        for name, text in [("good.md", good), ("bad.md", bad)]:
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        assert check_file(os.path.join(root, "good.md"), root) == []
        problems = check_file(os.path.join(root, "bad.md"), root)
        assert [p.split(":")[1] for p in problems] == ["1", "2", "3", "4", "5"], problems
    print("infra/check_links.py: self-test passed")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    files = [os.path.abspath(a) for a in argv] or list(markdown_files(ROOT))
    problems = [p for path in files for p in check_file(path, ROOT)]
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"infra/check_links.py: {len(files)} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
