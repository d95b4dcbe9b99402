"""Write the recorded framework feeds of tests/data/frameworks from real repository history.

GitHub publishes a repository's commits as https://github.com/OWNER/REPO/commits/BRANCH.atom and its releases as
/releases.atom. These files are written in that format from a git snapshot of the repository: every commit's real
subject, message, author, date and link (first-parent history of the default branch, newest first), and for the
releases every tag in the range with a note listing the subjects of the commits since the previous tag (the
"What's Changed" list GitHub generates; the notes as published are not in git). See tests/data/SOURCES.md.

    python tests/data/frameworks/build_feeds.py GIT_DIR OWNER/REPO BRANCH SINCE UNTIL OUT_PREFIX [--releases]
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from html import escape

SEP = "\x1e"
FIELDS = "%H%x1f%cI%x1f%an%x1f%B"


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def commits(git_dir: str, branch: str, since: str, until: str) -> list[tuple[str, str, str, str]]:
    out = git(
        git_dir, "log", "--first-parent", f"--since={since}", f"--until={until}", f"--format={FIELDS}{SEP}", branch
    )
    rows = []
    for chunk in out.split(SEP):
        chunk = chunk.strip("\n")
        if chunk:
            sha, when, author, message = chunk.split("\x1f", 3)
            rows.append((sha, when, author, message.strip()))
    return rows


def _utc(stamp: str) -> str:
    from datetime import UTC, datetime

    return datetime.fromisoformat(stamp).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def feed(repo: str, title: str, feed_id: str, self_href: str, entries: list[str], updated: str) -> bytes:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en-US">\n'
        f"  <id>{feed_id}</id>\n"
        f'  <link type="text/html" rel="alternate" href="https://github.com/{repo}"/>\n'
        f'  <link type="application/atom+xml" rel="self" href="{self_href}"/>\n'
        f"  <title>{escape(title)}</title>\n  <updated>{updated}</updated>\n"
    )
    return (head + "".join(entries) + "</feed>\n").encode()


def commit_entry(repo: str, sha: str, when: str, author: str, message: str) -> str:
    subject = message.splitlines()[0] if message else ""
    html = "<pre style='white-space:pre-wrap;width:81ex'>" + escape(message) + "</pre>"
    return (
        "  <entry>\n"
        f"    <id>tag:github.com,2008:Grit::Commit/{sha}</id>\n"
        f'    <link type="text/html" rel="alternate" href="https://github.com/{repo}/commit/{sha}"/>\n'
        f"    <title>\n        {escape(subject)}\n    </title>\n"
        f"    <updated>{_utc(when)}</updated>\n"
        f"    <author>\n      <name>{escape(author)}</name>\n"
        f"      <uri>https://github.com/{escape(author)}</uri>\n    </author>\n"
        f'    <content type="html">\n      {escape(html)}\n    </content>\n'
        "  </entry>\n"
    )


def release_entries(git_dir: str, repo: str, branch: str, since: str, until: str) -> list[str]:
    tags = git(
        git_dir,
        "for-each-ref",
        "--sort=creatordate",
        "--format=%(refname:short)\x1f%(creatordate:iso-strict)",
        "refs/tags",
    ).split("\n")
    rows = [t.split("\x1f") for t in tags if t]
    out = []
    for i, (tag, when) in enumerate(rows):
        if not since <= when[:10] <= until or i == 0:
            continue
        previous = rows[i - 1][0]
        subjects = git(git_dir, "log", "--first-parent", "--format=%s", f"{previous}..{tag}").splitlines()
        html = f"<h2>What's Changed</h2><ul>{''.join(f'<li>{escape(s)}</li>' for s in subjects)}</ul>"
        html += f"<p><strong>Full Changelog</strong>: https://github.com/{repo}/compare/{previous}...{tag}</p>"
        out.append(
            "  <entry>\n"
            f"    <id>tag:github.com,2008:Repository/{repo}/{tag}</id>\n"
            f"    <updated>{_utc(when)}</updated>\n"
            f'    <link rel="alternate" type="text/html" href="https://github.com/{repo}/releases/tag/{tag}"/>\n'
            f"    <title>{escape(tag)}</title>\n"
            f'    <content type="html">{escape(html)}</content>\n'
            "    <author>\n      <name>github-actions</name>\n    </author>\n"
            "  </entry>\n"
        )
    return out[::-1]


def write(path: str, body: bytes) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(body)


def main(argv: list[str]) -> None:
    git_dir, repo, branch, since, until, prefix = argv[:6]
    rows = commits(git_dir, branch, since, until)
    entries = [commit_entry(repo, *r) for r in rows]
    name = repo.split("/")[1]
    body = feed(
        repo,
        f"Recent Commits to {name}:{branch}",
        f"tag:github.com,2008:/{repo}/commits/{branch}",
        f"https://github.com/{repo}/commits/{branch}.atom",
        entries,
        _utc(rows[0][1]),
    )
    write(f"{prefix}_commits_{branch}.atom.gz", body)
    print(f"{repo} {branch}: {len(rows)} commits, {rows[-1][0][:9]}..{rows[0][0][:9]}, {rows[-1][1]}..{rows[0][1]}")
    if "--releases" in argv:
        rel = release_entries(git_dir, repo, branch, since, until)
        body = feed(
            repo,
            f"Release notes from {name}",
            f"tag:github.com,2008:https://github.com/{repo}/releases",
            f"https://github.com/{repo}/releases.atom",
            rel,
            _utc(rows[0][1]),
        )
        write(f"{prefix}_releases.atom.gz", body)
        print(f"{repo}: {len(rel)} releases")


if __name__ == "__main__":
    main(sys.argv[1:])
