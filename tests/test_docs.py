"""The documentation names only what exists, and the configuration reference names all of it.

Read at test time from README.md and docs/*.md (so a new page, command or key is checked as soon as it is
written):
- every `radar ...` command line (in code blocks and inline code) names real commands, and each of its
  options exists on that command (or is a global option), as `radar ... --help` lists them;
- every option written alone in inline code (`--as-of`) is an option of some radar command, or one of the
  few other tools' options listed below;
- every radar.toml key the docs name (`[section] key` in inline code, the tables of docs/configuration.md,
  TOML examples) is a key radar.toml accepts, and every key it accepts is in docs/configuration.md.

The accepted keys come from the config loader itself: a table with a made-up key is refused with the list
of valid keys ("unknown key(s) ... valid keys: ..."), and an unknown section with the list of sections.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

from radar.app.cli import build_parser
from radar.app.settings import load_settings
from radar.store import Workspace
from radar.store.errors import RadarError
from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CONFIG_REFERENCE = ROOT / "docs" / "configuration.md"
# Options of other programs that the docs name in inline code: Streamlit's (`radar app` passes them on),
# accelerate's (the TRL export's launch line), pip's and pytest's.
OTHER_TOOLS_OPTIONS = {"--server.address", "--config_file", "--arm", "--seed", "--no-deps", "--durations"}
SCRIPTS = [*sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "data").glob("*.py"))]
BOGUS = "zz_not_a_key"


# -- the command line ----------------------------------------------------------------------------------------
@cache
def commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command path (`()` is `radar` itself, `("repro", "run")` is `radar repro run`) and its parser."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found[path] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*path, name))

    walk(build_parser(), ())
    return found


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {opt for action in parser._actions for opt in action.option_strings}


def subcommands_of(parser: argparse.ArgumentParser) -> set[str]:
    return {
        name for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices
    }


# -- reading the docs ----------------------------------------------------------------------------------------
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
# `radar` as a command: at the start of a line or after a separator, also as a path ending in /radar
RADAR = re.compile(r"(?:^|(?<=[\s(;&|$]))(?:\S*/)?radar\s+(?=[a-z-])")


def code_lines(text: str) -> list[str]:
    """Lines of fenced and indented code blocks, and the inline code spans of the prose."""
    lines: list[str] = []
    for match in FENCE.finditer(text):
        if match.group(1) in ("", "bash", "sh", "shell", "console", "text"):
            lines += match.group(2).splitlines()
    prose = FENCE.sub("", text)
    lines += [line for line in prose.splitlines() if line.startswith("    ")]
    lines += INLINE.findall(prose)
    return lines


def radar_commands(line: str) -> list[list[str]]:
    """The words after each `radar` in a line, up to a shell separator or a comment; quoted text removed."""
    found = []
    for match in RADAR.finditer(line):
        rest = QUOTED.sub("TEXT", line[match.end() :])
        rest = re.split(r"\s(?:#|&&|\|\||;)\s|[;`]|\s#\s", rest)[0]
        words = [w.strip("[](),.;:") for w in rest.split()]
        found.append([w for w in words if w])
    return found


def check_command(words: list[str]) -> list[str]:
    """Problems with one documented command line: an unknown command, or an option its command lacks."""
    table = commands()
    path: tuple[str, ...] = ()
    rest = list(words)
    globals_ = options_of(table[()])
    while rest and rest[0] in globals_:  # radar --workspace DIR COMMAND ...
        rest = rest[2:] if rest[0] in ("--workspace", "-w") else rest[1:]
    while rest and rest[0] in subcommands_of(table[path]):
        path = (*path, rest.pop(0))
    problems = []
    if rest and subcommands_of(table[path]) and re.fullmatch(r"[a-z][a-z-]*", rest[0]) and not path:
        problems.append(f"`radar {rest[0]}`: no such command")
    valid = options_of(table[path]) | globals_
    values_may_start_with_a_dash = bool(table[path].get_default("accepts_extra"))  # `radar tag fix ID -TAG`
    for word in rest:
        option = word.split("=", 1)[0]
        if values_may_start_with_a_dash and not option.startswith("--"):
            continue
        if re.fullmatch(r"--?[a-zA-Z][\w-]*", option) and option not in valid:
            problems.append(f"`radar {' '.join(path)} {option}`: no such option")
    return problems


def test_the_parser_walk_finds_the_commands() -> None:
    """The walk below sees nested commands and their options (else the checks would pass vacuously)."""
    table = commands()
    assert ("repro", "run") in table and ("tag", "eval") in table and ("search",) in table
    assert "--method" in options_of(table[("repro", "run")]) and "--workspace" in options_of(table[()])
    assert check_command(["search", "TEXT", "--since", "2025-06-01", "-k", "5"]) == []
    assert check_command(["frobnicate"]) == ["`radar frobnicate`: no such command"]
    assert check_command(["search", "TEXT", "--no-such-flag"]) == ["`radar search --no-such-flag`: no such option"]
    assert radar_commands("    RADAR_HOME=/srv/radar /opt/radar/.venv/bin/radar weekly >> log 2>&1")[0][0] == "weekly"


@cache
def script_options() -> dict[str, set[str]]:
    """benchmarks/NAME.py and data/NAME.py -> the options its argparse parser declares (read from the source:
    the scripts are not imported)."""
    declared = re.compile(r"add_argument\(\s*\"(--[\w-]+)\"")
    return {str(path.relative_to(ROOT)): set(declared.findall(path.read_text(encoding="utf-8"))) for path in SCRIPTS}


def check_script(line: str) -> list[str]:
    """`python benchmarks/bench_x.py --opt ...`: each option is one the script declares."""
    problems = []
    for match in re.finditer(r"((?:benchmarks|data)/\w+\.py)((?:\s+[^\s;&|#`]+)*)", line):
        declared = script_options().get(match.group(1))
        if declared is None:
            problems.append(f"{match.group(1)}: no such script")
            continue
        for option in re.findall(r"(?<!\S)(--[a-zA-Z][\w-]*)", match.group(2)):
            if option not in declared:
                problems.append(f"`{match.group(1)} {option}`: no such option")
    return problems


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_documented_command_and_option_exists(doc: Path) -> None:
    problems = []
    known = set().union(*(options_of(p) for p in commands().values()), *script_options().values())
    for line in code_lines(doc.read_text(encoding="utf-8")):
        for words in radar_commands(line):
            problems += check_command(words)
        problems += check_script(line)
        alone = re.fullmatch(r"(--[a-zA-Z][\w.-]*)(?:[ =]\S.*)?", line.strip())
        if alone and alone.group(1) not in known | OTHER_TOOLS_OPTIONS:
            problems.append(f"`{alone.group(1)}`: not an option of radar or of a script in benchmarks/ or data/")
    assert not problems, f"{doc.name}: " + "; ".join(sorted(set(problems)))


# -- radar.toml ----------------------------------------------------------------------------------------------
@cache
def real_keys() -> dict[str, set[str]]:
    """Section ("crawl", "sources", "delivery.email", "repro.presets", ...) -> the keys radar.toml accepts there,
    as the config loader lists them."""
    import tempfile

    ws, _ = Workspace.init(Path(tempfile.mkdtemp(prefix="radar-docs-")) / "ws")

    def refusal(text: str) -> str:
        ws.config_path.write_text(text, encoding="utf-8")
        try:
            load_settings(Workspace.open(ws.root))
        except RadarError as exc:
            return str(exc)
        return ""

    def valid_keys(header: str, body: str = "") -> set[str] | None:
        message = refusal(f"{header}\n{body}{BOGUS} = 1\n")
        match = re.search(rf"unknown key\(s\) {BOGUS} in .*?valid keys: (.*)$", message)
        return {k.strip() for k in match.group(1).split(",")} if match else None

    sections = re.findall(r"\[\[?([a-z][\w.]*)\]\]?", refusal(f"[{BOGUS}]\n").split("valid:", 1)[-1])
    assert "crawl" in sections and "sources" in sections, "the loader no longer lists its sections"
    keys: dict[str, set[str]] = {}
    for section in sections:
        if section == "sources":
            found = valid_keys("[[sources]]", "name = 'x'\ntype = 'feed'\nurl = 'https://example.org/feed'\n")
        else:
            found = valid_keys(f"[{section}]")
        assert found, f"[{section}]: the loader did not list its keys"
        keys[section] = found
    for section in list(keys):  # nested tables: [delivery.email], [[repro.presets]]
        for key in sorted(keys[section]):
            nested = valid_keys(f"[{section}.{key}]") or valid_keys(f"[[{section}.{key}]]")
            if nested:
                keys[f"{section}.{key}"] = nested
    return keys


SECTION_KEY = re.compile(r"^\[\[?([a-z][\w.]*)\]\]?\s+([a-z_][a-z0-9_]*)\b")


def documented_keys(doc: Path) -> set[tuple[str, str]]:
    """(section, key) pairs a doc names: `[section] key` in inline code, TOML examples of radar.toml, and the
    key tables of the configuration reference (a heading names the section, the first column the key)."""
    text = doc.read_text(encoding="utf-8")
    pairs = {m.groups() for span in INLINE.findall(FENCE.sub("", text)) if (m := SECTION_KEY.match(span))}
    for match in FENCE.finditer(text):
        if match.group(1) == "toml":
            pairs |= toml_keys(tomllib.loads(match.group(2)))
    section = None
    for line in text.splitlines():
        if line.startswith("#"):
            named = re.search(r"`\[\[?([a-z][\w.]*)\]\]?`", line)
            section = named.group(1) if named else None
        elif section and (row := re.match(r"\|\s*`([a-z_][a-z0-9_]*)`", line)):
            pairs.add((section, row.group(1)))
    return pairs


def toml_keys(doc: dict, prefix: str = "") -> set[tuple[str, str]]:
    """(section, key) of a TOML example, for the tables that are radar.toml sections (other files' examples,
    e.g. a taxonomy, are left out)."""
    pairs: set[tuple[str, str]] = set()
    for name, value in doc.items():
        section = f"{prefix}.{name}" if prefix else name
        tables = value if isinstance(value, list) else [value]
        for table in tables:
            if not isinstance(table, dict) or section.split(".")[0] not in real_keys():
                continue
            for key, inner in table.items():
                if f"{section}.{key}" in real_keys():
                    pairs |= toml_keys({key: inner}, section)
                else:
                    pairs.add((section, key))
    return pairs


def test_the_loader_lists_its_keys(tmp_path: Path) -> None:
    """The oracle and the reader work (else the checks below would pass vacuously)."""
    keys = real_keys()
    assert {"timeout_s", "user_agent"} <= keys["crawl"] and "url" in keys["sources"]
    assert "from" in keys["delivery.email"] and "model" in keys["embedding"] and "presets" in keys["repro"]
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Set `[crawl] timeout_s` or `[crawl] nope`.\n\n## `[search]`\n\n| key |\n| --- |\n| `rrf_k` |\n\n"
        '```toml\n[delivery.email]\nhost = "x"\n[taxonomy]\nname = "other file"\n```\n',
        encoding="utf-8",
    )
    found = documented_keys(doc)
    assert found == {("crawl", "timeout_s"), ("crawl", "nope"), ("search", "rrf_k"), ("delivery.email", "host")}
    assert len(documented_keys(CONFIG_REFERENCE)) >= sum(len(k) for k in keys.values())


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_documented_key_is_a_real_key(doc: Path) -> None:
    keys = real_keys()
    wrong = sorted(f"[{s}] {k}" for s, k in documented_keys(doc) if k not in keys.get(s, set()))
    assert not wrong, f"{doc.name} names radar.toml keys that do not exist: {', '.join(wrong)}"


def test_every_real_key_is_in_the_configuration_reference() -> None:
    documented = documented_keys(CONFIG_REFERENCE)
    missing = sorted(f"[{s}] {k}" for s, keys in real_keys().items() for k in keys if (s, k) not in documented)
    assert not missing, f"docs/configuration.md lacks: {', '.join(missing)}"


# -- links between the docs ----------------------------------------------------------------------------------
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
CODE_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
PAGES = [*DOCS, ROOT / "repro" / "README.md"]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, inline code marks and punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = CODE_FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def local_links(page: Path) -> list[str]:
    text = CODE_FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)  # indented code blocks
    text = INLINE.sub("", text)  # `[x](y)` in inline code is no link
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_slug_follows_github() -> None:
    assert slug("The test suite") == "the-test-suite"
    assert slug("Ingest (`python benchmarks/bench_ingest.py`)") == "ingest-python-benchmarksbench_ingestpy"


def broken_links(page: Path) -> list[str]:
    """The relative links of a page that name no file, or whose #anchor names no heading of the page linked."""
    broken = []
    for target in local_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    return broken


