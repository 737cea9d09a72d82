"""Which KV sequence a request gets: its own conversation in place, busy sequences kept consecutive, and the
least recently used conversation the one that is lost."""

from __future__ import annotations

from serve.llama.slots import Slot, Slots

CHUNK = 4


def conversation(tag: int, length: int = 12) -> list[int]:
    return [tag] * length


def serve(slots: Slots, prompt: list[int]) -> Slot:
    """Admit a prompt, pretend its cells were written, and release it, as the scheduler does."""
    plan = slots.plan(prompt)
    assert plan is not None
    slot = slots.take(plan)
    slot.tokens[plan.reuse :] = prompt[plan.reuse :]
    slots.release(slot, len(prompt))
    return slot


def test_new_requests_take_the_lowest_free_working_sequences() -> None:
    slots = Slots(6, CHUNK, working=4)
    taken = []
    for tag in range(3):
        plan = slots.plan(conversation(tag))
        assert plan is not None
        taken.append(slots.take(plan).sequence)
    assert taken == [0, 1, 2]
    slots.release(slots.slots[1], 12)
    plan = slots.plan(conversation(9))
    assert plan is not None and plan.slot.sequence == 1  # the gap is filled, the busy ones stay consecutive


def test_a_conversation_continues_in_place_when_its_sequence_is_free() -> None:
    slots = Slots(6, CHUNK, working=4)
    serve(slots, conversation(1))
    serve(slots, conversation(2))  # lands in sequence 0 too, after keeping conversation 1 aside
    plan = slots.plan([*conversation(2), 7, 7, 7, 7, 7])
    assert plan is not None and plan.slot.sequence == 0 and plan.reuse == 12 and plan.copy_from is None


def test_a_conversation_kept_aside_comes_back_by_copy_and_nothing_is_lost() -> None:
    slots = Slots(6, CHUNK, working=2)
    serve(slots, conversation(1))
    plan = slots.plan(conversation(2))
    assert plan is not None and plan.slot.sequence == 0 and plan.keep_in is not None
    kept = plan.keep_in.sequence
    serve(slots, conversation(2))
    assert slots.slots[kept].tokens == conversation(1)
    plan = slots.plan([*conversation(1), 5])
    assert plan is not None and plan.copy_from is slots.slots[kept] and plan.reuse == 12
    assert plan.slot.sequence == 0 and plan.keep_in is not None  # conversation 2 is kept aside in its turn


def test_a_request_sharing_only_a_prefix_keeps_the_longer_conversation_for_the_next_one() -> None:
    """An agent's answer turn shares the system prompt with its task, not the tools; the next task shares both."""
    system, tools = [1] * 4, [2] * 8
    slots = Slots(5, CHUNK, working=4)
    serve(slots, [*system, *tools, 3, 3, 3])  # a task's turn
    answer_turn = slots.plan([*system, 4, 4, 4, 4, 4])
    assert answer_turn is not None and answer_turn.reuse == 4 and answer_turn.keep_in is not None
    serve(slots, [*system, 4, 4, 4, 4, 4])
    next_task = slots.plan([*system, *tools, 5, 5, 5])
    assert next_task is not None and next_task.reuse == 12  # the system prompt and the tools, not just the first


def test_with_every_sequence_full_the_least_recently_used_conversation_is_the_one_lost() -> None:
    slots = Slots(3, CHUNK, working=1)
    for tag in (1, 2, 3):
        serve(slots, conversation(tag))
    held = sorted(s.tokens[0] for s in slots.slots)
    assert held == [1, 2, 3]
    serve(slots, conversation(4))
    held = sorted(s.tokens[0] for s in slots.slots)
    assert held == [2, 3, 4]  # conversation 1, the oldest, made room


def test_a_shared_prefix_in_a_busy_sequence_is_copied_not_recomputed() -> None:
    slots = Slots(4, CHUNK, working=4)
    first = slots.plan(conversation(1, 16))
    assert first is not None
    busy = slots.take(first)
    busy.tokens = conversation(1, 16)
    busy.exact = 16
    plan = slots.plan([*conversation(1, 16)[:8], 3, 3, 3, 3, 3])
    assert plan is not None and plan.copy_from is busy and plan.reuse == 8 and plan.slot.sequence == 1


def test_without_a_prompt_cache_nothing_is_reused() -> None:
    slots = Slots(4, CHUNK, reuse=False)
    serve(slots, conversation(1))
    plan = slots.plan([*conversation(1), 2])
    assert plan is not None and plan.reuse == 0 and plan.copy_from is None and plan.keep_in is None


def test_batch_invariant_reuse_stops_at_the_prompt_s_whole_chunks() -> None:
    """Generated tokens and a prompt's last partial chunk were not computed as whole aligned chunks."""
    slots = Slots(4, CHUNK)
    slot = serve(slots, conversation(1, 10))
    slot.tokens += [8, 8, 8]  # the reply, as the scheduler appends it
    slots.release(slot, 10)
    plan = slots.plan([*conversation(1, 10), 8, 8, 8, 5])
    assert plan is not None and plan.reuse == 8


def test_in_throughput_mode_every_cell_is_reused_to_the_token_reply_included() -> None:
    slots = Slots(4, CHUNK, whole=True)
    slot = serve(slots, conversation(1, 10))
    slot.tokens += [8, 8, 8]
    slots.release(slot, 10)
    plan = slots.plan([*conversation(1, 10), 8, 8, 8, 5])
    assert plan is not None and plan.reuse == 13
