"""The batch-invariant promise checked end to end, from outside the server: one long greedy request gets the
same tokens and top-5 logprobs from a server that reads every prompt whole, after a conversation sharing its
first part (cut at a dozen points) has filled the cache, and while three other requests decode beside it.
Used for SmolLM2 in `make test` and for the Qwen coders in `make test-models`."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.conftest import Server

LONG_TEXT = (
    "\n".join(
        f"2026-09-07 10:{minute:02d}:31 {level} worker {minute % 9} {event} after {minute * 1000 + 250} ms"
        for minute, (level, event) in enumerate(
            [("INFO", "started"), ("WARN", "slowed down"), ("ERROR", "timed out"), ("INFO", "restarted")] * 2
        )
    )
    + "\n\ndef rotate(path, keep=5):\n    return sorted(glob(path + '.*'))[-keep:]\n"
)
SYSTEM = {"role": "system", "content": "You answer questions about log files."}
QUESTION = f"{LONG_TEXT}\nWhich worker timed out most often, and after how long?"
OPTIONS = {"max_tokens": 16, "logprobs": True, "top_logprobs": 5}
CUTS = 12


def numbers(reply: dict[str, Any]) -> list[Any]:
    """A reply's text and every token's logprob with its top 5: greedy text alone hides small differences."""
    choice = reply["choices"][0]
    tokens = [(t["token"], t["logprob"], [(c["token"], c["logprob"]) for c in t["top_logprobs"]])
              for t in choice["logprobs"]["content"]]  # fmt: skip
    return [choice["message"]["content"], choice["finish_reason"], tokens]


def ask(server: Server, model: str, content: str, **options: Any) -> dict[str, Any]:
    body = {"model": model, "messages": [SYSTEM, {"role": "user", "content": content}], **options}
    response = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=600)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def same_numbers_everywhere(model: str, *flags: str) -> None:
    """Start the two servers the check needs (with `flags`) and hold the request to the same numbers."""
    common = ["--model", model, *flags, "--quiet"]
    fresh_server = Server("serve.llama", *common, "--no-prompt-cache", timeout=600)
    primed = Server("serve.llama", *common, "--parallel", "1", "--cache-mb", "1", timeout=600)  # one sequence
    try:
        fresh = ask(fresh_server, model, QUESTION, **OPTIONS)
        usage = fresh["usage"]
        assert usage["prompt_tokens"] > 256 + 32 and usage["prompt_tokens_details"]["cached_tokens"] == 0
        granularity = httpx.get(f"{primed.url}/healthz").json()["prompt_cache"]["granularity"]
        reused = set()
        step = len(QUESTION) // (CUTS + 1)
        for cut in range(step, step * (CUTS + 1), step):
            ask(primed, model, QUESTION[:cut], max_tokens=1)
            again = ask(primed, model, QUESTION, **OPTIONS)
            assert numbers(again) == numbers(fresh), f"after a conversation sharing {cut} characters"
            cached = again["usage"]["prompt_tokens_details"]["cached_tokens"]
            assert cached % granularity == 0
            reused.add(cached)
        assert len(reused) >= CUTS - 2  # the cuts reached the cache at different points
        others = [f"Write a long story about {w}." for w in ("cats", "rain", "maps")]
        async with httpx.AsyncClient(timeout=600) as http:
            url = f"{fresh_server.base_url}/chat/completions"
            sent = [{"model": model, "messages": [SYSTEM, {"role": "user", "content": QUESTION}], **OPTIONS}]
            sent += [{"model": model, "messages": [{"role": "user", "content": o}], "max_tokens": 48} for o in others]
            replies = await asyncio.gather(*(http.post(url, json=body) for body in sent))
        assert all(r.status_code == 200 for r in replies)
        assert numbers(replies[0].json()) == numbers(fresh), "beside three other requests"
    finally:
        fresh_server.stop()
        primed.stop()
