"""The decision trace: each test the rule made of a pair, as a value (:class:`Step`: what it measured, the bounds it
applied, the verdict), the words ``es-simhash explain`` prints for it (:meth:`Step.words`), and the recorder the
tests note each step with (:func:`recorder`: the decision and its trace are one code path)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["Step", "MEANING_VETO", "Note", "recorder"]

MEANING_VETO = ("the meaning guard: the texts (or a pair of their sentences) differ by a negation word or by words "
                "in another order")
"""What vetoed a match that the meaning guard took back (``explain``'s ``vetoed_by``)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One test of a pair: its name (``test``, a key of the words below), its measured quantities and bounds
    (``values``), and whether it passed (None: a note, such as the boilerplate left out, not a test)."""

    test: str
    passed: bool | None
    values: Mapping[str, Any] = field(default_factory=dict)

    def words(self) -> str:
        """The step in words, one line of ``explain``'s ``why``."""
        return _WORDS[self.test](self.values)


Note = Callable[[str, "bool | None", Mapping[str, Any]], None]
"""What a test calls with each step it makes: ``note(test, passed, values)`` (see :class:`Step`)."""


def _not_traced(test: str, passed: bool | None, values: Mapping[str, Any]) -> None:
    """The recorder of a decision nobody traces: records nothing."""


def recorder(trace: list[Step] | None) -> Note:
    """The :data:`Note` that appends each step to ``trace`` (``None``: one that records nothing). The tests call it
    unconditionally, so a traced decision makes the same tests in the same order as an untraced one."""
    if trace is None:
        return _not_traced

    def note(test: str, passed: bool | None, values: Mapping[str, Any]) -> None:
        trace.append(Step(test, passed, values))

    return note


def _yes(passed: bool) -> str:
    return "yes" if passed else "no"


def _simhash(v: Mapping[str, Any]) -> str:
    if v["case"] == "mixed":
        return f"one short, one long: SimHash ({v['distance']} bits) is not enough on its own"
    bound = "k" if v["case"] == "long" else "short_k"
    return f"both {v['case']}: SimHash {v['distance']} bits apart, the rule takes up to {bound} = {v['bound']}"


def _sentences(v: Mapping[str, Any]) -> str:
    far = (f"within far_sentence_k = {v['far_sentence_k']} bits with at least {v['far_shared_sentences']:.0%} "
           f"shared: {_yes(v['far'])}; " if v["far_sentence_k"] > v["sentence_k"] else "")
    return (f"{v['shared']} of the smaller signature's {v['smaller']} long sentences shared: within "
            f"sentence_near_k = {v['sentence_near_k']} bits: {_yes(v['near'])}; within "
            f"sentence_k = {v['sentence_k']} bits with at least {v['min_shared_sentences']:.0%} shared: "
            f"{_yes(v['fraction'])}; {far}all of one signature (at least {v['min_contained_sentences']}) in the "
            f"other: {_yes(v['contained'])}")


def _event(v: Mapping[str, Any]) -> str:
    if "same" in v:
        named = ", ".join(f"{n} {kind}" for kind, n in v["same"].items())
        return (f"the same event: the dates and places both texts give agree ({named} shared); figures revised "
                f"do not make another event")
    if v["other"] == "dateline":
        return "another event: their datelines name other places (where each report was filed names the event)"
    if v["other"] == "places":
        return (f"another event: each text names places the other never names ({v['only']} at least, "
                f"{v['shared']} shared, more than place_guard = {v['place_guard']:.0%} of the shared needed; places "
                f"name the event)")
    return f"another event: both texts give {v['other']} and share fewer than half of them (dates name the event)"


def _fuzzy(v: Mapping[str, Any]) -> str:
    return (f"{v['shared']} of the smaller set's {v['smaller']} fuzzy sentence hashes shared, {v['rewritten']} of "
            f"them for sentences that differ: rewritten (within fuzzy_k = {v['fuzzy_k']} bits ({v['distance']}), "
            f"at least {v['fuzzy_min_shared']} and {v['fuzzy_shared']:.0%} shared, {v['fuzzy_rewritten']} "
            f"rewritten and {v['chance']:.1f} by chance): {_yes(v['by_rewritten'])}; verbatim (at least "
            f"{v['fuzzy_verbatim']:.0%} shared, within sentence_k = {v['sentence_k']} bits, or fuzzy_far = "
            f"{v['fuzzy_far']} shared of {2 * v['fuzzy_far']} or more within fuzzy_k bits or with two signature "
            f"sentences): {_yes(v['by_verbatim'])}")


_WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "versions": "fingerprint versions differ ({a} and {b}): never duplicates".format_map,
    "exact": "same letters, digits and ideographs after normalisation: exact".format_map,
    "features": ("one text has no usable features (empty, punctuation or stop words): only an exact copy could "
                 "match").format_map,
    "numbers": ("numbers: about {contained:.0%} of the numbers of the text that gives fewer are the other's, "
                "number_guard = {number_guard:.0%} needed (other dates and figures are another event)").format_map,
    "event": _event,
    "simhash": _simhash,
    "simhash-sketch": ("but they share {support} sketch hash(es) besides boilerplate, simhash_sketch_support = "
                       "{needed} needed (the words of a template, not of the texts)").format_map,
    "signature": "no sentence signature on one side".format_map,
    "boilerplate": ("{dropped} shared sentence, fuzzy or sketch hashes are boilerplate (held by too many documents, "
                    "or by candidates of several clusters): not counted").format_map,
    "shared": "no sentence, fuzzy or shingle-sketch hash shared (besides boilerplate)".format_map,
    "sentences": _sentences,
    "sentence-sketch": ("both texts carry a sketch: a sentence match also needs {needed} shared sketch hash(es) "
                        "besides boilerplate, {shared} shared (a template's sentences alone are not a "
                        "duplicate)").format_map,
    "sketch": ("{shared} shingle-sketch hashes shared, {needed:.0f} needed (half of the smaller sketch of "
               "{smaller}, at least {least})").format_map,
    "fuzzy": _fuzzy,
    "meaning": "vetoed by {by}".format_map,
}
