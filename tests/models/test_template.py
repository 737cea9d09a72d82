"""A GGUF's chat template rendered as Hugging Face renders it: JSON without HTML escaping, the template's own
errors raised as TemplateError, and no way out of the sandbox."""

from __future__ import annotations

import pytest

from models.errors import TemplateError
from models.template import ChatTemplate

TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
    "{% if tools %}TOOLS {{ tools | tojson }}\n{% endif %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_messages_tools_and_the_generation_prompt_are_rendered() -> None:
    template = ChatTemplate(TEMPLATE, bos_token="<s>")
    tools = [{"type": "function", "function": {"name": "read_file", "description": 'a <b> & "c" é'}}]
    rendered = template.render([{"role": "user", "content": "hi"}], tools)
    assert rendered == (
        '<s><|user|>hi\nTOOLS [{"type": "function", "function": {"name": "read_file", "description": '
        '"a <b> & \\"c\\" é"}}]\n<|assistant|>'
    )
    assert template.render([{"role": "user", "content": "hi"}], add_generation_prompt=False) == "<s><|user|>hi\n"
    assert template.supports_tools and not ChatTemplate("{{ messages }}").supports_tools


def test_a_template_that_raises_or_does_not_parse_says_so() -> None:
    with pytest.raises(TemplateError, match="roles must alternate"):
        ChatTemplate("{{ raise_exception('roles must alternate') }}").render([])
    with pytest.raises(TemplateError, match="does not parse"):
        ChatTemplate("{% for m in messages %}")


def test_a_template_cannot_reach_out_of_its_sandbox() -> None:
    escape = "{{ messages.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(TemplateError, match="the chat template failed"):
        ChatTemplate(escape).render([{"role": "user", "content": "x"}])
    with pytest.raises(TemplateError):
        ChatTemplate("{% set _ = messages.append(1) %}").render([])  # the messages cannot be changed either
