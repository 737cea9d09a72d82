"""Which KV sequence a request gets: its own conversation in place, busy sequences kept consecutive, and the
least recently used conversation the one that is lost."""

from __future__ import annotations

from serve.llama.modes import BatchInvariant, Throughput
from serve.llama.prompt_cache import CachedSequence, PromptCache

INVARIANT = BatchInvariant(chunk=4, granularity=4)


def conversation(tag: int, length: int = 12) -> list[int]:
    return [tag] * length


def serve(cache: PromptCache, prompt: list[int]) -> CachedSequence:
    """Admit a prompt, pretend its cells were written, and release it, as the scheduler does."""
    plan = cache.plan(prompt)
    assert plan is not None
    cached = cache.take(plan)
    cached.tokens[plan.reuse :] = prompt[plan.reuse :]
    cache.release(cached, len(prompt))
    return cached


def test_new_requests_take_the_lowest_free_working_sequences() -> None:
    cache = PromptCache(6, INVARIANT, working=4)
    taken = []
    for tag in range(3):
        plan = cache.plan(conversation(tag))
        assert plan is not None
        taken.append(cache.take(plan).sequence)
    assert taken == [0, 1, 2]
    cache.release(cache.held[1], 12)
    plan = cache.plan(conversation(9))
    assert plan is not None and plan.cached.sequence == 1  # the gap is filled, the busy ones stay consecutive


def test_a_conversation_continues_in_place_when_its_sequence_is_free() -> None:
    cache = PromptCache(6, INVARIANT, working=4)
    serve(cache, conversation(1))
    serve(cache, conversation(2))  # lands in sequence 0 too, after keeping conversation 1 aside
    plan = cache.plan([*conversation(2), 7, 7, 7, 7, 7])
    assert plan is not None and plan.cached.sequence == 0 and plan.reuse == 12 and plan.copy_from is None


def test_a_conversation_kept_aside_comes_back_by_copy_and_nothing_is_lost() -> None:
    cache = PromptCache(6, INVARIANT, working=2)
    serve(cache, conversation(1))
    plan = cache.plan(conversation(2))
    assert plan is not None and plan.cached.sequence == 0 and plan.keep_in is not None
    kept = plan.keep_in.sequence
    serve(cache, conversation(2))
    assert cache.held[kept].tokens == conversation(1)
    plan = cache.plan([*conversation(1), 5])
    assert plan is not None and plan.copy_from is cache.held[kept] and plan.reuse == 12
    assert plan.cached.sequence == 0 and plan.keep_in is not None  # conversation 2 is kept aside in its turn


def test_a_request_sharing_only_a_prefix_keeps_the_longer_conversation_for_the_next_one() -> None:
    """An agent's answer turn shares the system prompt with its task, not the tools; the next task shares both."""
    system, tools = [1] * 4, [2] * 8
    cache = PromptCache(5, INVARIANT, working=4)
    serve(cache, [*system, *tools, 3, 3, 3])  # a task's turn
    answer_turn = cache.plan([*system, 4, 4, 4, 4, 4])
    assert answer_turn is not None and answer_turn.reuse == 4 and answer_turn.keep_in is not None
    serve(cache, [*system, 4, 4, 4, 4, 4])
    next_task = cache.plan([*system, *tools, 5, 5, 5])
    assert next_task is not None and next_task.reuse == 12  # the system prompt and the tools, not just the first


def test_with_every_sequence_full_the_least_recently_used_conversation_is_the_one_lost() -> None:
    cache = PromptCache(3, INVARIANT, working=1)
    for tag in (1, 2, 3):
        serve(cache, conversation(tag))
    held = sorted(s.tokens[0] for s in cache.held)
    assert held == [1, 2, 3]
    serve(cache, conversation(4))
    held = sorted(s.tokens[0] for s in cache.held)
    assert held == [2, 3, 4]  # conversation 1, the oldest, made room


def test_a_shared_prefix_in_a_busy_sequence_is_copied_not_recomputed() -> None:
    cache = PromptCache(4, INVARIANT, working=4)
    first = cache.plan(conversation(1, 16))
    assert first is not None
    busy = cache.take(first)
    busy.tokens = conversation(1, 16)
    busy.exact = 16
    plan = cache.plan([*conversation(1, 16)[:8], 3, 3, 3, 3, 3])
    assert plan is not None and plan.copy_from is busy and plan.reuse == 8 and plan.cached.sequence == 1


def test_without_a_prompt_cache_nothing_is_reused() -> None:
    cache = PromptCache(4, INVARIANT, reuse=False)
    serve(cache, conversation(1))
    plan = cache.plan([*conversation(1), 2])
    assert plan is not None and plan.reuse == 0 and plan.copy_from is None and plan.keep_in is None


def test_batch_invariant_reuse_stops_at_the_prompt_s_whole_chunks() -> None:
    """Generated tokens and a prompt's last partial chunk were not computed as whole aligned chunks."""
    cache = PromptCache(4, INVARIANT)
    cached = serve(cache, conversation(1, 10))
    cached.tokens += [8, 8, 8]  # the reply, as the scheduler appends it
    cache.release(cached, 10)
    plan = cache.plan([*conversation(1, 10), 8, 8, 8, 5])
    assert plan is not None and plan.reuse == 8


def test_in_throughput_mode_every_cell_is_reused_to_the_token_reply_included() -> None:
    cache = PromptCache(4, Throughput())
    cached = serve(cache, conversation(1, 10))
    cached.tokens += [8, 8, 8]
    cache.release(cached, 10)
    plan = cache.plan([*conversation(1, 10), 8, 8, 8, 5])
    assert plan is not None and plan.reuse == 13
