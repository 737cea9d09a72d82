"""Command-line flags for the small-model controls, shared by `harness run` and `python -m evals`."""

from __future__ import annotations

import argparse

from harness.config import Controls


def add_controls(parser: argparse.ArgumentParser) -> None:
    """One flag per field of Controls; the defaults are Controls' own (the measured best)."""
    default, on = Controls(), argparse.BooleanOptionalAction
    group = parser.add_argument_group("small-model controls (see the README's controls table)")
    group.add_argument("--no-controls", action="store_true", help="all of them off: the plain loop of the seed chapter")
    group.add_argument("--look-turns", type=int, default=default.look_turns, help="opening turns that must call a tool")
    group.add_argument("--act-on-intent", action=on, default=default.act_on_intent, help="a tool named, not called")
    group.add_argument("--call-after-error", action=on, default=default.call_after_error, help="errors: call again")
    group.add_argument("--repeat-guard", action=on, default=default.repeat_guard, help="refuse identical read calls")
    group.add_argument("--repeats-before-answer", type=int, default=default.repeats_before_answer)
    group.add_argument("--answer-at-cap", action=on, default=default.answer_at_cap, help="answer turn at the cap")
    group.add_argument("--answer-mode", choices=["offered", "restated", "prose", "digest"], default=default.answer_mode)
    group.add_argument("--parallel-calls", action=on, default=default.parallel_calls, help="ask for parallel calls")
    group.add_argument("--empty-retries", type=int, default=default.empty_retries, help="re-asks of an empty reply")
    group.add_argument(
        "--empty-mode", choices=["ask", "call"], default=default.empty_mode, help="how an empty reply is re-asked"
    )
    group.add_argument("--remind-question", action=on, default=default.remind_question, help="question after results")
    group.add_argument("--tool-talk", action=on, default=default.tool_talk, help="re-ask answers about tools")
    group.add_argument("--verify-answer", action=on, default=default.verify_answer, help="check an answer once")
    group.add_argument(
        "--answer-from-results", action=on, default=default.answer_from_results, help="re-ask an answer as a digest"
    )
    group.add_argument("--rendering", choices=["native", "hermes", "words"], default=default.rendering)


def controls_from(args: argparse.Namespace) -> Controls:
    if args.no_controls:
        return Controls.off()
    return Controls(
        look_turns=args.look_turns,
        act_on_intent=args.act_on_intent,
        call_after_error=args.call_after_error,
        repeat_guard=args.repeat_guard,
        repeats_before_answer=args.repeats_before_answer,
        answer_at_cap=args.answer_at_cap,
        answer_mode=args.answer_mode,
        parallel_calls=args.parallel_calls,
        empty_retries=args.empty_retries,
        empty_mode=args.empty_mode,
        remind_question=args.remind_question,
        tool_talk=args.tool_talk,
        verify_answer=args.verify_answer,
        answer_from_results=args.answer_from_results,
        rendering=args.rendering,
    )
