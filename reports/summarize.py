"""Short summaries of papers and posts.

Extractive by default (offline, deterministic): the abstract's sentences are scored by how many of
the abstract's own frequent content words they carry, with a bonus for title words and for the
first sentence, and the best ones are kept in their original order. An OpenAI-compatible endpoint
(a local vLLM or SGLang server) can write abstractive summaries instead; it is off unless
[report] summary_endpoint is set, each call has a timeout, and any failure falls back to the
extractive summary (after the first failure the endpoint is not called again in this report).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Protocol

import requests

from radar.crawler.http import request_checked
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
    """Chat completions on an OpenAI-compatible server; extractive fallback on any failure."""

    name = "endpoint"

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        timeout_s: float,
        api_key: str = "",
        fallback: ExtractiveSummarizer | None = None,
    ) -> None:
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout_s = timeout_s
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.secrets = [*url_secrets(endpoint), api_key]  # never in last_error (it goes into the report)
        self.fallback = fallback or ExtractiveSummarizer()
        self.failures = 0
        self.calls = 0
        self.last_error = ""
        self.broken = False
        self.session = requests.Session()  # one connection for the report's calls

    def summarize(self, title: str, text: str) -> str:
        if self.broken or not text.strip():
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
            resp = request_checked(
                self.session,
                "POST",
                self.url,
                data=json.dumps(body),
                headers=self.headers | {"Content-Type": "application/json"},
                timeout=self.timeout_s,
            )
            resp.raise_for_status()
            content = resp.json()["choices"][0]["message"]["content"]
            summary = " ".join(str(content).split())
            if not summary:
                raise ValueError("empty summary")
            return _clip(summary, 600)
        except (requests.RequestException, UrlRefused, ValueError, KeyError, IndexError, TypeError) as exc:
            self.failures += 1
            self.last_error = scrub_line(f"{type(exc).__name__}: {exc}", self.secrets, 200)
            self.broken = True  # one timeout per report, not one per paper
            return self.fallback.summarize(title, text)


def make_summarizer(cfg: ReportConfig) -> Summarizer:
    extractive = ExtractiveSummarizer(cfg.summary_sentences)
    if not cfg.summary_endpoint:
        return extractive
    key = os.environ.get(cfg.summary_api_key_env, "") if cfg.summary_api_key_env else ""
    return EndpointSummarizer(
        cfg.summary_endpoint, cfg.summary_model, timeout_s=cfg.summary_timeout_s, api_key=key, fallback=extractive
    )
