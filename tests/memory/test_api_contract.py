import uuid, json

def test_probe(api, anonymous_api):
    sid = str(uuid.uuid4())
    base = f"/api/v1/sessions/{sid}"
    cases = [
        ("post", "/api/v1/sessions", None, '{"user_id": '),
        ("post", "/api/v1/sessions", None, '[1,2]'),
        ("post", "/api/v1/sessions", {"user_id": "nope"}, None),
        ("post", "/api/v1/sessions", {"display_name": 5}, None),
        ("post", base + "/exchanges", None, '{"user_message": '),
        ("post", base + "/exchanges", None, '[]'),
        ("post", base + "/exchanges", None, '"str"'),
        ("post", base + "/exchanges", None, 'null'),
        ("post", base + "/exchanges", None, ''),
        ("post", base + "/exchanges", {"user_message": "  ", "assistant_message": "x"}, None),
        ("post", base + "/exchanges", {"user_message": "x"*8001, "assistant_message": "x"}, None),
        ("post", base + "/exchanges", {"user_message": 5, "assistant_message": "x"}, None),
        ("post", base + "/exchanges", {"user_message": "hi", "assistant_message": "x", "emotion": {"emotion": "angry", "confidence": 1, "distress_score": 0, "trajectory": "stable"}}, None),
        ("post", base + "/exchanges", {"user_message": "hi", "assistant_message": "x", "narrative": {"id": "n", "mode": "zz", "category": "c"}}, None),
        ("post", base + "/exchanges", {"user_message": "hi", "assistant_message": "x", "escalation": "maybe"}, None),
        ("post", base + "/exchanges", {"user_message": "hi", "assistant_message": "x", "processing_time_ms": "abc"}, None),
        ("post", base + "/query", {"message": "hi"}, None),
        ("post", base + "/query", None, '{"message": '),
        ("post", "/api/v1/sessions/not-a-uuid/query", {"message": "hi"}, None),
        ("get", "/api/v1/sessions/not-a-uuid", None, None),
        ("get", base, None, None),
        ("get", base + "/messages", None, None),
        ("post", base + "/close", None, None),
    ]
    for method, path, body, raw in cases:
        if method == "post":
            r = api.post(path, body, raw=raw)
        else:
            r = api.get(path)
        print(method, path[-30:], (raw or json.dumps(body))[:60], "->", r.status_code, r.content[:300])
    r = anonymous_api.get(base)
    print("anon", r.status_code, r.content)
    r = api.get(base + "/messages", limit=0); print(r.status_code, r.content)
    r = api.get(base + "/messages", limit="x"); print(r.status_code, r.content)
    assert 0
