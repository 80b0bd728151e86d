"""Origin fidelity of NAME surrogates on labelled dialogues (printed by ``plainsight eval``).

For every gold NAME of a file (one session per dialogue, a fixed measuring secret), each name token
of the original and the token at the same place in its surrogate are classified by the names-dataset
origin table (``name_origin.py``) in the token's role (given name / surname, East-Asian order kept;
a non-Latin token by its script). Reported:

* ``group``: the share of tokens whose surrogate's best origin group is the original's, over the
  tokens whose original the table places, by the original's group and overall;
* ``gender``: the share of given names whose surrogate has the original's gender, over the given names
  the table knows as female or male (a surrogate whose gender the table does not know counts as a miss).
"""

from __future__ import annotations

import re
from collections import Counter

from .name_origin import SCRIPT_GROUP, NameOrigin, load_name_origin
from .names import is_latin, single_role

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
SECRET = "origin-fidelity-measure"


def _group(no: NameOrigin, origins, token: str, role: str) -> str | None:
    if is_latin(token):
        return no.best_group(token, role)
    cands = origins.candidates(token)
    return SCRIPT_GROUP.get(next(iter(cands))) if len(cands) == 1 else None


def _roles(no: NameOrigin, tables, toks: list[str]) -> list[str]:
    if len(toks) == 1:
        return [single_role(no, toks[0], tables.classify(toks[0]))]
    if len(toks) == 2 and no.surname_first(toks[0], toks[1]):
        return ["last", "first"]
    return ["first"] + ["middle"] * (len(toks) - 2) + ["last"]


def measure(dialogues, replacer=None) -> dict:
    """``dialogues``: dicts with ``id``, ``turns`` and gold ``spans`` (the dev-file format)."""
    from ..origin import load_origins
    from ..replacer import SurrogateReplacer

    rep = replacer or SurrogateReplacer(SECRET)
    no, origins, tables = load_name_origin(), load_origins(), rep.tables
    n = Counter()
    same = Counter()
    g_n = g_same = 0
    for d in dialogues:
        st = rep.new_state(str(d.get("id", "")))
        for s in d.get("spans") or []:
            if s.get("label") != "NAME":
                continue
            value = d["turns"][s["turn"]]["text"][s["start"]: s["end"]] if "turn" in s else s.get("text", "")
            toks = [m.group() for m in _TOKEN.finditer(value) if len(m.group()) > 1]
            if not toks:
                continue
            sur_toks = [m.group() for m in _TOKEN.finditer(rep.surrogate_for(value, "NAME", st)) if len(m.group()) > 1]
            if len(sur_toks) != len(toks):
                continue
            for tok, sur, role in zip(toks, sur_toks, _roles(no, tables, toks)):
                r = "last" if role == "last" else "first"
                g = _group(no, origins, tok, r)
                if g is not None:
                    n[g] += 1
                    same[g] += _group(no, origins, sur, r) == g
                gender = no.gender(tok) if r == "first" and is_latin(tok) else None
                if gender is not None:
                    g_n += 1
                    g_same += no.gender(sur) == gender
    total = sum(n.values())
    return {
        "tokens": total,
        "group": round(sum(same.values()) / total, 4) if total else None,
        "by_group": {g: {"n": n[g], "same": round(same[g] / n[g], 4)} for g in sorted(n)},
        "given_names_with_gender": g_n,
        "gender": round(g_same / g_n, 4) if g_n else None,
    }


def format_fidelity(f: dict) -> str:
    if not f.get("tokens"):
        return "origin fidelity: no gold names the origin table places"
    lines = [f"origin fidelity (surrogate in the original's origin group): {f['group']:.1%} of {f['tokens']} name tokens; "
             + (f"gender kept: {f['gender']:.1%} of {f['given_names_with_gender']} given names" if f["gender"] is not None
                else "gender: no gendered given names")]
    lines += [f"  {g:20s} {v['same']:6.1%}  (n={v['n']})" for g, v in f["by_group"].items()]
    return "\n".join(lines)
