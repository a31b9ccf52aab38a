"""Finding a conversation in a real browser, at desktop and phone sizes: words, the alert filter,
then previous and next from the conversation found (issue 18, item 3)."""

import re

import pytest

from memory.models import Alert, ChatMessage, Session
from tests.e2e.test_dashboard_browser import DESKTOP, PHONE, alice, log_in, peggy  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _a_word_said(person) -> tuple[str, set]:
    """A long word from the person's newest conversation, and every conversation that says it."""
    newest = Session.objects.filter(person=person, message_count__gt=0).latest("created_at")
    said = [m.content for m in ChatMessage.objects.filter(session=newest, role="user")]
    word = max(re.findall(r"[A-Za-z]{5,}", " ".join(said)), key=len)
    saying = {
        m.session_id
        for m in ChatMessage.objects.filter(person=person)
        if word.casefold() in (m.content or "").casefold()
    }
    return word, saying


def _rows(page) -> list[str]:
    return page.eval_on_selector_all(
        "#sessions li.session-row a", "links => links.map(a => a.getAttribute('href'))"
    )


def _shows(page, ids: set) -> None:
    """Waits until the list holds exactly these conversations (the swap may still be coming)."""
    page.wait_for_function(
        """ids => {
          const shown = [...document.querySelectorAll('#sessions li.session-row a')]
            .map(a => a.getAttribute('href').replace(/\\/$/, '').split('/').pop()).sort();
          return JSON.stringify(shown) === JSON.stringify(ids);
        }""",
        arg=sorted(str(i) for i in ids),
    )


def _fits(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize(
    ("viewport", "shot"),
    [(DESKTOP, "conversations-find-desktop"), (PHONE, "conversations-find-phone")],
)
def test_find_a_conversation_by_its_words_then_step_through(
    browser,
    live_server,
    alice,  # noqa: F811
    peggy,  # noqa: F811
    shoot,
    viewport,
    shot,
):
    word, saying = _a_word_said(peggy)
    conversations = Session.objects.filter(person=peggy, message_count__gt=0)
    alerted = set(
        Alert.objects.filter(person=peggy, session__isnull=False).values_list(
            "session_id", flat=True
        )
    )
    assert 1 <= len(saying) < conversations.count() and alerted and alerted != saying

    page = log_in(browser, live_server, viewport=viewport)
    page.goto(f"{live_server.url}/people/{peggy.id}/conversations/")
    assert len(_rows(page)) == min(conversations.count(), 20)

    # Words: only the conversations that said them, each with the words in context.
    page.fill("#id_q", word.upper())
    page.click("#sessions button[type=submit]")
    _shows(page, saying)
    for hint in page.locator("#sessions li.session-row p.hint").all_inner_texts():
        assert word.casefold() in hint.casefold()
    page.wait_for_function(
        "() => document.getElementById('announce').textContent === 'Conversations found.'"
    )
    _fits(page, viewport["width"])
    shoot(page, shot, full_page=True)

    # The alert filter on its own: exactly the conversations that raised one.
    page.fill("#id_q", "")
    page.check("#sessions input[name=alert]")
    page.click("#sessions button[type=submit]")
    _shows(page, alerted)

    # Open the newest conversation found, then step back and forward.
    ordered = list(conversations.order_by("created_at").values_list("id", flat=True))
    newest_alerted = max(alerted, key=ordered.index)
    page.click(f"#sessions a[href$='/{newest_alerted}/']")
    page.wait_for_selector("#transcript")
    at = ordered.index(newest_alerted)
    assert page.locator("a[rel=prev]").count() == (1 if at > 0 else 0)
    assert page.locator("a[rel=next]").count() == (1 if at < len(ordered) - 1 else 0)
    if at > 0:
        page.click("a[rel=prev]")
        page.wait_for_url(f"**/conversations/{ordered[at - 1]}/")
        page.click("a[rel=next]")
        page.wait_for_url(f"**/conversations/{newest_alerted}/")
    else:
        page.click("a[rel=next]")
        page.wait_for_url(f"**/conversations/{ordered[1]}/")
    _fits(page, viewport["width"])
    if viewport is PHONE:
        shoot(page, "conversation-pager-phone")
    assert page.errors == []
    page.close()
