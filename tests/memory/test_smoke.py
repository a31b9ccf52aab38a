import uuid


def test_bot_flow_end_to_end(api):
    sid = str(uuid.uuid4())
    uid = str(uuid.uuid4())
    r = api.post("/api/v1/sessions", {"session_id": sid, "user_id": uid, "display_name": "Nana"})
    assert r.status_code == 201, r.content
    r = api.post(f"/api/v1/sessions/{sid}/query", {"message": "Where am I?"})
    assert r.status_code == 200, r.content
    assert r.json()["is_repeat"] is False
    r = api.post(
        f"/api/v1/sessions/{sid}/exchanges",
        {"user_message": "Where am I?", "assistant_message": "You're safe at home, Nana."},
    )
    assert r.status_code == 201, r.content
    assert r.json()["user_message"]["sequence_number"] == 1
    r = api.post(f"/api/v1/sessions/{sid}/query", {"message": "What is this place?"})
    assert r.json()["is_repeat"] is True
    assert r.json()["conversation_window"][0]["content"] == "Where am I?"
    r = api.post(f"/api/v1/sessions/{sid}/close")
    assert r.status_code == 200
    assert r.json()["dominant_emotion"] == "confused"
