"""Math answers: final-answer extraction and equivalence, for `radar repro run --dataset FILE.jsonl`.

Extraction (``final_answer``), first match wins: the last ``\\boxed{...}`` (nested braces balanced,
``\\fbox`` too), the text after the last ``####`` (GSM8K), "the answer is X", then the last number in
the text. Reference answers (``reference_answer``) use the same markers, and a short bare answer
("\\frac{1}{2}", "x+1") is taken whole.

Equivalence (``equivalent``): both sides are normalised (``$``, ``\\left``/``\\right``, ``\\!``,
``\\text{...}`` units, ``^\\circ``, thousands commas, a trailing period, ``dfrac``/``tfrac``; a unit word
after a number is dropped, but a hedge or second answer is not a unit: "18 or twenty" is no answer), then
compared as strings, as exact rationals (integers, decimals, ``a/b``, ``\\frac{a}{b}``, percentages
are *not* turned into fractions), element by element for tuples and sets ("(1, 2)"), and finally
symbolically with sympy when the text is a small expression built only from digits, single-letter
variables, ``+ - * / ^``, parentheses, ``sqrt`` and ``pi``. Model output is untrusted: the symbolic
step parses only text that passes that whitelist (sympy's parser evaluates Python: no ``**``, no
``.`` except in a decimal number, so no attribute or method access), caps its length and exponents (no
towers such as ``99^(99)^9``), and any error counts as "not equal". The two parsed expressions are
compared numerically (50 digits) at three fixed points, not with ``sympy.simplify``, whose time has no
bound (``(a+b+c+d+e)^99`` against ``^98`` ran for minutes); agreement at all three points is taken as
equality (for the polynomials and roots the whitelist allows, a wrong "equal" needs all three points
to be common roots of the difference).

Pure functions, no torch; sympy (a dependency of torch) is imported only for the symbolic step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_WORD = re.compile(r"[^\s$]+")
_ANSWER_IS = re.compile(r"answer\s*(?:is|:)[:\s]*\$?", re.IGNORECASE)
_AFTER_DOLLAR = re.compile(r"\s*(?:\.\s*)?")
# words after a number that make it no single answer (a hedge, a second answer or a range), never a unit
_NOT_UNITS = frozenset(
    [
        "or",
        "and",
        "nor",
        "but",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "either",
        "not",
        "to",
        "through",
        "until",
        "between",
        "about",
        "approximately",
        "around",
        "roughly",
        "nearly",
        "almost",
        "than",
        "plus",
        "minus",
        "times",
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
    ]
)


def _stated_answers(text: str) -> list[str]:
    """What follows each "the answer is" / "answer:" to the end of its line ("$" and a final "." dropped).

    A scan, not one regex: the backtracking pattern this replaces took 11 s on "answer is " * 2000.
    """
    found: list[str] = []
    pos = 0
    while (m := _ANSWER_IS.search(text, pos)) is not None:
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        line = text[m.end() : end]
        dollar = line.find("$")
        said = line if dollar < 0 else line[:dollar]
        if dollar < 0:
            said = said.rstrip()
            said = said[:-1] if said.endswith(".") else said
        if said.strip() and (dollar < 0 or _AFTER_DOLLAR.fullmatch(line, dollar + 1)):
            found.append(said)
            pos = end
        else:
            pos = m.start() + 1
    return found


def _closing_braces(text: str) -> dict[int, int]:
    """For each unescaped ``{`` that is closed, the index after its matching ``}`` (one pass)."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for i, ch in enumerate(text):
        if ch in "{}" and i > 0 and text[i - 1] == "\\":
            continue
        if ch == "{":
            opened.append(i)
        elif ch == "}" and opened:
            closing[opened.pop()] = i + 1
    return closing


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` / ``\\fbox{...}`` with balanced braces, else None."""
    found = None
    closing: dict[int, int] | None = None  # computed once: a text of many unclosed boxes stays linear
    for m in re.finditer(r"\\(?:boxed|fbox)\s*", text):
        i = m.end()
        if i < len(text) and text[i] == "{":
            if closing is None:
                closing = _closing_braces(text)
            end = closing.get(i)
            if end is not None:
                found = text[i + 1 : end - 1]
        elif text[i : i + 1] not in ("", "{"):  # "\boxed 5"
            rest = _WORD.match(text, i)
            if rest:
                found = rest.group(0)
    return found


def final_answer(text: str) -> str | None:
    """The final answer a completion states (see the module docstring), or None."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed.strip()
    if "####" in text:
        tail = text.rsplit("####", 1)[1].strip()
        line = tail.splitlines()[0].strip() if tail else ""
        return line or None
    said = _stated_answers(text)
    if said:
        return said[-1].strip()
    numbers = _NUMBER.findall(text)
    return numbers[-1].rstrip(",") if numbers else None


def reference_answer(answer: str) -> str:
    """A dataset's answer field: a full solution (``\\boxed{}`` or ``####``) or a bare answer."""
    text = str(answer).strip()
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed.strip()
    if "####" in text:
        return text.rsplit("####", 1)[1].strip().splitlines()[0].strip() if text.rsplit("####", 1)[1].strip() else ""
    if len(text) <= 40 and "\n" not in text:
        return text
    found = final_answer(text)
    return found if found is not None else text


# -- normalisation ----------------------------------------------------------------------------------
def normalize(answer: str) -> str:
    s = str(answer).strip()
    s = s.strip("$").strip()
    for old, new in (
        ("\\left", ""),
        ("\\right", ""),
        ("\\!", ""),
        ("\\,", ""),
        ("\\;", ""),
        ("\\ ", ""),
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
        ("\\cdot", "*"),
        ("\\times", "*"),
        ("^\\circ", ""),
        ("^{\\circ}", ""),
        ("\\%", "%"),
        ("\\$", ""),
        ("\\{", "{"),
        ("\\}", "}"),
    ):
        s = s.replace(old, new)
    s = re.sub(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}", r" \1 ", s)  # \text{ cm} -> cm (dropped below)
    s = re.sub(r"^\s*[a-zA-Z]\s*=\s*(?=\S)", "", s)  # "x = 5" -> "5"
    s = s.strip()
    s = re.sub(r"\s+", " ", s)
    s = s.rstrip(".").strip()
    # a number followed by a unit word ("18 dollars", "5 cm"): keep the number; but not a hedge or a second
    # answer ("18 or twenty", "18 or maybe twenty", "18 to 20"): that is no single final answer
    m = re.match(r"^(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)\s*[a-zA-Z][a-zA-Z ]*$", s)  # linear: no overlapping runs
    if m and not re.match(r"^-?\d+\s*[a-zA-Z]$", s) and not set(s[m.end(1) :].lower().split()) & _NOT_UNITS:
        s = m.group(1)  # ("2x" stays an expression; a hedged "18ortwenty" then equals no number)
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    return s.replace(" ", "")


def as_fraction(s: str) -> Fraction | None:
    """An exact rational for integers, decimals, a/b, \\frac{a}{b} (signs allowed), else None."""
    t = s.replace(" ", "")
    neg = False
    while t.startswith("-") or t.startswith("+"):
        neg ^= t[0] == "-"
        t = t[1:]
    m = re.fullmatch(r"\\frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}|\\frac(\d)(\d)", t)
    if m:
        a, b = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        num, den = _dec(a), _dec(b)
        if num is None or den is None or den == 0:
            return None
        value = num / den
    elif re.fullmatch(r"[\d.]+/[\d.]+", t):
        a, b = t.split("/")
        num, den = _dec(a), _dec(b)
        if num is None or den is None or den == 0:
            return None
        value = num / den
    else:
        dec = _dec(t)
        if dec is None:
            return None
        value = dec
    return -value if neg else value


def _dec(t: str) -> Fraction | None:
    if len(t) <= 1000 and re.fullmatch(r"-?(?:\d+(?:\.\d*)?|\.\d+)", t):
        return Fraction(t)
    return None


def _split_top(s: str) -> list[str] | None:
    """Elements of a tuple / set / interval written with brackets, split on top-level commas."""
    if len(s) < 2 or s[0] not in "([{" or s[-1] not in ")]}":
        return None
    inner, depth, parts, cur = s[1:-1], 0, [], ""
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts if len(parts) > 1 else None


def equivalent(predicted: str | None, reference: str) -> bool:
    """True when a predicted final answer equals the reference answer (see the module docstring)."""
    if predicted is None:
        return False
    a, b = normalize(predicted), normalize(reference)
    if not a or not b:
        return False
    if a == b:
        return True
    fa, fb = as_fraction(a), as_fraction(b)
    if fa is not None and fb is not None:
        return fa == fb
    pa, pb = _split_top(a), _split_top(b)
    if pa is not None or pb is not None:
        if pa is None or pb is None or len(pa) != len(pb) or a[0] != b[0] or a[-1] != b[-1]:
            return False
        return all(equivalent(x, y) for x, y in zip(pa, pb, strict=True))
    if a.endswith("%") or b.endswith("%"):
        return a.rstrip("%") == b.rstrip("%") or equivalent(a.rstrip("%"), b.rstrip("%"))
    return _symbolic_equal(a, b)


# -- symbolic equivalence (whitelisted input only) --------------------------------------------------
_SAFE = re.compile(r"^[0-9a-zA-Z+\-*/^().]*$")
_NAMES = {"sqrt", "pi"}


def _to_python(s: str) -> str | None:
    """LaTeX-ish answer -> a sympy-parsable string, or None when it is not a small safe expression."""
    t = s
    for _ in range(4):  # nested \frac / \sqrt
        t = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", t)
        t = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", t)
    t = re.sub(r"\\frac(\d)(\d)", r"(\1/\2)", t)
    t = re.sub(r"\\sqrt(\d)", r"sqrt(\1)", t)
    t = t.replace("\\pi", "pi").replace("{", "(").replace("}", ")")
    if "\\" in t or not _SAFE.match(t) or len(t) > 80 or "__" in t or "**" in t:
        return None
    if re.search(r"\.(?!\d)", t):  # a '.' only inside a decimal number: no attribute access (pi.n(9999))
        return None
    for name in re.findall(r"[a-zA-Z]+", t):
        if name not in _NAMES and len(name) > 1:  # only sqrt, pi and single-letter variables
            return None
    if re.search(r"\d{16,}", t):
        return None
    if t.count("^") > 2 or re.search(r"\^[^+\-*/()]*\^", t):  # no towers (9^9^9)
        return None
    if re.search(r"\^(\([^()]*\)|-?\d+|[a-zA-Z])\^", t):  # nor 99^(99)^9 (Python reads it 99^(99^9))
        return None
    for exp in re.findall(r"\^(\([^()]*\)|-?\d+|[a-zA-Z]|.?)", t):  # small exponents only
        if not re.fullmatch(r"\(?(-?\d{1,2}|[a-zA-Z]|-?\d/\d)\)?", exp):
            return None
    return t.replace("^", "**")


@lru_cache(maxsize=4096)
def _symbolic_equal(a: str, b: str) -> bool:
    pa, pb = _to_python(a), _to_python(b)
    if pa is None or pb is None:
        return False
    try:
        import sympy
        from sympy.parsing.sympy_parser import (
            implicit_multiplication_application,
            parse_expr,
            standard_transformations,
        )

        names: dict[str, sympy.Basic | Callable[..., sympy.Basic]] = {"sqrt": sympy.sqrt, "pi": sympy.pi}
        for letter in set(re.findall(r"(?<![a-zA-Z])[a-zA-Z](?![a-zA-Z])", pa + " " + pb)):
            names[letter] = sympy.Symbol(letter)  # never sympy's own E, I, N, S, O, Q
        transformations = (*standard_transformations, implicit_multiplication_application)
        ea = parse_expr(pa, local_dict=dict(names), transformations=transformations, evaluate=True)
        eb = parse_expr(pb, local_dict=dict(names), transformations=transformations, evaluate=True)
        symbols = sorted(ea.free_symbols | eb.free_symbols, key=str)
        compared = 0
        for point in _POINTS:
            subs = {sym: sympy.Rational(point[i % len(point)] * (i + 1), 7) for i, sym in enumerate(symbols)}
            va, vb = ea.evalf(50, subs=subs), eb.evalf(50, subs=subs)
            if not (va.is_number and vb.is_number and va.is_finite and vb.is_finite):
                continue  # a pole or an undefined value at this point: try the next one
            if abs(va - vb) > 1e-30 * max(1, abs(va), abs(vb)):
                return False
            compared += 1
        return compared >= 2
    except Exception:  # noqa: BLE001  any parse or algebra error: not shown to be equal
        return False


# numerators of the fixed comparison points (divided by 7, scaled per symbol): not small integers,
# so that a difference such as x*(x-1)*(x-2) does not vanish at all of them
_POINTS = ((5, 11, 3), (13, 2, 17), (9, 23, 6))


# -- rewards (TRL signature) ------------------------------------------------------------------------
def has_final_marker(text: str) -> bool:
    """The format reward's condition: the completion states its answer explicitly (boxed or ####)."""
    return last_boxed(text) is not None or "####" in text or bool(_stated_answers(text))
