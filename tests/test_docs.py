"""README.md and docs/*.md stay true to the repository they describe.

- every relative link and picture points at a file of the repository, and a `#anchor` at a
  heading of its target (named as GitHub names headings);
- every `tessera ...` command they show (in code blocks, tables and prose) names subcommands
  the CLI has, options its parser knows and, where an option has choices, values among them;
  the parser is built once, in-process, as `tessera --help` builds it;
- every `make` target, benchmark script and benchmark option they name exists;
- every path (`core/...`), module attribute (`core.jobs.outcomes.take_back_orphans`) and test
  or module file name (`test_fisher.py`) they cite exists;
- README's command table lists every subcommand;
- the docs stand alone: no page points outside the repository (an absolute path, a link that
  leaves it), and every page of docs/ is linked from README.md or another page;
- README.md stays a user's page of at most 15 KB (narrative and tables go to docs/).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.cli import build_parser
from tests.support import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`]+)`")
TOP_DIRS = ("app", "core", "views", "tests", "resources", "packaging", "docs")
README_LIMIT = 15_000  # bytes: 15 KB
#: an absolute path outside the user's home (`/work/...`, `/etc/...`): a place only one machine has
ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:])/[A-Za-z][\w.-]*/[\w./-]*")
PLAIN_VALUES = re.compile(r"[a-z0-9_.-]+(\|[a-z0-9_.-]+)*")  # `mcts` or `torch|tvmscript`; FILE is a placeholder


@dataclass(frozen=True)
class Snippet:
    """A piece of a page: a line of prose or of a code block, or one inline code span."""

    page: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def prose_and_code(page: Path) -> tuple[list[Snippet], list[Snippet]]:
    """The page's lines outside fenced code blocks, and those inside (continuations joined)."""
    prose, code, fenced, pending = [], [], False, ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            prose.append(Snippet(page, number, line))
        elif line.endswith("\\"):
            pending += line[:-1] + " "
        else:
            code.append(Snippet(page, number, pending + line))
            pending = ""
    return prose, code


def spans(page: Path) -> Iterator[Snippet]:
    """Inline code spans outside code blocks; a table's `\\|` is the `|` the reader sees."""
    for line in prose_and_code(page)[0]:
        for match in CODE_SPAN.finditer(line.text):
            yield Snippet(page, line.line, match.group(1).replace("\\|", "|"))


def commands(page: Path, program: str) -> Iterator[Snippet]:
    """Commands of `program` (`tessera`, `make`, `python`): whole code spans, and code-block
    lines (`a && b` split, `# comments` dropped)."""
    for span in spans(page):
        if span.text.split(" ", 1)[0] == program:
            yield span
    for line in prose_and_code(page)[1]:
        for part in line.text.split("#", 1)[0].split("&&"):
            if part.split() and part.split()[0] == program:
                yield Snippet(page, line.line, part.strip())


# -- links --------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as shown, lower case, punctuation dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """A repeated heading's anchors are x, x-1, x-2..."""
    found, count = set(), dict[str, int]()
    for line in prose_and_code(page)[0]:
        if match := re.match(r"#{1,6}\s+(.*)", line.text):
            base = slug(match.group(1))
            found.add(f"{base}-{count[base]}" if base in count else base)
            count[base] = count.get(base, 0) + 1
    return frozenset(found)


def link_problems(page: Path) -> Iterator[str]:
    for line in prose_and_code(page)[0]:
        for match in LINK.finditer(CODE_SPAN.sub("", line.text)):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.is_relative_to(ROOT) or not file.exists():
                yield f"{line.where()}: {target}: no such file in the repository"
            elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                yield f"{line.where()}: {target}: no heading #{anchor} in {file.relative_to(ROOT)}"


# -- commands ------------------------------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@cache
def cli() -> argparse.ArgumentParser:
    return build_parser()


def option_problems(parser: argparse.ArgumentParser, words: list[str], command: str) -> Iterator[str]:
    """Each `--option` in `words` is one the parser knows, and a plain value after an option
    with choices is among them."""
    known = parser._option_string_actions
    for i, word in enumerate(words):
        if not re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", word):
            continue
        name, _, inline = word.partition("=")
        if name not in known:
            yield f"{command}: {parser.prog} has no option {name}"
            continue
        action = known[name]
        value = inline or (words[i + 1] if i + 1 < len(words) and action.nargs != 0 else "")
        if action.choices and PLAIN_VALUES.fullmatch(value):
            for choice in value.split("|"):
                if choice not in action.choices:
                    yield f"{command}: {name} {choice}: not one of {', '.join(map(str, action.choices))}"


def tessera_problems(command: str) -> Iterator[str]:
    """Walk the subcommand words (`device add`, `sequence show|apply|check`), then the options."""
    words = re.sub(r"[\[\]]", " ", command).split()[1:]
    parsers = [cli()]
    while words and not words[0].startswith("-") and not words[0].isupper() and subcommands(parsers[0]):
        names = words.pop(0).split("|")
        if unknown := [n for n in names if n not in subcommands(parsers[0])]:
            yield f"{command}: {parsers[0].prog} has no subcommand {', '.join(unknown)}"
            return
        if names == ["bench"] and words:  # `tessera bench NAME OPTIONS`: the options are the script's
            yield from benchmark_problems(f"bench_{words[0]}", words[1:], command)
            return
        parsers = [subcommands(p)[n] for p in parsers for n in names]
    for parser in parsers:
        yield from option_problems(parser, words, command)


