"""gunicorn's hooks (clara/gunicorn.py): what a new web worker does before its first request."""

from clara import gunicorn as hooks
from memory.conversations import meaning
from memory.conversations.urgency import clear_caches, heads


def test_a_new_worker_loads_the_turns_models_before_its_first_request():
    # As in a worker just forked: neither the sentence model nor the urgent examples loaded.
    meaning._repeat_embedders.clear()
    heads._heads.cache_clear()
    clear_caches()

    hooks.warm_models()

    assert meaning._repeat_embedders, "the repeat check's sentence model was not made"
    for embedder in meaning._repeat_embedders.values():
        assert getattr(embedder, "_session", "loaded") is not None, "its graph was not loaded"
    assert heads._heads.cache_info().currsize == 1, "the urgent-moment reader was not loaded"


def test_what_a_worker_loaded_is_left_out_of_the_collectors_full_passes():
    import gc

    loaded = [[n] for n in range(1_000)]  # long-lived objects, as a worker's loaded heap
    try:
        hooks.freeze_heap()
        # Frozen: in no generation, so no pass of the collector walks them.
        assert gc.get_freeze_count() >= len(loaded)
        walked = {id(obj) for generation in range(3) for obj in gc.get_objects(generation)}
        assert not any(id(obj) in walked for obj in loaded)
    finally:
        gc.unfreeze()
