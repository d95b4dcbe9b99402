"""Short summaries of papers and posts.

Extractive by default (offline, deterministic): the abstract's sentences are scored by how many of
the abstract's own frequent content words they carry, with a bonus for title words and for the
first sentence, and the best ones are kept in their original order. An OpenAI-compatible endpoint
(a local vLLM or SGLang server) can write abstractive summaries instead; it is off unless
[report] summary_endpoint is set, and its replies are untrusted input:

- each call ends by ``summary_timeout_s`` (a total deadline: a reply that drips a byte a second is cut
  there) and reads at most ``summary_max_bytes`` (refused as it streams in, never read whole);
- one command (a report, `radar methods --week`) calls it at most ``summary_max_calls`` times and not past
  ``summary_budget_s`` seconds after its first call;
- ``content`` must be a string, and is cleaned like feed text (control, bidi and zero-width characters out,
  one line, clipped) before anything stores or renders it.

Any failure, and a spent budget, falls back to the extractive summary (after the first failure the endpoint
is not called again by this summarizer).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Protocol

import requests
import urllib3

from radar.crawler.deadline import BoundExceeded, DeadlineSession, call
from radar.crawler.text import clean_text
from radar.reports.config import ReportConfig
from radar.store.scrub import scrub_line, url_secrets
from radar.store.urls import UrlRefused

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]+")
_STOP_TEXT = """a an and are as at be been but by can do does for from has have how in into is it its
    more most not of on or our over such than that the their then there these they this those to under
    up via was we were what when which while who will with within without yet also both each other
    only same so some very may might must should could would new paper propose proposed show shows
    approach method methods results using based model models task tasks work study"""
STOP = frozenset(_STOP_TEXT.split())


class Summarizer(Protocol):
    name: str

    def summarize(self, title: str, text: str) -> str: ...


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self, max_sentences: int = 2, max_chars: int = 420) -> None:
        self.max_sentences = max_sentences
        self.max_chars = max_chars

    def summarize(self, title: str, text: str) -> str:
        sents = sentences(text)
        if len(sents) <= self.max_sentences:
            return _clip(" ".join(sents), self.max_chars)
        words = [[w.lower() for w in _WORD.findall(s) if w.lower() not in STOP] for s in sents]
        freq = Counter(w for ws in words for w in set(ws))
        title_words = {w.lower() for w in _WORD.findall(title)} - STOP
        scores = []
        for i, ws in enumerate(words):
            if not ws:
                scores.append(0.0)
                continue
            score = sum(freq[w] for w in ws) / (len(ws) ** 0.5)
            score += 1.5 * len(title_words.intersection(ws))
            score *= 1.25 if i == 0 else 1.0
            scores.append(score)
        best = sorted(sorted(range(len(sents)), key=lambda i: -scores[i])[: self.max_sentences])
        return _clip(" ".join(sents[i] for i in best), self.max_chars)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + " …"


class EndpointSummarizer:
    """Chat completions on an OpenAI-compatible server, within its bounds; extractive fallback on any failure."""

    name = "endpoint"

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        timeout_s: float,
        max_bytes: int = 1_000_000,
        max_calls: int = 200,
        budget_s: float = 120.0,
        api_key: str = "",
        fallback: ExtractiveSummarizer | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_calls = max_calls
        self.budget_s = budget_s
        self.clock = clock
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.secrets = [*url_secrets(endpoint), api_key]  # never in last_error (it goes into the report)
        self.fallback = fallback or ExtractiveSummarizer()
        self.failures = 0
        self.calls = 0
        self.last_error = ""
        self.broken = False
        self.spent = False  # the command's call budget or deadline is used up (not a failure of the endpoint)
        self.started: float | None = None
        self.session = DeadlineSession()  # one connection for the command's calls

    def note(self) -> str:
        """What the report says about its summaries: '' when the endpoint wrote every one it was asked for."""
        if self.failures:
            return f"extractive (the summary endpoint failed: {self.last_error})"
        if self.spent:
            return f"endpoint, then extractive ({self.last_error})"
        return ""

    def _budget_left(self) -> float:
        """Seconds this call may take: the per-call deadline, or less when the command's budget ends sooner;
        0 when the budget is spent (then ``spent`` says why)."""
        now = self.clock()
        if self.started is None:
            self.started = now
        left = self.started + self.budget_s - now
        if self.calls >= self.max_calls or left <= 0:
            self._spend()
            return 0.0
        return min(self.timeout_s, left)

    def _spend(self) -> None:
        self.spent = self.broken = True
        self.last_error = (
            f"the endpoint's budget for one command is spent ({self.calls} calls, at most summary_max_calls = "
            f"{self.max_calls} within summary_budget_s = {self.budget_s:g} s); the rest are extractive"
        )

    def summarize(self, title: str, text: str) -> str:
        if self.broken or not text.strip():
            return self.fallback.summarize(title, text)
        deadline = self._budget_left()
        if not deadline:
            return self.fallback.summarize(title, text)
        self.calls += 1
        prompt = (
            "Summarize this research abstract in at most two plain sentences for an engineer deciding "
            f"whether to read it.\n\nTitle: {title}\n\nAbstract: {text[:4000]}"
        )
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": 160,
            "temperature": 0.2,
        }
        try:
            status, raw = call(
                self.session,
                "POST",
                self.url,
                data=json.dumps(body),
                headers=self.headers | {"Content-Type": "application/json"},
                deadline_s=deadline,
                max_bytes=self.max_bytes,
            )
            if status >= 400:
                raise ValueError(f"HTTP {status}")
            return reply_text(raw)
        except (
            requests.RequestException,
            urllib3.exceptions.HTTPError,
            OSError,
            BoundExceeded,
            UrlRefused,
            ValueError,
        ) as exc:
            if isinstance(exc, BoundExceeded) and deadline < self.timeout_s and self._budget_left() == 0:
                return self.fallback.summarize(title, text)  # the command's budget ended this call, not the endpoint
            self.failures += 1
            self.last_error = scrub_line(f"{type(exc).__name__}: {exc}", self.secrets, 200)
            self.broken = True  # one timeout per report, not one per paper
            return self.fallback.summarize(title, text)


def reply_text(raw: bytes, limit: int = 600) -> str:
    """The summary in a chat-completions reply: ``choices[0].message.content``, a non-empty string, cleaned like
    feed text (control, bidi and zero-width characters out, whitespace collapsed to one line) and clipped.
    ValueError (naming what was wrong) for anything else."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"the reply is not JSON ({type(exc).__name__})") from None
    try:
        content = doc["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("the reply has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is a JSON {type(content).__name__}, not a string")
    summary = clean_text(content, limit)
    if not summary:
        raise ValueError("empty summary")
    return summary


def make_summarizer(cfg: ReportConfig) -> Summarizer:
    extractive = ExtractiveSummarizer(cfg.summary_sentences)
    if not cfg.summary_endpoint:
        return extractive
    key = os.environ.get(cfg.summary_api_key_env, "") if cfg.summary_api_key_env else ""
    return EndpointSummarizer(
        cfg.summary_endpoint,
        cfg.summary_model,
        timeout_s=cfg.summary_timeout_s,
        max_bytes=cfg.summary_max_bytes,
        max_calls=cfg.summary_max_calls,
        budget_s=cfg.summary_budget_s,
        api_key=key,
        fallback=extractive,
    )