def test_the_link_check_finds_broken_links(tmp_path: Path) -> None:
    """A missing page and a missing heading are caught, on this page and on another; working links, links in
    code and external links are left alone (else the check below could pass vacuously)."""
    (tmp_path / "other.md").write_text("# Other\n\n## The test suite\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Figures\n\n"
        "[ok](other.md#the-test-suite) [ok](#figures) [ok](other.md) [web](https://example.org/x#y)\n"
        "[gone](missing.md) [renamed](other.md#the-demo) [here](#no-such-heading)\n"
        "`[code](missing.md)`\n\n```\n[fenced](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "other.md#the-demo (no heading #the-demo in other.md)",
        "#no-such-heading (no heading #no-such-heading in page.md)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_between_the_docs_resolves(page: Path) -> None:
    """A relative link names a file of the repository, and its #anchor a heading of that page."""
    broken = broken_links(page)
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


# -- measured figures live in docs/benchmarks.md ---------------------------------------------------------------
# A measured figure is recognised by two marks a design statement does not carry: a line that dates a run and
# says how loaded or how long it was (a date beside UTC, load, CPU-s, ms or wall), or a table whose header names
# a measured quantity.
FIGURE_PAGES = [doc for doc in DOCS if doc.name != "benchmarks.md"]
RUN_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
RUN_CONDITION = re.compile(r"\bUTC\b|\bload\b|\bCPU-s\b|\bms\b|\bwall\b")
MEASURED_COLUMN = re.compile(r"precision|recall|\bF1\b|P@\d|\bMRR\b|\bmAP\b|\bARI\b|CPU s|wall s|seconds|\bms\b|/s\b")
ISSUE_NUMBER = re.compile(r"\bissues?[\s-]*#?\d+", re.I)


def dated_run_lines(text: str) -> list[str]:
    """Lines holding both a date and a run condition: '2026-12-02 06:08 UTC, load 8-13'."""
    return [line for line in text.splitlines() if RUN_DATE.search(line) and RUN_CONDITION.search(line)]


def measured_tables(text: str) -> list[str]:
    """Header rows (the row above a |---| separator) that name a measured quantity."""
    lines = text.splitlines()
    return [
        head
        for head, rule in zip(lines, lines[1:], strict=False)
        if head.lstrip().startswith("|") and re.fullmatch(r"\s*\|[\s:|-]+\|?\s*", rule) and MEASURED_COLUMN.search(head)
    ]


def test_the_figure_rules_catch_a_planted_figure() -> None:
    """The rules below flag a dated run and a table of measured columns, and leave design statements alone."""
    planted = (
        "A paper introduces its best candidate when that probability is at least 0.5.\n"
        "2510.05109 was submitted on 2025-09-25; a reader on Monday 2025-09-29 could not have seen it.\n"
        "| key | default | meaning |\n| --- | --- | --- |\n| `timeout_s` | `30.0` | seconds to wait |\n"
        "Search (`bench_search.py`, 2026-12-02 06:08 UTC, load 8-13): P@5 0.89.\n"
        "| tag | precision | recall |\n| --- | ---: | ---: |\n| rl | 0.70 | 0.66 |\n"
        "See issue 27 and issue-15's cases.\n"
    )
    assert dated_run_lines(planted) == ["Search (`bench_search.py`, 2026-12-02 06:08 UTC, load 8-13): P@5 0.89."]
    assert measured_tables(planted) == ["| tag | precision | recall |"]
    assert ISSUE_NUMBER.findall(planted) == ["issue 27", "issue-15"]
    # the table of the configuration reference ("seconds to wait" is in a row, not the header) passes
    assert measured_tables((ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")) == []
    # and benchmarks.md, where the figures belong, is caught by both rules (else they could pass vacuously)
    bench = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert dated_run_lines(bench) and measured_tables(bench)


@pytest.mark.parametrize("doc", FIGURE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_measured_figures_are_only_in_benchmarks(doc: Path) -> None:
    """A stage page says what the stage does and links to its section of docs/benchmarks.md for the figures."""
    text = doc.read_text(encoding="utf-8")
    found = [f"dated run: {line.strip()}" for line in dated_run_lines(text)]
    found += [f"table of measurements: {head.strip()}" for head in measured_tables(text)]
    assert not found, f"{doc.name}: move to docs/benchmarks.md: " + "; ".join(found)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_docs_name_no_issue_numbers(doc: Path) -> None:
    found = ISSUE_NUMBER.findall(doc.read_text(encoding="utf-8"))
    assert not found, f"{doc.name} names tracker issues: {found}"


_CONFLICT = re.compile(r"^(?:<{7}|>{7}) |^={7}$", re.MULTILINE)
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".j2", ".jsonl", ".txt", ".cfg", ".yaml", ".yml"}


def conflict_markers(text: str) -> int:
    """Lines git leaves where a merge conflicted ("<<<<<<< HEAD", "=======", ">>>>>>> branch")."""
    return len(_CONFLICT.findall(text))


def test_no_merge_conflict_markers_are_committed() -> None:
    """A conflicted merge once left its markers in docs/ARCHITECTURE.md; no check read it."""
    skip = {".venv", ".git", "node_modules"}
    found = [
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*")
        if path.suffix in _TEXT_SUFFIXES
        and path.is_file()
        and not skip & set(path.relative_to(ROOT).parts)
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
        and conflict_markers(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, f"merge conflict markers in {found}"


def test_the_conflict_check_finds_markers() -> None:
    planted = "text\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n"
    assert conflict_markers(planted) == 3 and conflict_markers("a ======= b\n====\n") == 0
