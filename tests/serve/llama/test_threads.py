"""Threads made with a stack of their own start, and threads made after them get the platform's default."""

from __future__ import annotations

import threading

from serve.llama.threads import start_thread


def test_a_thread_gets_the_stack_asked_for_and_the_default_is_left_as_it_was() -> None:
    before = threading.stack_size()
    ran = threading.Event()
    thread = start_thread(ran.set, "sized", 64 * 1024 * 1024)
    assert ran.wait(10) and thread.daemon and threading.stack_size() == before


def test_threads_made_at_once_from_many_threads_all_start() -> None:
    count = threading.Semaphore(0)
    makers = [threading.Thread(target=lambda: start_thread(count.release, "t", 1 << 20)) for _ in range(8)]
    for maker in makers:
        maker.start()
    for maker in makers:
        maker.join(10)
    assert all(count.acquire(timeout=10) for _ in range(8))
    assert threading.stack_size() == 0
