"""What each paper introduces, and the method cards built on that.

Flow: extract.py (candidate names of one paper and the evidence around each) -> model.py (learned name,
introduces, kind, area and builds-on decisions over features.py, stored as JSON) -> find.py (``contribution_of``:
a ``Contribution``) -> update.py (incremental: papers without a row for the current model, into the store's
contributions and mentions tables) -> cards.py (``MethodCard``: introduced or spreading names, their adoption
counted from the stored mentions) -> week.py (a period's cards ranked by consequence.py over signals.py).
rules.py is the plain baseline; evaluate.py measures both by leave-one-week-out cross-validation on the shipped
labels (labels/).
"""

from radar.analysis.contributions.cards import (
    MethodCard,
    all_cards,
    card_for,
    parse_week,
    preset_for,
)
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.find import Contribution, contribution_of, contributions_of
from radar.analysis.contributions.labels import AREAS, KINDS, LAB_AREAS
from radar.analysis.contributions.model import ContributionModel, shipped_model
from radar.analysis.contributions.update import UpdateReport, update_contributions
from radar.analysis.contributions.week import introduced_methods, week_cards

__all__ = [
    "AREAS",
    "KINDS",
    "LAB_AREAS",
    "Contribution",
    "ContributionModel",
    "ContributionsError",
    "MethodCard",
    "UpdateReport",
    "all_cards",
    "card_for",
    "contribution_of",
    "contributions_of",
    "introduced_methods",
    "parse_week",
    "preset_for",
    "shipped_model",
    "update_contributions",
    "week_cards",
]