@cache
def benchmark_source(name: str) -> str | None:
    path = ROOT / "tests" / "benchmarks" / f"{name}.py"
    return path.read_text(encoding="utf-8") if path.exists() else None


def benchmark_problems(name: str, words: list[str], command: str) -> Iterator[str]:
    source = benchmark_source(name)
    if source is None:
        yield f"{command}: no benchmark tests/benchmarks/{name}.py"
        return
    for word in words:
        option = word.partition("=")[0]
        if option.startswith("--") and not re.search(rf'add_argument\(\s*"{re.escape(option)}"', source):
            yield f"{command}: {name} has no option {option}"


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))


def command_problems(page: Path) -> Iterator[str]:
    for snippet in commands(page, "tessera"):
        for problem in tessera_problems(snippet.text):
            yield f"{snippet.where()}: {problem}"
    targets = makefile_targets()
    for snippet in commands(page, "make"):
        for word in snippet.text.split()[1:]:
            if "=" not in word and word not in targets:
                yield f"{snippet.where()}: {snippet.text}: the Makefile has no target {word}"
    # benchmarks as `python -m tests.benchmarks.bench_x ...`, or `bench_x ...` in benchmarks.md's tables
    for snippet in [*commands(page, "python"), *(s for s in spans(page) if not s.text.startswith("python"))]:
        if match := re.match(r"(?:python -m tests\.benchmarks\.)?(bench_\w+)(?: (.*))?$", snippet.text):
            for problem in benchmark_problems(match.group(1), (match.group(2) or "").split(), snippet.text):
                yield f"{snippet.where()}: {problem}"


# -- paths and names -----------------------------------------------------------------------


@cache
def file_names() -> frozenset[str]:
    roots = [ROOT / d for d in TOP_DIRS]
    return frozenset(p.name for root in roots if root.exists() for p in root.rglob("*.py"))


def dotted_exists(name: str) -> bool:
    """`core.jobs.outcomes.take_back_orphans`: a module file, then names defined in it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.exists():
            rest = parts[cut:]
            source = module.read_text(encoding="utf-8")
            return len(rest) <= 1 and (
                not rest or re.search(rf"^\s*(def|class)\s+{rest[0]}\b|^{rest[0]}\b.*=", source, re.M) is not None
            )
    return False


def path_problems(page: Path) -> Iterator[str]:
    for span in spans(page):
        text = span.text
        if re.fullmatch(rf"({'|'.join(TOP_DIRS)})/[\w./-]*", text):
            if not (ROOT / text).exists():
                yield f"{span.where()}: {text}: no such path"
        elif re.fullmatch(r"[\w-]+\.py", text):
            if text not in file_names():
                yield f"{span.where()}: {text}: no such file"
        elif re.fullmatch(r"(app|core|views)(\.\w+)+", text) and not dotted_exists(text):
            yield f"{span.where()}: {text}: no such module or name"


# -- tests ---------------------------------------------------------------------------------


def problems(check) -> str:
    return "\n".join(["", *(problem for page in PAGES for problem in check(page))])


def test_docs_pages_exist():
    assert len(PAGES) > 5, "README.md and docs/*.md"


def test_links_and_pictures_resolve():
    assert (found := problems(link_problems)) == "", found


def test_commands_match_the_cli_makefile_and_benchmarks():
    assert (found := problems(command_problems)) == "", found


def test_cited_paths_and_names_exist():
    assert (found := problems(path_problems)) == "", found


def test_readme_command_table_lists_every_subcommand():
    table = {
        word
        for snippet in spans(ROOT / "README.md")
        if snippet.text.startswith("tessera ")
        for word in re.sub(r"[\[\]]", " ", snippet.text).split()[1:2]
    }
    assert set(subcommands(cli())) <= table, f"missing from README's table: {set(subcommands(cli())) - table}"


def outside_problems(page: Path) -> Iterator[str]:
    """Absolute paths, in prose or code spans: what a page needs is in the repository (links
    that leave it are link_problems')."""
    for line in prose_and_code(page)[0]:
        for match in ABSOLUTE_PATH.finditer(LINK.sub("", line.text)):
            yield f"{line.where()}: {match.group(0)}: a path outside the repository"


def test_no_page_points_outside_the_repository():
    assert (found := problems(outside_problems)) == "", found


def test_every_docs_page_is_linked_from_the_readme_or_another_page():
    linked = set()
    for page in PAGES:
        for line in prose_and_code(page)[0]:
            for match in LINK.finditer(CODE_SPAN.sub("", line.text)):
                path = match.group(1).partition("#")[0]
                if path and not re.match(r"[a-z]+:", path) and (page.parent / path).resolve() != page.resolve():
                    linked.add((page.parent / path).resolve())
    orphans = [p.relative_to(ROOT).as_posix() for p in PAGES[1:] if p.resolve() not in linked]
    assert not orphans, f"pages no other page links to: {orphans}"


def test_readme_is_a_page_not_a_manual():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, (
        f"README.md is {size / 1000:.1f} KB, at most {README_LIMIT / 1000:g}: move text to docs/"
    )
