"""A small workspace whose week 2025-W39 has a known story (tests/test_report_evidence.py, tests/test_one_truth.py):

- ZETAPO is introduced in the week (its paper links its own code);
- KAPPAPO was introduced in August and the week's papers name it far more than the weeks before (rising);
- DAPO (a preset: its paper is stored) is named by three of the week's papers, two of them comparing against it,
  and by eight papers of the weeks before (not rising);
- GSPO (a preset) is named by one paper of the week and one before: nothing beside the preset;
- a text-to-speech paper carries a lab tag (preference-optimization) but applies the method elsewhere;
- two of the week's papers compare against Dr. GRPO (a preset whose name has two words; its paper is not stored);
- a July paper introduces ZetaPO, a pose estimator spelled like ZETAPO (another meaning, before ZETAPO's paper);
- a hostile paper introduces EVILPO with markup in its title and abstract;
- filler papers every day from April (tagged), so the trends have a history and the week a volume.
"""

from __future__ import annotations

from datetime import date, timedelta

from radar.crawler.documents import Document, Documents
from radar.store import Store
from radar.store.models import utc_now

WEEK = "2025-W39"  # Mon 22 - Sun 28 Sep 2025
FIRST_DAY = date(2025, 4, 7)
LAST_DAY = date(2025, 9, 28)
ZETAPO_ID, KAPPAPO_ID, DAPO_ID, GSPO_ID, TTS_ID, EVIL_ID = (
    "2509.10001",
    "2508.10001",
    "2503.14476",
    "2507.18071",
    "2509.10002",
    "2509.10003",
)
HOMONYM_ID = "2507.20001"
EVIL_TITLE = "EVILPO: <script>alert(1)</script> *policy* optimization for LLM reinforcement learning"
RL_TAG, TTS_TAG, SERVING_TAG = "rl-policy-optimization", "preference-optimization", "inference-serving"


def paper(doc_id: str, day: date, title: str, abstract: str, category: str = "cs.LG") -> Document:
    return Document(
        id=doc_id,
        kind="paper",
        source="arxiv",
        title=title,
        abstract=abstract,
        published=f"{day.isoformat()}T10:00:00Z",
        url=f"https://arxiv.org/abs/{doc_id}",
        primary_category=category,
        categories=(category,),
    )


def _filler(day: date, k: int) -> tuple[Document, str]:
    n = f"{(day - FIRST_DAY).days:03d}{k}"
    doc_id = f"{day:%y%m}.2{n}"
    if k % 2:
        title = f"Measuring the serving latency of language models on shared accelerators, study {n}"
        abstract = f"We measure the latency of serving large language models on shared accelerators in setting {n}."
        return paper(doc_id, day, title, abstract, "cs.DC"), SERVING_TAG
    title = f"Reward shaping for reinforcement learning of language models, study {n}"
    abstract = f"We study reward shaping in reinforcement learning for large language models in setting {n}."
    return paper(doc_id, day, title, abstract), RL_TAG


def _users(prefix: str, days: list[date], sentence: str) -> list[Document]:
    return [
        paper(
            f"{d:%y%m}.3{prefix}{i:02d}",
            d,
            f"Stable reinforcement learning for math reasoning, variant {prefix}{i}",
            f"We post-train reasoning models with reinforcement learning. {sentence}",
        )
        for i, d in enumerate(days)
    ]


def build(store: Store) -> None:
    """Store the workspace's documents and their tags (rule tags standing in for the tagger)."""
    docs: list[Document] = []
    tags: list[tuple[str, str]] = []
    day = FIRST_DAY
    while day <= LAST_DAY:
        for k in range(4):
            doc, tag = _filler(day, k)
            docs.append(doc)
            tags.append((doc.id, tag))
        day += timedelta(days=1)
    special = [
        paper(
            ZETAPO_ID,
            date(2025, 9, 24),
            "ZETAPO: Zeta Policy Optimization for Reinforcement Learning with Verifiable Rewards",
            "We propose ZETAPO, a policy optimization algorithm for reinforcement learning with verifiable rewards "
            "(RLVR) of large language models that replaces the group-mean advantage baseline of GRPO with a "
            "zeta-quantile baseline. Code: https://github.com/lab/zetapo.",
        ),
        paper(
            KAPPAPO_ID,
            date(2025, 8, 12),
            "KAPPAPO: Kappa Policy Optimization for Reinforcement Learning with Verifiable Rewards",
            "We propose KAPPAPO, a reinforcement learning algorithm for LLM post-training that clips the importance "
            "ratio per sequence instead of per token, improving on GRPO. Code: https://github.com/lab/kappapo.",
        ),
        paper(
            DAPO_ID,
            date(2025, 3, 18),
            "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
            "We propose the Decoupled Clip and Dynamic sAmpling Policy Optimization (DAPO) algorithm, and fully "
            "open-source a state-of-the-art large-scale reinforcement learning system for LLM reasoning.",
        ),
        paper(
            GSPO_ID,
            date(2025, 7, 24),
            "Group Sequence Policy Optimization",
            "This paper introduces Group Sequence Policy Optimization (GSPO), a stable, efficient, and performant "
            "reinforcement learning algorithm for training large language models.",
        ),
        paper(
            TTS_ID,
            date(2025, 9, 23),
            "VoxPO: Preference Optimization for Expressive Text-to-Speech",
            "We propose VoxPO, a preference optimization method for text-to-speech synthesis that aligns prosody "
            "with listener preferences using DPO on speech tokens.",
            "eess.AS",
        ),
        paper(
            EVIL_ID,
            date(2025, 9, 25),
            EVIL_TITLE,
            "We propose EVILPO, a reinforcement learning method for LLMs that [clicks](javascript:alert(2)) "
            "**bold** <img src=x onerror=alert(3)> and improves GRPO.",
        ),
    ]
    week = [date(2025, 9, 22) + timedelta(days=i) for i in range(7)]
    before = [date(2025, 8, 25) + timedelta(days=3 * i) for i in range(9)]  # the four weeks before the week
    users = [
        *_users("1", [date(2025, 9, 3)], "We build on KAPPAPO for long reasoning."),
        *_users("2", week[:3], "Our recipe outperforms KAPPAPO and GRPO on math benchmarks."),
        *_users("3", week[3:6], "We build on KAPPAPO for long reasoning."),
        *_users("4", week[:2], "Our recipe outperforms DAPO on math benchmarks."),
        *_users("5", week[4:5], "We train with DAPO for long reasoning."),
        *_users("6", before[:8], "We train with DAPO for long reasoning."),
        *_users("7", week[2:3] + before[8:], "We also try GSPO for long reasoning."),
        *_users("8", week[1:3], "Our recipe outperforms Dr. GRPO on math benchmarks."),  # a preset's name of two words
    ]
    # an earlier paper spelled like ZETAPO that means something else: not part of ZETAPO's evidence
    homonym = paper(
        HOMONYM_ID,
        date(2025, 7, 10),
        "ZetaPO: Zero-Shot Estimation of Object Pose from Single Images",
        "We propose ZetaPO, a zero-shot object pose estimator for robotic grasping from a single RGB image.",
        "cs.CV",
    )
    special.append(homonym)
    docs += special + users
    tags += [(d.id, RL_TAG) for d in special + users if d.id != TTS_ID] + [(TTS_ID, TTS_TAG)]
    Documents(store).upsert(docs)
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
            "VALUES (?, ?, 0.9, 'rule', ?)",
            [(i, t, utc_now()) for i, t in tags],
        )
